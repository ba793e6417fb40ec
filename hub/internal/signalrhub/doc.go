// Package signalrhub is the server side of the ASP.NET Core SignalR hub
// protocol in the reference hub: the connection dispatcher (negotiate, and
// the transports of package transport with the status codes of ASP.NET
// Core's dispatcher), the JSON and MessagePack hub protocols over them
// (handshake, records, keep-alive, client timeout, size limit), the
// benchmark hub's methods with streams and server pushes, fan-out encoded
// once per protocol, and the emulation of Azure SignalR Service: its
// client endpoints, the app server's default-mode redirect, its REST API
// (v1 and 2022-06-01) and :generateToken.
//
// It stands on package core and shares nothing else with Web PubSub's
// package wpshub. Classic ASP.NET SignalR (negotiate/connect/start, its
// own envelope, Forever Frame) is a different wire protocol: it is to get
// a package of its own beside this one, on the same core and transports.
package signalrhub
