// Package redact keeps secrets that travel in URLs out of error texts.
package redact

import (
	"errors"
	"fmt"
	"net/url"
)

// URLError drops the URL from a *url.Error: its query may carry secrets
// (access_token, the connection token).
func URLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("%s: %w", ue.Op, ue.Err)
	}
	return err
}
