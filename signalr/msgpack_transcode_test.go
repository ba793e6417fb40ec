package signalr

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
)

// mpToJSON transcodes one whole MessagePack value to JSON.
func mpToJSON(b []byte) (string, error) {
	r := msgpackReader{buf: b}
	out, err := r.appendJSONValue(nil, 0)
	if err == nil && r.off != len(b) {
		return "", errors.New("bytes left after the value")
	}
	return string(out), err
}

// long is a 2 KB string.
var long = strings.Repeat("0123456789abcdef", 128)

// transcodeCases are JSON values, their MessagePack, and the JSON read
// back.
var transcodeCases = []struct {
	name    string
	json    string
	msgpack string
	back    string // the JSON read back, when not the input itself
}{
	{"object", `{"a":1,"b":[true,false,null]}`, "82 a161 01 a162 93 c3 c2 c0", ""},
	{"nested objects", `{"x":{"y":{"z":[]}}}`, "81 a178 81 a179 81 a17a 90", ""},
	{"whitespace is dropped", " {\n\t\"a\" : [ 1 , 2 ] }\r\n", "81 a161 92 01 02", `{"a":[1,2]}`},
	{"key order is kept", `{"b":1,"a":2}`, "82 a162 01 a161 02", ""},
	{"empty array", `[]`, "90", ""},
	{"empty object", `{}`, "80", ""},
	{"empty string", `""`, "a0", ""},
	{"null", `null`, "c0", ""},
	{"unicode string", `"héllo ☃ 😀"`, "af 68c3a96c6c6f20e29883 20f09f9880", ""},
	{"unicode escapes", `"\u00e9\u2603\ud83d\ude00"`, "a9 c3a9 e29883 f09f9880", `"é☃😀"`},
	{"lone surrogate", `"\ud800x"`, "a4 efbfbd 78", `"` + "\ufffd" + `x"`},
	// Written back with the short escapes encoding/json writes too.
	{"escapes", `"a\"b\\c\/d\b\f\n\r\t\u0001"`, "ad 61 22 62 5c 63 2f 64 08 0c 0a 0d 09 01", `"a\"b\\c/d\b\f\n\r\t\u0001"`},
	{"31-byte string (fixstr)", `"` + long[:31] + `"`, "bf" + hexOf(long[:31]), ""},
	{"32-byte string (str8)", `"` + long[:32] + `"`, "d9 20" + hexOf(long[:32]), ""},
	{"2 KB string (str16)", `"` + long + `"`, "da 0800" + hexOf(long), ""},
	{"invalid UTF-8 reads as U+FFFD, as in encoding/json", "\"a\xffb\"", "a5 61 efbfbd 62", `"a` + "\ufffd" + `b"`},
	{"U+FFFD widens fixstr to str8", "\"" + strings.Repeat("\xff", 11) + "\"", "d9 21" + strings.Repeat("efbfbd", 11), `"` + strings.Repeat("\ufffd", 11) + `"`},
	{"escape and invalid UTF-8", "\"\\n\xc3\"", "a4 0a efbfbd", `"\n` + "\ufffd" + `"`},
	{"escaped 300-byte string shrinks to str8", `"` + strings.Repeat(`\n`, 150) + `"`, "d9 96" + strings.Repeat("0a", 150), ""},
	{"zero", `0`, "00", ""},
	{"positive fixint", `127`, "7f", ""},
	{"uint8", `128`, "cc 80", ""},
	{"uint8 max", `255`, "cc ff", ""},
	{"uint16", `256`, "cd 0100", ""},
	{"uint32", `65536`, "ce 00010000", ""},
	{"uint32 max", `4294967295`, "ce ffffffff", ""},
	{"uint64", `4294967296`, "cf 0000000100000000", ""},
	{"int64 max", `9223372036854775807`, "cf 7fffffffffffffff", ""},
	{"uint64 max", `18446744073709551615`, "cf ffffffffffffffff", ""},
	{"negative fixint", `-1`, "ff", ""},
	{"negative fixint min", `-32`, "e0", ""},
	{"int8", `-33`, "d0 df", ""},
	{"int8 min", `-128`, "d0 80", ""},
	{"int16", `-129`, "d1 ff7f", ""},
	{"int32", `-32769`, "d2 ffff7fff", ""},
	{"int64", `-2147483649`, "d3 ffffffff7fffffff", ""},
	{"int64 min", `-9223372036854775808`, "d3 8000000000000000", ""},
	{"beyond uint64 is float64", `18446744073709551616`, "cb 43f0000000000000", `18446744073709552000`},
	{"beyond int64 is float64", `-9223372036854775809`, "cb c3e0000000000000", `-9223372036854776000`},
	{"huge integer", `123456789012345678901234567890`, "cb 45f8ee90ff6c373e", `1.2345678901234568e+29`},
	{"float", `1.5`, "cb 3ff8000000000000", ""},
	{"negative float", `-0.25`, "cb bfd0000000000000", ""},
	{"float 0.1", `0.1`, "cb 3fb999999999999a", ""},
	{"whole float", `2.0`, "cb 4000000000000000", `2`},
	{"exponent", `1E3`, "cb 408f400000000000", `1000`},
	{"big exponent", `1e300`, "cb 7e37e43c8800759c", `1e+300`},
	{"tiny", `1e-7`, "cb 3e7ad7f29abcaf48", `1e-07`},
	{"negative zero", `-0`, "cb 8000000000000000", ""},
	{"negative zero float", `-0.0`, "cb 8000000000000000", `-0`},
	{"array of 16 (array16)", `[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15]`, "dc 0010 000102030405060708090a0b0c0d0e0f", ""},
	{"object of 16 (map16)", `{"a":0,"b":1,"c":2,"d":3,"e":4,"f":5,"g":6,"h":7,"i":8,"j":9,"k":10,"l":11,"m":12,"n":13,"o":14,"p":15}`,
		"de 0010 a16100 a16201 a16302 a16403 a16504 a16605 a16706 a16807 a16908 a16a09 a16b0a a16c0b a16d0c a16e0d a16f0e a1700f", ""},
	{"nested wide containers", `[[` + strings.Repeat("1,", 16) + `1],{}]`, "92 dc 0011" + strings.Repeat("01", 17) + " 80", ""},
}

