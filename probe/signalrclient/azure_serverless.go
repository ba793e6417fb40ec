package signalrclient

import "github.com/hubprobe/hubprobe/azure"

// ServerlessOptions returns Options that connect to hub on Azure SignalR
// Service in serverless mode, as if a negotiate function had answered with
// {"url": ClientURL(hub), "accessToken": <client token>}: Dial then posts
// {base}/client/negotiate?hub=<hub>&negotiateVersion=1 with that token as
// the bearer, and presents it again on the WebSocket. userID, when not
// empty, becomes the token's nameid so SendToUser can reach the client.
// The token lasts DefaultClientTokenTTL; callers fill in the other fields
// (Protocol, Handlers, clientconn.Observer, ...) on the result.
func ServerlessOptions(cs azure.ConnectionString, hub, userID string) (Options, error) {
	token, err := azure.ClientToken(cs, hub, userID, azure.DefaultClientTokenTTL)
	if err != nil {
		return Options{}, err
	}
	return Options{URL: cs.ClientURL(hub), AccessToken: token}, nil
}
