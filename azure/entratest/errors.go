package entratest

import (
	"crypto/rand"
	"fmt"
	"net/http"
	"time"
)

// failure is one of Entra's OAuth error answers.
type failure struct {
	status      int
	code        string // error: invalid_client, unauthorized_client, ...
	aadsts      int    // the AADSTS number, also in error_codes
	description string // without the "AADSTSnnn: " prefix and the trace lines
}

// errorResponse is the body of every Entra error: error_description
// starts with "AADSTSnnn: " and ends with the trace, correlation and time
// lines, which are also members of their own.
type errorResponse struct {
	Error         string `json:"error"`
	Description   string `json:"error_description"`
	Codes         []int  `json:"error_codes"`
	Timestamp     string `json:"timestamp"`
	TraceID       string `json:"trace_id"`
	CorrelationID string `json:"correlation_id"`
	URI           string `json:"error_uri"`
}

// entraTimeLayout is how Entra writes timestamps in errors.
const entraTimeLayout = "2006-01-02 15:04:05Z"

// writeError answers f. The correlation ID is the client-request-id MSAL
// sent, as Entra echoes it.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, f failure) {
	now := time.Now().UTC().Format(entraTimeLayout)
	trace := newGUID()
	correlation := r.Header.Get("client-request-id")
	if correlation == "" {
		correlation = newGUID()
	}
	writeJSON(w, f.status, errorResponse{
		Error: f.code,
		Description: fmt.Sprintf("AADSTS%d: %s\r\nTrace ID: %s\r\nCorrelation ID: %s\r\nTimestamp: %s",
			f.aadsts, f.description, trace, correlation, now),
		Codes:         []int{f.aadsts},
		Timestamp:     now,
		TraceID:       trace,
		CorrelationID: correlation,
		URI:           fmt.Sprintf("%serror?code=%d", s.AuthorityHost(), f.aadsts),
	})
}

// newGUID is a random (version 4) GUID in its usual text form.
func newGUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return guidText(b)
}

func guidText(b [16]byte) string {
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
