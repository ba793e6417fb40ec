package config

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/hubprobe/hubprobe/internal/yamldecode"
)

// Secret is a string that never shows itself: printing it with any fmt verb
// and marshalling it to YAML, JSON or text all give "<secret>" (or "" when
// empty). Use string(s) where the real value is needed, i.e. on the wire.
type Secret string

const secretMask = "<secret>"

func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return secretMask
}

// Format covers every fmt verb, %#v and %x included.
func (s Secret) Format(f fmt.State, verb rune) {
	out := s.String()
	if verb == 'q' {
		out = strconv.Quote(out)
	}
	_, _ = io.WriteString(f, out)
}

// MarshalYAML masks the value in printed configs.
func (s Secret) MarshalYAML() (any, error) { return s.String(), nil }

// MarshalJSON masks the value in JSON output and status pages.
func (s Secret) MarshalJSON() ([]byte, error) { return []byte(`"` + s.String() + `"`), nil }

// MarshalText masks the value for loggers and encoders that use it.
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// expandEnv replaces ${NAME} with the environment variable's value. Only this
// braced form is expanded, so tokens that contain a bare "$" stay intact. An
// unset variable is an error: a silently empty token fails far from its cause.
func expandEnv(s string) (string, error) {
	var missing string
	out := envRef.ReplaceAllStringFunc(s, func(ref string) string {
		name := envRef.FindStringSubmatch(ref)[1]
		v, ok := os.LookupEnv(name)
		if !ok && missing == "" {
			missing = name
		}
		return v
	})
	if missing != "" {
		return "", fmt.Errorf("environment variable %q is not set", missing)
	}
	return out, nil
}

// readSecretFile reads a token file named relative to dir. The error names
// the file as written and the reason, never anything read from it.
func readSecretFile(dir, name string) (value, path string, err error) {
	path = name
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	data, err := readSmallFile(path)
	if err != nil {
		return "", path, fmt.Errorf("cannot read %q: %s", name, yamldecode.PathErrorReason(err))
	}
	value = strings.TrimSpace(string(data))
	if value == "" {
		return "", path, fmt.Errorf("file %q is empty", name)
	}
	return value, path, nil
}

// maxSecretFileSize bounds what a token file may hold; tokens are a few KiB.
const maxSecretFileSize = 64 << 10

// readSmallFile refuses devices and pipes, which could block or never end,
// and files too large to be a token.
func readSmallFile(path string) ([]byte, error) {
	// Stat before Open: opening a named pipe blocks until a writer appears.
	if st, err := os.Stat(path); err != nil {
		return nil, err
	} else if !st.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxSecretFileSize+1))
	if err == nil && len(data) > maxSecretFileSize {
		err = fmt.Errorf("larger than %d bytes", maxSecretFileSize)
	}
	return data, err
}
