package yamldecode

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
)

// Error is a problem in a YAML file that the user must fix. It names the
// file, the line and the key path (e.g. "scenarios[0].connections") so the
// message points straight at the offending spot.
type Error struct {
	File string // the file as given, empty when decoding bytes without a name
	Line int    // 1-based; 0 when the problem has no single line (an unreadable file)
	Key  string // key path such as "targets[1].url"; empty for the document itself
	Msg  string // short and lowercase; quotes the offending value, never a secret
}

// Error renders "file:line: key: msg", leaving out the parts that are unknown.
func (e *Error) Error() string {
	var b strings.Builder
	switch {
	case e.File != "" && e.Line > 0:
		b.WriteString(e.File + ":" + strconv.Itoa(e.Line) + ": ")
	case e.File != "":
		b.WriteString(e.File + ": ")
	case e.Line > 0:
		b.WriteString("line " + strconv.Itoa(e.Line) + ": ")
	}
	if e.Key != "" {
		b.WriteString(e.Key + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

func errorAt(file string, line int, key, format string, args ...any) *Error {
	return &Error{File: file, Line: line, Key: key, Msg: fmt.Sprintf(format, args...)}
}

// KeyPath joins a parent path and a child key: "scenarios[0]" + "kind".
func KeyPath(parent, key string) string {
	if parent == "" {
		return key
	}
	return parent + "." + key
}

// IndexPath addresses a list item: "scenarios" + 2 gives "scenarios[2]".
func IndexPath(parent string, i int) string {
	return parent + "[" + strconv.Itoa(i) + "]"
}

// parentPath drops the last step of a key path: "a.b[2]" gives "a.b".
func parentPath(key string) string {
	return key[:max(strings.LastIndexAny(key, ".["), 0)]
}

// ReadFile reads the file at path; failing, it returns an *Error naming the
// file and the reason.
func ReadFile(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &Error{File: path, Msg: "cannot read file: " + PathErrorReason(err)}
	}
	return data, nil
}

// PathErrorReason drops the path that *fs.PathError repeats ("open x: ..."),
// for messages that name the file themselves.
func PathErrorReason(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
