package config

import "github.com/hubprobe/hubprobe/internal/yamldecode"

// Error is a configuration problem that the user must fix. It names the file,
// the line and the key path (e.g. "scenarios[0].connections") so the message
// points straight at the offending spot, and renders as "file:line: key: msg".
// main prints it and exits with code 2. Workload files of `hubprobe plan`
// fail with the same type.
type Error = yamldecode.Error

// keyPath and indexPath build key paths as the decoder records them.
func keyPath(parent, key string) string     { return yamldecode.KeyPath(parent, key) }
func indexPath(parent string, i int) string { return yamldecode.IndexPath(parent, i) }
