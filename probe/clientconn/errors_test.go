package clientconn

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

func TestIsTimeout(t *testing.T) {
	client, server := net.Pipe()
	defer client.Close()
	defer server.Close()
	_ = client.SetReadDeadline(time.Now().Add(-time.Second))
	_, readErr := client.Read(make([]byte, 1))
	for _, c := range []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("dial: %w", context.DeadlineExceeded), true},
		{os.ErrDeadlineExceeded, true},
		{readErr, true}, // a passed deadline on a real connection
		{context.Canceled, false},
		{io.EOF, false},
		{nil, false},
	} {
		if got := IsTimeout(c.err); got != c.want {
			t.Errorf("IsTimeout(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

func TestRefusalNamesStatusAndHintsOn404(t *testing.T) {
	for _, c := range []struct {
		status int
		want   string
	}{
		{http.StatusNotFound, "upgrade refused with HTTP 404 (is the URL right?)"},
		{http.StatusTooManyRequests, "upgrade refused with HTTP 429"},
	} {
		if got := Refusal("upgrade refused with HTTP", c.status, "is the URL right?").Error(); got != c.want {
			t.Errorf("Refusal(%d) = %q, want %q", c.status, got, c.want)
		}
	}
}

func TestErrorBodyIsBounded(t *testing.T) {
	long := strings.Repeat("b", 2*MaxErrorBody)
	if got := ErrorBody(&http.Response{Body: io.NopCloser(strings.NewReader(long))}); got != long[:MaxErrorBody] {
		t.Errorf("ErrorBody kept %d bytes, want %d", len(got), MaxErrorBody)
	}
	if got := ErrorBody(&http.Response{}); got != "" {
		t.Errorf("ErrorBody without a body = %q", got)
	}
}
