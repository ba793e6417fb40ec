package webpubsub

import "testing"

// The vector of the ASP.NET Core Web PubSub SDK's signature tests.
const (
	vectorKey          = "7aab239577fd4f24bc919802fb629f5f"
	vectorConnectionID = "0f9c97a2f0bf4706afe87a14e0797b11"
	vectorSignature    = "sha256=7767effcb3946f3e1de039df4b986ef02c110b1469d02c0a06f41b3b727ab561"
)

func TestSign(t *testing.T) {
	if got := Sign(vectorConnectionID, vectorKey); got != vectorSignature {
		t.Errorf("Sign = %s, want %s", got, vectorSignature)
	}
	// The second value is HMAC-SHA256("second", connection id), computed
	// with Python's hmac module.
	want := vectorSignature + ",sha256=38c537bef5460d89dc590bdee00fdbc29014bfa7f486717c0cbe2054696c99bc"
	if got := Sign(vectorConnectionID, vectorKey, "second"); got != want {
		t.Errorf("Sign with two keys = %s, want %s", got, want)
	}
	if got := Sign("c"); got != "" {
		t.Errorf("Sign without keys = %q, want empty", got)
	}
}

func TestVerifySignature(t *testing.T) {
	keys := []string{"ccc", vectorKey}
	for _, tc := range []struct {
		name, signature string
		keys            []string
		want            bool
	}{
		{"primary", vectorSignature, []string{vectorKey}, true},
		{"secondary key matches", vectorSignature, keys, true},
		{"second entry", "sha256=something," + vectorSignature, []string{vectorKey}, true},
		{"spaces after commas", "sha256=something, " + vectorSignature + " ", []string{vectorKey}, true},
		{"upper-case hex as .NET writes it", "sha256=7767EFFCB3946F3E1DE039DF4B986EF02C110B1469D02C0A06F41B3B727AB561", []string{vectorKey}, true},
		{"upper-case prefix", "SHA256=7767effcb3946f3e1de039df4b986ef02c110b1469d02c0a06f41b3b727ab561", []string{vectorKey}, true},
		{"wrong key", vectorSignature, []string{"ccc"}, false},
		{"no keys", vectorSignature, nil, false},
		{"empty", "", []string{vectorKey}, false},
		{"no prefix", vectorSignature[len("sha256="):], []string{vectorKey}, false},
		{"truncated", vectorSignature[:len(vectorSignature)-2], []string{vectorKey}, false},
		{"not hex", "sha256=zz67effcb3946f3e1de039df4b986ef02c110b1469d02c0a06f41b3b727ab561", []string{vectorKey}, false},
		{"other algorithm", "sha1=7767effcb3946f3e1de039df4b986ef02c110b1469d02c0a06f41b3b727ab561", []string{vectorKey}, false},
	} {
		if got := VerifySignature(tc.signature, vectorConnectionID, tc.keys); got != tc.want {
			t.Errorf("%s: VerifySignature = %v, want %v", tc.name, got, tc.want)
		}
	}
	if VerifySignature(vectorSignature, "another-connection", []string{vectorKey}) {
		t.Error("a signature of one connection verifies another")
	}
}
