// Package wpshub is Azure Web PubSub's data plane in the reference hub:
// the client endpoint for json.webpubsub.azure.v1,
// json.reliable.webpubsub.azure.v1 and simple WebSocket clients (acks,
// sequence ids, roles and groups from client tokens), the REST API with
// its permissions and :generateToken, and the client of the event handler
// that user events go upstream to as CloudEvents.
//
// It shares the host of package core (lifecycle, connection quota,
// authorization, slow mode) with the SignalR side; its hub names, groups
// and users are its own.
package wpshub