func TestTranscodeJSONToMessagePackAndBack(t *testing.T) {
	cases := transcodeCases
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := appendMsgpackFromJSON(nil, []byte(tc.json))
			if err != nil {
				t.Fatal(err)
			}
			if want := mpHex(t, tc.msgpack); !bytes.Equal(got, want) {
				t.Fatalf("MessagePack\n got % x\nwant % x", got, want)
			}
			back, err := mpToJSON(got)
			want := tc.back
			if want == "" {
				want = tc.json
			}
			if err != nil || back != want {
				t.Errorf("JSON back = %s, %v; want %s", back, err, want)
			}
			if !json.Valid([]byte(back)) {
				t.Errorf("JSON back %q is not valid JSON", back)
			}
		})
	}
}

func hexOf(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		b.WriteString(string("0123456789abcdef"[s[i]>>4]) + string("0123456789abcdef"[s[i]&0xf]))
	}
	return b.String()
}

func TestTranscodeLargeArrayHeader(t *testing.T) {
	n := 70000
	src := "[" + strings.Repeat("1,", n-1) + "1]"
	got, err := appendMsgpackFromJSON([]byte{0xee}, []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if want := mpHex(t, "ee dd 00011170"); !bytes.Equal(got[:6], want) || len(got) != 6+n || got[len(got)-1] != 1 {
		t.Fatalf("header % x, %d bytes", got[:6], len(got))
	}
	back, err := mpToJSON(got[1:])
	if err != nil || back != src {
		t.Errorf("JSON back differs (%d bytes, %v)", len(back), err)
	}
}

// Formats JSON never produces still have to read back as JSON.
func TestTranscodeMessagePackOnlyFormats(t *testing.T) {
	cases := []struct{ name, msgpack, json string }{
		{"float32", "ca 3fc00000", `1.5`},
		{"float32 shortest digits", "ca 3dcccccd", `0.1`},
		{"float32 huge", "ca 7f7fffff", `3.4028235e+38`},
		{"float64 max", "cb 7fefffffffffffff", `1.7976931348623157e+308`},
		{"float64 smallest", "cb 0000000000000001", `5e-324`},
		{"uint8 for a small number", "cc 05", `5`},
		{"int8 positive", "d0 05", `5`},
		{"int16 negative", "d1 8000", `-32768`},
		{"int32 negative", "d2 80000000", `-2147483648`},
		{"str8 short", "d9 01 61", `"a"`},
		{"str16 short", "da 0001 61", `"a"`},
		{"str32 short", "db 00000001 61", `"a"`},
		{"array16 short", "dc 0001 01", `[1]`},
		{"array32 short", "dd 00000001 01", `[1]`},
		{"map16 short", "de 0001 a161 01", `{"a":1}`},
		{"map32 short", "df 00000001 a161 01", `{"a":1}`},
		{"bin8", "c4 03 010203", `"AQID"`},
		{"bin16 empty", "c5 0000", `""`},
		{"bin32", "c6 00000004 fffefdfc", `"//79/A=="`},
		{"timestamp32 epoch", "d6 ff 00000000", `"1970-01-01T00:00:00Z"`},
		{"timestamp64 with nanoseconds", "d7 ff 7735940066322ec0", `"2024-05-01T12:00:00.5Z"`},
		{"timestamp96 before epoch", "c7 0c ff 00000001 ffffffffffffffff", `"1969-12-31T23:59:59.000000001Z"`},
		{"timestamp96 year 1", "c7 0c ff 00000000 fffffff1886e0900", `"0001-01-01T00:00:00Z"`},
		{"integer keys", "83 01 a161 ff a162 cf ffffffffffffffff a163", `{"1":"a","-1":"b","18446744073709551615":"c"}`},
		{"invalid UTF-8", "a4 61 ff c3 62", `"a` + "\ufffd\ufffd" + `b"`},
		{"control characters", "a3 00 1f 7f", `"\u0000\u001f` + "\x7f" + `"`},
		{"nested map in array", "92 81 a16b 90 c0", `[{"k":[]},null]`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := mpToJSON(mpHex(t, tc.msgpack))
			if err != nil || got != tc.json {
				t.Fatalf("got %s, %v; want %s", got, err, tc.json)
			}
			if !json.Valid([]byte(got)) {
				t.Fatalf("%q is not valid JSON", got)
			}
			// Read back to MessagePack and out again: the JSON is stable.
			again, err := appendMsgpackFromJSON(nil, []byte(got))
			if err != nil {
				t.Fatal(err)
			}
			if twice, err := mpToJSON(again); err != nil || twice != got {
				t.Errorf("second pass gave %s, %v", twice, err)
			}
		})
	}
}

