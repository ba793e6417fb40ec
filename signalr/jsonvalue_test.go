package signalr

import "testing"

func TestJSONMember(t *testing.T) {
	cases := []struct {
		obj, name, want string
		ok              bool
	}{
		{`{"a":1,"b":"x"}`, "b", `"x"`, true},
		{" \t{ \"a\" : [1, {\"b\":2}] }\r\n", "a", `[1, {"b":2}]`, true},
		{`{"a":{"b":1}}`, "b", "", false},
		{`{"a":1,"a":null}`, "a", `null`, true},
		{`{"a":1,"a":2,"b":3}`, "a", `2`, true},
		{`{"\u0061":1}`, "a", `1`, true},
		{`{"A":1}`, "a", "", false},
		{`{"` + "\xff" + `":1}`, "\ufffd", `1`, true},
		{`{}`, "a", "", false},
		{`[{"a":1}]`, "a", "", false},
		{`"a"`, "a", "", false},
		{``, "a", "", false},
		{`{"a":1,}`, "a", "", false},
		{`{"a":1}}`, "a", "", false},
		{`{"a":1,"b":tru}`, "a", "", false},
		{`{"a":01}`, "a", "", false},
		{`{"a":1`, "a", "", false},
	}
	for _, tc := range cases {
		got, ok := JSONMember([]byte(tc.obj), tc.name)
		if string(got) != tc.want || ok != tc.ok {
			t.Errorf("JSONMember(%q, %q) = %q, %v; want %q, %v", tc.obj, tc.name, got, ok, tc.want, tc.ok)
		}
	}
}

func TestJSONMemberValueIsCapped(t *testing.T) {
	obj := []byte(`{"a":"x","b":"y"}`)
	v, _ := JSONMember(obj, "a")
	_ = append(v, '!')
	if string(obj) != `{"a":"x","b":"y"}` {
		t.Errorf("appending to the value changed the object: %s", obj)
	}
}

func TestUnquoteJSON(t *testing.T) {
	cases := map[string]string{
		`"abc"`:                    "abc",
		" \"g\\n1\" \r\n":          "g\n1",
		`"caf\u00e9 \ud83d\ude00"`: "café 😀",
		`"\ud800"`:                 "\ufffd",
		"\"bad\x80utf8\"":          "bad\ufffdutf8",
		`""`:                       "",
	}
	for in, want := range cases {
		if got, ok := UnquoteJSON([]byte(in)); !ok || got != want {
			t.Errorf("UnquoteJSON(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for _, bad := range []string{``, `7`, `null`, `"`, `"\x"`, `"a" "b"`, `"a"x`, "\"a\x01\"", `'a'`} {
		if got, ok := UnquoteJSON([]byte(bad)); ok {
			t.Errorf("UnquoteJSON(%q) = %q, accepted", bad, got)
		}
	}
}
