package signalrhub

import (
	"encoding/json"
	"strconv"
	"testing"
)

func TestJSONObjectField(t *testing.T) {
	cases := []struct {
		obj, key, want string
		ok             bool
	}{
		{`{"information.ConnectionId":"abc"}`, connectionIDField, "abc", true},
		{` { "a" : {"information.ConnectionId":"nested"} , "information.ConnectionId" : "top" } `, connectionIDField, "top", true},
		{`{"x":[1,"information.ConnectionId",{"y":"}"}],"information.GroupName":"g\"1"}`, groupNameField, `g"1`, true},
		{`{"information.GroupName":"caf\u00e9"}`, groupNameField, "café", true},
		{"{\"information.GroupName\":\"bad\x80utf8\"}", groupNameField, "bad\ufffdutf8", true},
		{`{"information\u002eGroupName":"escaped key"}`, groupNameField, "escaped key", true},
		{`{"information.ConnectionId":12345}`, connectionIDField, "12345", true},
		{`{"information.ConnectionId":null}`, connectionIDField, "", false},
		{`{"information.ConnectionId":{"id":"x"}}`, connectionIDField, "", false},
		{`{"information.connectionid":"wrong case"}`, connectionIDField, "", false},
		{`{}`, connectionIDField, "", false},
		{`["information.ConnectionId","x"]`, connectionIDField, "", false},
		{`{"information.ConnectionId"`, connectionIDField, "", false},
		{`{"a":"unterminated`, connectionIDField, "", false},
		{``, connectionIDField, "", false},
		// Read as encoding/json reads it: the last of duplicates, and
		// nothing from an object that is not valid JSON, wherever the flaw.
		{`{"information.ConnectionId":"first","information.ConnectionId":"last"}`, connectionIDField, "last", true},
		{`{"information.ConnectionId":"abc",`, connectionIDField, "", false},
		{`{"information.ConnectionId":"abc"} x`, connectionIDField, "", false},
		{`{"information.ConnectionId":12abc}`, connectionIDField, "", false},
		{`{"x":tru,"information.ConnectionId":"abc"}`, connectionIDField, "", false},
		{"{\"information.ConnectionId\":\"a\x01b\"}", connectionIDField, "", false},
	}
	for _, tc := range cases {
		got, ok := jsonObjectField([]byte(tc.obj), tc.key)
		if got != tc.want || ok != tc.ok {
			t.Errorf("jsonObjectField(%s, %s) = %q, %v; want %q, %v", tc.obj, tc.key, got, ok, tc.want, tc.ok)
		}
	}
}

func TestJSONArgumentReaders(t *testing.T) {
	if s, ok := jsonCodec.str([]byte(` "g\n1" `)); !ok || s != "g\n1" {
		t.Errorf("str = %q %v", s, ok)
	}
	for _, bad := range []string{`7`, `null`, `"`, `"\x"`, `"a" "b"`, "\"a\x01\""} {
		if _, ok := jsonCodec.str([]byte(bad)); ok {
			t.Errorf("str(%s) accepted", bad)
		}
	}
	if n, ok := jsonInteger([]byte(" 1500 ")); !ok || n != 1500 {
		t.Errorf("jsonInteger = %d %v", n, ok)
	}
	for _, bad := range []string{`1.5`, `"1"`, `1e3`, ``} {
		if _, ok := jsonInteger([]byte(bad)); ok {
			t.Errorf("jsonInteger(%s) accepted", bad)
		}
	}
	if got := string(jsonQuote(nil, "a\"b")); got != `"a\"b"` {
		t.Errorf("jsonQuote = %s", got)
	}
}

// FuzzJSONObjectField checks the field reader against encoding/json: it must
// never panic, must find nothing in what encoding/json refuses, and on any
// valid object must find what a full decode finds.
func FuzzJSONObjectField(f *testing.F) {
	for _, seed := range []string{
		`{"information.ConnectionId":"abc","x":[1,2,{"y":null}]}`,
		`{"information.ConnectionId":-1.5e3}`,
		`{"a":"\"","information.ConnectionId":"\\"}`,
		`{"information.ConnectionId":true}`,
		`{`, `"`, `{"a":}`, `{"a" "b"}`,
		`{"information.ConnectionId":"a","information.ConnectionId":"b"}`,
		`{"information.ConnectionId":"a",}`, `{"information.ConnectionId":12abc}`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, obj string) {
		got, ok := jsonObjectField([]byte(obj), connectionIDField)
		var decoded map[string]json.RawMessage
		if err := json.Unmarshal([]byte(obj), &decoded); err != nil {
			if ok {
				t.Fatalf("%s: got %q from what encoding/json refuses: %v", obj, got, err)
			}
			return
		}
		want, wantOK := expectedField(decoded[connectionIDField]) // the last of duplicate keys
		if ok != wantOK || got != want {
			t.Fatalf("%s: got %q %v, want %q %v", obj, got, ok, want, wantOK)
		}
	})
}

// expectedField is what the hub must read from the member's raw value: a
// string's value or a number's text; null, like a missing member, is no
// routing value.
func expectedField(raw json.RawMessage) (string, bool) {
	if raw == nil || string(raw) == "null" {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, true
	}
	if _, err := strconv.ParseFloat(string(raw), 64); err == nil {
		return string(raw), true
	}
	return "", false
}
