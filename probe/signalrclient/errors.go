package signalrclient

import (
	"errors"
)

var (
	// ErrUploadNotStarted is returned when an Upload is used before the
	// invocation it belongs to was sent.
	ErrUploadNotStarted = errors.New("probe: upload is not attached to a sent invocation")
	// ErrUploadDone is returned when an Upload is used after Complete.
	ErrUploadDone = errors.New("probe: upload already completed")
)

// InvocationError is an error the hub returned in a Completion.
type InvocationError struct{ Message string }

func (e *InvocationError) Error() string { return "probe: invocation failed: " + e.Message }
