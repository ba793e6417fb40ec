package aspnet

import "fmt"

// CheckStartResponse checks the answer to /start, as the client does: an
// object whose Response is "started".
func CheckStartResponse(data []byte) error { return checkResponseWord(data, "started") }

// CheckPingResponse checks the answer to /ping: Response "pong".
func CheckPingResponse(data []byte) error { return checkResponseWord(data, "pong") }

func checkResponseWord(data []byte, want string) error {
	got, err := responseWord(data)
	if err != nil {
		return err
	}
	if got != want {
		return fmt.Errorf("%w: expected Response %q, got %q", ErrProtocol, want, truncate(got))
	}
	return nil
}

// responseWord returns the string member Response of the object data.
func responseWord(data []byte) (word string, err error) {
	err = walkObject(data, func(key []byte, plain bool, value []byte) {
		if plain && string(key) == "Response" && value[0] == '"' {
			word = stringValue(value)
		}
	})
	return word, err
}