func TestTranscodeRejectsMessagePackWithoutJSONForm(t *testing.T) {
	deep := strings.Repeat("91", maxValueDepth+1) + "c0"
	cases := map[string]string{
		"NaN":                         "cb 7ff8000000000000",
		"+Inf":                        "cb 7ff0000000000000",
		"-Inf float32":                "ca ff800000",
		"NaN float32":                 "ca 7fc00000",
		"reserved 0xc1":               "c1",
		"ext type 1":                  "d4 01 00",
		"ext8 type 5":                 "c7 02 05 0000",
		"timestamp of 5 bytes":        "c7 05 ff 0000000000",
		"timestamp nanoseconds 1e9":   "c7 0c ff 3b9aca00 0000000000000000",
		"timestamp64 nanoseconds max": "d7 ff ffffffffffffffff",
		"timestamp after year 9999":   "c7 0c ff 00000000 0000003afff44180",
		"timestamp before year 1":     "c7 0c ff 00000000 fffffff1886e08ff",
		"boolean map key":             "81 c3 01",
		"nil map key":                 "81 c0 01",
		"float map key":               "81 cb 3ff8000000000000 01",
		"array map key":               "81 90 01",
		"bin map key":                 "81 c4 01 61 01",
		"nested too deep":             deep,
		"truncated str":               "a5 6162",
		"truncated uint16":            "cd 01",
		"truncated float64":           "cb 3ff0",
		"truncated bin":               "c4 05 01",
		"truncated ext":               "c7 0c ff 00",
		"truncated array":             "92 01",
		"truncated map value":         "81 a161",
		"array32 count beyond data":   "dd ffffffff 01",
		"map32 count beyond data":     "df 7fffffff a161 01",
		"str32 length beyond data":    "db ffffffff 61",
		"empty input":                 "",
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			if got, err := mpToJSON(mpHex(t, in)); !errors.Is(err, ErrProtocol) {
				t.Errorf("got %q, %v; want ErrProtocol", got, err)
			}
		})
	}
	// One level less than the limit is fine.
	ok := strings.Repeat("91", maxValueDepth) + "c0"
	if _, err := mpToJSON(mpHex(t, ok)); err != nil {
		t.Errorf("depth %d: %v", maxValueDepth, err)
	}
}

