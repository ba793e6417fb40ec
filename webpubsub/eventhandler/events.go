package eventhandler

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/hubprobe/hubprobe/internal/sleep"
	"github.com/hubprobe/hubprobe/webpubsub"
)

// signatureRefused is the body of a 401, as the ASP.NET Core handler
// words it.
const signatureRefused = "Signature validation failed."

// handshake answers the abuse-protection OPTIONS request as express does:
// a request without ce-awpsversion is not a Web PubSub one (404), one
// without WebHook-Request-Origin is bad (400), any other is granted with
// WebHook-Allowed-Origin: *.
func (h *Handler) handshake(w http.ResponseWriter, r *http.Request, hub string) {
	if r.Header.Get(webpubsub.HeaderAWPSVersion) == "" {
		h.refuse(w, http.StatusNotFound, "", "handshake without "+webpubsub.HeaderAWPSVersion, hub)
		return
	}
	allowed, err := webpubsub.AllowOrigin(r.Header, nil)
	if err != nil {
		h.refuse(w, http.StatusBadRequest, "", err.Error(), hub)
		return
	}
	w.Header().Set(webpubsub.HeaderAllowedOrigin, allowed)
	w.WriteHeader(http.StatusOK)
}

// event answers one CloudEvents request: a user event with its own data,
// a system event with an empty 200.
func (h *Handler) event(w http.ResponseWriter, r *http.Request, hub string, keys []string) {
	ev, err := webpubsub.ParseCloudEvent(r.Header)
	switch {
	case err != nil:
		// express passes every request it cannot read on (404); the
		// reason goes to the log instead.
		h.refuse(w, http.StatusNotFound, "", err.Error(), hub)
		return
	case !strings.EqualFold(ev.Hub, hub):
		h.refuse(w, http.StatusNotFound, "", "ce-hub names another hub", hub)
		return
	case !webpubsub.VerifySignature(ev.Signature, ev.ConnectionID, keys):
		h.refuse(w, http.StatusUnauthorized, signatureRefused, "ce-signature does not match the hub's access key", hub)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodySize))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		h.refuse(w, http.StatusRequestEntityTooLarge, "", "body over the 1 MiB limit", hub)
		return
	case err != nil:
		h.refuse(w, http.StatusBadRequest, "", "reading the body: "+err.Error(), hub)
		return
	}
	if !ev.IsUserEvent() {
		w.WriteHeader(http.StatusOK) // connect, connected, disconnected: nothing to say
		return
	}
	h.echo(w, r, hub, ev.DataType, body)
}

// echo answers a user event with its data, after the test delay. JSON
// must be one valid value, since the service hands it to the client as
// it is (express fails such a request with 500; this says 400).
func (h *Handler) echo(w http.ResponseWriter, r *http.Request, hub string, dataType webpubsub.DataType, body []byte) {
	if dataType == webpubsub.DataTypeJSON && !json.Valid(body) {
		h.refuse(w, http.StatusBadRequest, "", "user event data is not valid JSON", hub)
		return
	}
	if h.opts.Delay > 0 && sleep.For(r.Context(), h.opts.Delay) != nil {
		return // the service gave up; nobody reads an answer
	}
	w.Header().Set("Content-Type", responseType(dataType))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

// responseType is the Content-Type express gives a user event's answer.
func responseType(t webpubsub.DataType) string {
	switch t {
	case webpubsub.DataTypeJSON:
		return webpubsub.ContentTypeJSON + "; charset=utf-8"
	case webpubsub.DataTypeText:
		return webpubsub.ContentTypeText + "; charset=utf-8"
	}
	return webpubsub.ContentTypeBinary
}
