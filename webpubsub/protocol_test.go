package webpubsub

import "testing"

func TestDataTypeForContentType(t *testing.T) {
	for _, tc := range []struct {
		in, err string
		want    DataType
	}{
		{in: "application/json", want: DataTypeJSON},
		{in: "application/json; charset=utf-8", want: DataTypeJSON},
		{in: "Text/Plain; charset=UTF-8", want: DataTypeText},
		{in: "application/octet-stream", want: DataTypeBinary},
		{in: "application/xml", err: `webpubsub: unsupported content type "application/xml"`},
		{in: "", err: `webpubsub: content type "": mime: no media type`},
	} {
		got, err := DataTypeForContentType(tc.in)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%q: error %v, want %s", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q: got %v, %v; want %v", tc.in, got, err, tc.want)
		}
		if back, _ := DataTypeForContentType(got.ContentType()); back != got {
			t.Errorf("%v: ContentType %q maps back to %v", got, got.ContentType(), back)
		}
	}
}

func TestNames(t *testing.T) {
	if !IsReliable(ProtocolJSONReliable) || IsReliable(ProtocolJSON) {
		t.Error("IsReliable is wrong")
	}
	for k, want := range map[Kind]string{KindSendToGroup: "sendToGroup", KindGroupMessage: "message from group", Kind(200): "Kind(200)"} {
		if k.String() != want {
			t.Errorf("Kind %d String = %q, want %q", k, k.String(), want)
		}
	}
	for d, want := range map[DataType]string{DataTypeJSON: "json", DataTypeText: "text", DataTypeBinary: "binary", 9: "DataType(9)"} {
		if d.String() != want {
			t.Errorf("DataType %d String = %q, want %q", d, d.String(), want)
		}
	}
	ack := Frame{Kind: KindAck, Error: AckError{Name: ErrorDuplicate}}
	if !ack.AckOK() {
		t.Error("a Duplicate ack is not OK")
	}
	ack.Error.Name = ErrorForbidden
	if ack.AckOK() {
		t.Error("a Forbidden ack is OK")
	}
}
