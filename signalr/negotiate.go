package signalr

// The negotiate exchange of the SignalR transport protocol (POST
// {hub}/negotiate?negotiateVersion=1), as the ASP.NET Core
// TransportProtocols document describes it. The client and the reference
// hub read and write these same shapes.

// AvailableTransport is one transport a server offers, with the transfer
// formats it carries.
type AvailableTransport struct {
	Transport       string           `json:"transport"`
	TransferFormats []TransferFormat `json:"transferFormats"`
}

// NegotiateResponse is a negotiate answer: a connection offer, a redirect
// (URL and AccessToken, as Azure SignalR Service's default mode sends), or
// an error. Fields a kind of answer does not use are left out on the wire.
type NegotiateResponse struct {
	NegotiateVersion     int                  `json:"negotiateVersion"`
	ConnectionID         string               `json:"connectionId,omitempty"`
	ConnectionToken      string               `json:"connectionToken,omitempty"`
	AvailableTransports  []AvailableTransport `json:"availableTransports,omitempty"`
	URL                  string               `json:"url,omitempty"`
	AccessToken          string               `json:"accessToken,omitempty"`
	Error                string               `json:"error,omitempty"`
	UseStatefulReconnect bool                 `json:"useStatefulReconnect,omitempty"`
	// ProtocolVersion is only sent by classic ASP.NET SignalR servers.
	ProtocolVersion string `json:"ProtocolVersion,omitempty"`
}

// NegotiateRedirect is the redirect answer alone: the server sends the
// client on to URL with AccessToken.
type NegotiateRedirect struct {
	URL         string `json:"url"`
	AccessToken string `json:"accessToken"`
}

// NegotiateError is the error answer alone.
type NegotiateError struct {
	Error string `json:"error"`
}
