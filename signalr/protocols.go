package signalr

import "fmt"

// ProtocolByName returns the hub protocol with the given handshake name:
// "json" or "messagepack".
func ProtocolByName(name string) (HubProtocol, error) {
	switch name {
	case JSONProtocol{}.Name():
		return JSONProtocol{}, nil
	case MessagePackProtocol{}.Name():
		return MessagePackProtocol{}, nil
	}
	return nil, fmt.Errorf("unknown hub protocol %q (valid: json, messagepack)", name)
}
