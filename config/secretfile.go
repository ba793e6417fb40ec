package config

// ReadSecretFile reads a secret, such as an access key, from the file at
// path, with the checks a token file in the config gets: a regular file of
// at most 64 KiB, not empty once trimmed. The error names the file and the
// reason, never anything read from it.
func ReadSecretFile(path string) (string, error) {
	value, _, err := readSecretFile("", path)
	return value, err
}
