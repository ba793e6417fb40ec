package webpubsub

import (
	"fmt"
	"testing"
)

// A name or value whose first byte is an escape is unescaped like any
// other: the scanner marks it as escaped, and the decoder must resolve it
// whatever the escape's position.
func TestDecodeValuesThatStartWithAnEscape(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     Frame
	}{
		{"type and group", `{"\u0074ype":"\u006aoinGroup","group":"\"quoted\""}`,
			Frame{Kind: KindJoinGroup, Group: `"quoted"`}},
		{"text data", `{"type":"event","event":"\\e","dataType":"text","data":"\nline"}`,
			Frame{Kind: KindEvent, Event: `\e`, DataType: DataTypeText, Data: []byte("\nline")}},
	} {
		got, err := Decode([]byte(tc.in))
		if err != nil {
			t.Errorf("%s: Decode: %v", tc.name, err)
			continue
		}
		sameFrame(t, got, tc.want)
	}
}

// Every kind past the named ones prints as Kind(n), the first one too.
func TestKindStringPastTheNames(t *testing.T) {
	k := Kind(len(kindNames))
	if got, want := k.String(), fmt.Sprintf("Kind(%d)", len(kindNames)); got != want {
		t.Errorf("Kind %d String = %q, want %q", k, got, want)
	}
}
