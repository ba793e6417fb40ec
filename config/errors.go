package config

import (
	"fmt"
	"strconv"
	"strings"
)

// Error is a configuration problem that the user must fix. It names the file,
// the line and the key path (e.g. "scenarios[0].connections") so the message
// points straight at the offending spot. main prints it and exits with code 2.
type Error struct {
	File string // the config file as given, empty when parsing bytes without a name
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

// errorAt builds an *Error; it exists so call sites stay on one line.
func errorAt(file string, line int, key, format string, args ...any) *Error {
	return &Error{File: file, Line: line, Key: key, Msg: fmt.Sprintf(format, args...)}
}

// keyPath joins a parent path and a child key: "scenarios[0]" + "kind".
func keyPath(parent, key string) string {
	if parent == "" {
		return key
	}
	return parent + "." + key
}

// indexPath addresses a list item: "scenarios" + 2 gives "scenarios[2]".
func indexPath(parent string, i int) string {
	return parent + "[" + strconv.Itoa(i) + "]"
}
