package scenarios

import (
	"context"
	"encoding/json"

	"github.com/hubprobe/hubprobe/azure"
)

// restAPI is the service's REST API as the rest_* kinds send through it,
// whichever the service: each kind is written once for both. Every send
// the service accepted counts its bytes as sent.
type restAPI interface {
	sendToAll(ctx context.Context, payload json.RawMessage) error
	sendToUser(ctx context.Context, user string, payload json.RawMessage) error
	sendToGroup(ctx context.Context, group string, payload json.RawMessage) error
	sendToConnection(ctx context.Context, connectionID string, payload json.RawMessage) error
	addToGroup(ctx context.Context, group, connectionID string) error
}

// restAPI is the REST API of the run's target: Web PubSub's, or Azure
// SignalR Service's in serverless mode. The kind that asks sends through
// it, which the run's hub time accounts for.
func (r *Run) restAPI() (restAPI, error) {
	r.tracker.restSends.Store(true)
	if r.endpoint.WebPubSub != nil {
		rest, err := r.webPubSubREST()
		if err != nil {
			return nil, err
		}
		return webPubSubRESTAPI{rest: rest, run: r}, nil
	}
	rest, err := r.restClient()
	if err != nil {
		return nil, err
	}
	return signalRRESTAPI{rest: rest, run: r}, nil
}

// signalRRESTAPI sends each payload as the one argument of an invocation
// of restTarget, the body {"target":"RecordLatency","arguments":[payload]}.
type signalRRESTAPI struct {
	rest *azure.RESTClient
	run  *Run
}

func (a signalRRESTAPI) sendToAll(ctx context.Context, p json.RawMessage) error {
	return a.sent(p, a.rest.Broadcast(ctx, restTarget, []json.RawMessage{p}))
}

func (a signalRRESTAPI) sendToUser(ctx context.Context, user string, p json.RawMessage) error {
	return a.sent(p, a.rest.SendToUser(ctx, user, restTarget, []json.RawMessage{p}))
}

func (a signalRRESTAPI) sendToGroup(ctx context.Context, group string, p json.RawMessage) error {
	return a.sent(p, a.rest.SendToGroup(ctx, group, restTarget, []json.RawMessage{p}))
}

func (a signalRRESTAPI) sendToConnection(ctx context.Context, id string, p json.RawMessage) error {
	return a.sent(p, a.rest.SendToConnection(ctx, id, restTarget, []json.RawMessage{p}))
}

func (a signalRRESTAPI) addToGroup(ctx context.Context, group, id string) error {
	return a.rest.AddConnectionToGroup(ctx, group, id)
}

func (a signalRRESTAPI) sent(p json.RawMessage, err error) error {
	const overhead = len(`{"target":"` + restTarget + `","arguments":[]}`)
	if err == nil {
		restObserver(a.run.tracker).BytesSent(overhead + len(p))
	}
	return err
}

// webPubSubRESTAPI sends each payload as the whole body, of payloadType.
type webPubSubRESTAPI struct {
	rest *azure.WebPubSubRESTClient
	run  *Run
}

func (a webPubSubRESTAPI) sendToAll(ctx context.Context, p json.RawMessage) error {
	return a.sent(p, a.rest.SendToAll(ctx, payloadType, p))
}

func (a webPubSubRESTAPI) sendToUser(ctx context.Context, user string, p json.RawMessage) error {
	return a.sent(p, a.rest.SendToUser(ctx, user, payloadType, p))
}

func (a webPubSubRESTAPI) sendToGroup(ctx context.Context, group string, p json.RawMessage) error {
	return a.sent(p, a.rest.SendToGroup(ctx, group, payloadType, p))
}

func (a webPubSubRESTAPI) sendToConnection(ctx context.Context, id string, p json.RawMessage) error {
	return a.sent(p, a.rest.SendToConnection(ctx, id, payloadType, p))
}

func (a webPubSubRESTAPI) addToGroup(ctx context.Context, group, id string) error {
	return a.rest.AddConnectionToGroup(ctx, group, id)
}

func (a webPubSubRESTAPI) sent(p json.RawMessage, err error) error {
	if err == nil {
		restObserver(a.run.tracker).BytesSent(len(p))
	}
	return err
}
