package aspnet

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// maxErrorLen bounds an error's text: errors quote at most a short prefix
// of what the peer sent.
const maxErrorLen = 200

// FuzzDecodeFrame checks, for any bytes, that DecodeFrame does not panic;
// that an error wraps ErrProtocol and stays short; that what it accepts is
// valid JSON; and that an accepted frame encodes to valid JSON which
// decodes to the same frame.
func FuzzDecodeFrame(f *testing.F) {
	addGoldenSeeds(f, "server-envelope-*", "server-result-*", "client-invocation-*")
	f.Fuzz(func(t *testing.T, in []byte) {
		var got Frame
		err := DecodeFrame(in, &got)
		if err != nil {
			checkDecodeError(t, err)
			return
		}
		if !json.Valid(in) {
			t.Fatalf("DecodeFrame accepted %q, which encoding/json rejects", in)
		}
		out := appendFrame(nil, &got)
		if !json.Valid(out) {
			t.Fatalf("%q encoded as invalid JSON %q", in, out)
		}
		var again Frame
		if err := DecodeFrame(out, &again); err != nil || !reflect.DeepEqual(got, again) {
			t.Fatalf("%q → %q decoded as %+v, %v; want %+v", in, out, again, err, got)
		}
	})
}

// FuzzDecodeInvocation is FuzzDecodeFrame for the invocations a hub reads.
func FuzzDecodeInvocation(f *testing.F) {
	addGoldenSeeds(f, "client-invocation-*")
	f.Fuzz(func(t *testing.T, in []byte) {
		var got Invocation
		if err := DecodeInvocation(in, &got); err != nil {
			checkDecodeError(t, err)
			return
		}
		out := AppendInvocation(nil, &got)
		var again Invocation
		if err := DecodeInvocation(out, &again); err != nil || !reflect.DeepEqual(got, again) {
			t.Fatalf("%q → %q decoded as %+v, %v; want %+v", in, out, again, err, got)
		}
		// Again, into space that holds the same names: as from fresh.
		if err := DecodeInvocation(in, &again); err != nil || !reflect.DeepEqual(got, again) {
			t.Fatalf("%q decoded after %q as %+v, %v; want %+v", in, out, again, err, got)
		}
	})
}

func addGoldenSeeds(f *testing.F, patterns ...string) {
	for _, pattern := range patterns {
		files, _ := filepath.Glob(filepath.Join("testdata", "frames", pattern))
		for _, file := range files {
			b, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
}

func checkDecodeError(t *testing.T, err error) {
	if !errors.Is(err, ErrProtocol) {
		t.Fatalf("error %v does not wrap ErrProtocol", err)
	}
	if len(err.Error()) > maxErrorLen {
		t.Fatalf("error is %d bytes long: %v", len(err.Error()), err)
	}
}
