package main

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/coreos/go-systemd/v22/activation"
	"github.com/mdlayher/vsock"
	"github.com/prometheus/exporter-toolkit/web"
)

// listenWeb claims the web listeners the flags ask for: every
// --web.listen-address (tcp, or vsock://:PORT), or the listeners systemd
// hands over with --web.systemd-socket. serve calls it before anything
// else starts, so that no embedded hub or event handler, each on a random
// port, can take an address the user asked for, and an address already
// taken fails the command at once. On an error no listener is left open.
func listenWeb(flags *web.FlagConfig) ([]net.Listener, error) {
	if flags.WebSystemdSocket != nil && *flags.WebSystemdSocket {
		listeners, err := activation.Listeners()
		if err == nil && len(listeners) == 0 {
			err = errors.New("no socket activation file descriptors found")
		}
		return listeners, err
	}
	if flags.WebListenAddresses == nil || len(*flags.WebListenAddresses) == 0 {
		return nil, errors.New("no --web.listen-address")
	}
	var listeners []net.Listener
	for _, address := range *flags.WebListenAddresses {
		l, err := listenAddress(address)
		if err != nil {
			closeListeners(listeners)
			return nil, fmt.Errorf("--web.listen-address %s: %w", address, err)
		}
		listeners = append(listeners, l)
	}
	return listeners, nil
}

// listenAddress listens on one --web.listen-address.
func listenAddress(address string) (net.Listener, error) {
	if !strings.HasPrefix(address, "vsock://") {
		return net.Listen("tcp", address)
	}
	u, err := url.Parse(address)
	if err != nil {
		return nil, err
	}
	port, err := strconv.ParseUint(u.Port(), 10, 32)
	if err != nil {
		return nil, fmt.Errorf("vsock port %q: want a number", u.Port())
	}
	return vsock.Listen(uint32(port), nil)
}

func closeListeners(listeners []net.Listener) {
	for _, l := range listeners {
		_ = l.Close()
	}
}