func TestTranscodeRejectsInvalidJSON(t *testing.T) {
	cases := []string{
		``, ` `, `{`, `[`, `]`, `}`, `{"a":}`, `{"a"}`, `{"a" 1}`, `{1:2}`, `{"a":1,}`, `[1,]`, `[,1]`, `[1 2]`,
		`01`, `-`, `-a`, `1.`, `.5`, `1e`, `1e+`, `+1`, `0x10`, `1e400`, `-1e400`, `NaN`, `Infinity`,
		`tru`, `nul`, `falsey`, `'a'`, `"abc`, `"\x"`, `"\u12g4"`, `"\u12"`, `"a` + "\x01" + `"`, `"\`,
		`[1] x`, `1 2`, `{"a":1}}`,
		strings.Repeat("[", maxValueDepth+1) + strings.Repeat("]", maxValueDepth+1),
	}
	for _, in := range cases {
		dst := []byte{0xee}
		got, err := appendMsgpackFromJSON(dst, []byte(in))
		if !errors.Is(err, ErrProtocol) || !bytes.Equal(got, dst) {
			t.Errorf("%.40q: got % x, %v; want ErrProtocol and dst unchanged", in, got, err)
		}
	}
	ok := strings.Repeat("[", maxValueDepth) + strings.Repeat("]", maxValueDepth)
	if _, err := appendMsgpackFromJSON(nil, []byte(ok)); err != nil {
		t.Errorf("depth %d: %v", maxValueDepth, err)
	}
}

// Values a scenario may send must come back as equal JSON values, even
// where the text changes (spacing, escapes, number spelling).
func TestTranscodeKeepsJSONValues(t *testing.T) {
	inputs := []string{
		`{"payload.Run":"AbC","payload.MessageBlob":"` + strings.Repeat("xY+/", 512) + `","payload.Timestamp":1234567}`,
		`[1.25,-3,"\u2028\u2029",{"":{"":[]}},[[[]]],null,true,false,1e-10,12345678901234567]`,
		`{"emoji":"\ud83c\udf89","quote":"\"","tab":"\t","unicode":"日本語"}`,
	}
	for _, in := range inputs {
		mp, err := appendMsgpackFromJSON(nil, []byte(in))
		if err != nil {
			t.Fatal(err)
		}
		back, err := mpToJSON(mp)
		if err != nil {
			t.Fatal(err)
		}
		var want, got any
		if err := json.Unmarshal([]byte(in), &want); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(back), &got); err != nil {
			t.Fatalf("%q: %v", back, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("value changed:\n in %.80s\nout %.80s", in, back)
		}
	}
}

func TestAppendJSONFloatChoosesNotation(t *testing.T) {
	cases := map[float64]string{
		0: "0", 1: "1", -1.5: "-1.5", 1e20: "100000000000000000000", 1e21: "1e+21",
		1e-6: "0.000001", 1e-7: "1e-07", math.MaxInt64: "9223372036854776000",
	}
	for f, want := range cases {
		got, err := appendJSONFloat(nil, f, 64)
		if err != nil || string(got) != want {
			t.Errorf("%v: got %s, %v; want %s", f, got, err, want)
		}
	}
}
