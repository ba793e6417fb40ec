package webpubsub

import (
	"errors"
	"net/http"
	"testing"
)

func TestAllowOrigin(t *testing.T) {
	for _, tc := range []struct {
		name    string
		origins []string
		allowed []string
		want    string
		err     error
	}{
		{"any origin by default", []string{"svc.webpubsub.azure.com"}, nil, "*", nil},
		{"allowed host", []string{"svc.webpubsub.azure.com"}, []string{"other.example", "SVC.webpubsub.azure.com"}, "svc.webpubsub.azure.com", nil},
		{"one of a list", []string{"a.example, svc.webpubsub.azure.com"}, []string{"svc.webpubsub.azure.com"}, "svc.webpubsub.azure.com", nil},
		{"repeated header", []string{"a.example", "b.example"}, []string{"b.example"}, "b.example", nil},
		{"not allowed", []string{"evil.example"}, []string{"svc.webpubsub.azure.com"}, "", ErrOriginNotAllowed},
		{"no origin", nil, nil, "", ErrNoRequestOrigin},
		{"blank origin", []string{" , "}, nil, "", ErrNoRequestOrigin},
	} {
		h := http.Header{}
		for _, o := range tc.origins {
			h.Add("WebHook-Request-Origin", o)
		}
		got, err := AllowOrigin(h, tc.allowed)
		if got != tc.want || !errors.Is(err, tc.err) || (tc.err == nil) != (err == nil) {
			t.Errorf("%s: AllowOrigin = %q, %v; want %q, %v", tc.name, got, err, tc.want, tc.err)
		}
	}
}

func TestOriginAllowed(t *testing.T) {
	for _, tc := range []struct {
		allowed []string
		want    bool
	}{
		{[]string{"*"}, true},
		{[]string{"svc.webpubsub.azure.com"}, true},
		{[]string{"other.example, SVC.WEBPUBSUB.AZURE.COM"}, true},
		{[]string{"other.example"}, false},
		{nil, false},
		{[]string{""}, false},
	} {
		h := http.Header{}
		for _, a := range tc.allowed {
			h.Add("WebHook-Allowed-Origin", a)
		}
		if got := OriginAllowed(h, "svc.webpubsub.azure.com"); got != tc.want {
			t.Errorf("OriginAllowed with %q = %v, want %v", tc.allowed, got, tc.want)
		}
	}
}

// A handshake request built by ValidationHeader is answered by AllowOrigin,
// and the answer satisfies OriginAllowed: both sides agree.
func TestHandshakeBothSides(t *testing.T) {
	req := ValidationHeader("svc.webpubsub.azure.com")
	if req.Get("ce-awpsversion") != "1.0" {
		t.Errorf("handshake request lacks ce-awpsversion: %v", req)
	}
	for _, allowed := range [][]string{nil, {"svc.webpubsub.azure.com"}} {
		origin, err := AllowOrigin(req, allowed)
		if err != nil {
			t.Fatal(err)
		}
		resp := http.Header{}
		resp.Set(HeaderAllowedOrigin, origin)
		if !OriginAllowed(resp, "svc.webpubsub.azure.com") {
			t.Errorf("answer %q with allowed %q is not accepted", origin, allowed)
		}
	}
}
