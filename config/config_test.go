package config

import (
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/hubprobe/hubprobe/slo"
)

// testKinds stands in for the scenario registry, which config must not import.
var testKinds = Kinds{
	"echo": all, "held": all, "broadcast": classicOrCore, "send_to_group": all, "send_to_client": classicOrCore,
	"streaming_echo": signalROnly, "server_push": signalROnly, "rest_broadcast": both,
	"rest_send_to_user": both, "rest_send_to_group": both, "rest_send_to_connection": {ServiceWebPubSub},
}

var (
	both          = []string{ServiceSignalR, ServiceWebPubSub}
	all           = []string{ServiceSignalR, ServiceWebPubSub, ServiceAspNetSignalR}
	classicOrCore = []string{ServiceSignalR, ServiceAspNetSignalR}
	signalROnly   = []string{ServiceSignalR}
)

// invalidConfigs pins the error of every testdata/invalid-<name>.yml: the
// text after the file name.
var invalidConfigs = map[string]string{
	"webpubsub-hub-name":              ":5: targets[0].hub: invalid hub name \"1st-hub\": use a letter, then letters, digits or any of _`,.[]",
	"unknown-key":                     `:10: scenarios[0]: unknown key "conections"`,
	"unknown-top-key":                 `:1: unknown key "scrape_interval"`,
	"unknown-target-key":              `:4: targets[0]: unknown key "tls"`,
	"connections-zero":                `:10: scenarios[0].connections: must be between 1 and 100000, got 0`,
	"connections-too-many":            `:10: scenarios[0].connections: must be between 1 and 100000, got 100001`,
	"message-size":                    `:10: scenarios[0].message_size: must be between 0 and 1048576, got 1048577`,
	"send-interval":                   `:10: scenarios[0].send_interval: must be greater than 0, got 0s`,
	"senders":                         `:11: scenarios[0].senders: must be between 0 and connections (5), got 6`,
	"group-size-zero":                 `:10: scenarios[0].group_size: must be between 1 and connections (10), got 0`,
	"group-size-too-big":              `:11: scenarios[0].group_size: must be between 1 and connections (10), got 20`,
	"connect-concurrency":             `:10: scenarios[0].connect_concurrency: must be between 1 and 100000, got 0`,
	"connect-timeout":                 `:10: scenarios[0].connect_timeout: must be greater than 0, got -1s`,
	"loss-timeout":                    `:10: scenarios[0].loss_timeout: must be greater than 0, got 0s`,
	"stream-item-delay":               `:10: scenarios[0].stream_item_delay: must not be negative, got -5ms`,
	"duration-zero":                   `:9: scenarios[0].duration: must be greater than 0, got 0s`,
	"duplicate-scenario":              `:10: scenarios[1].name: duplicate scenario name "echo" (first defined at line 5)`,
	"duplicate-target":                `:4: targets[1].name: duplicate target name "local" (first defined at line 2)`,
	"unknown-target":                  `:6: scenarios[0].target: unknown target "remote"`,
	"target-ambiguous":                `:7: scenarios[0].target: must not be empty when there is more than one target`,
	"unknown-kind":                    `:7: scenarios[0].kind: unknown kind "ping" (valid: broadcast, echo, held, rest_broadcast, rest_send_to_connection, rest_send_to_group, rest_send_to_user, send_to_client, send_to_group, server_push, streaming_echo)`,
	"empty-kind":                      `:5: scenarios[0].kind: must not be empty (valid: broadcast, echo, held, rest_broadcast, rest_send_to_connection, rest_send_to_group, rest_send_to_user, send_to_client, send_to_group, server_push, streaming_echo)`,
	"schedule":                        `:8: scenarios[0].schedule: invalid schedule "every 30s": expected exactly 5 fields, found 2: [every 30s]`,
	"schedule-cron-range":             `:8: scenarios[0].schedule: invalid schedule "61 * * * *": end of range (61) above maximum (59): 61`,
	"schedule-subsecond":              `:8: scenarios[0].schedule: invalid schedule "@every 1500ms": interval must be a whole number of seconds, at least 1s`,
	"timeout-not-above-duration":      `:10: scenarios[0].timeout: must be greater than duration 10s, got 10s`,
	"timeout-above-interval":          `:10: scenarios[0].timeout: must not exceed the schedule interval 30s, got 31s`,
	"duration-not-below-interval":     `:9: scenarios[0].duration: must be shorter than the schedule interval 30s, got 30s`,
	"url-scheme":                      `:3: targets[0].url: scheme must be http, https, ws or wss, got "ftp"`,
	"url-no-host":                     `:3: targets[0].url: url has no host`,
	"url-parse":                       `:3: targets[0].url: invalid url: invalid port ":port" after host`,
	"url-and-embedded":                `:2: targets[0]: url and embedded are mutually exclusive`,
	"no-endpoint":                     `:2: targets[0]: one of url, embedded: true or connection_string is required`,
	"embedded-hub-without-embedded":   `:4: targets[0].embedded_hub: only allowed with embedded: true`,
	"embedded-hub-max-message-size":   `:5: targets[0].embedded_hub.max_message_size: must be at least 1, got 0`,
	"message-size-over-hub-limit":     `:7: scenarios[0].message_size: must not exceed max_message_size 1024 of embedded target "local", got 2048`,
	"secret-both":                     `:2: targets[0]: access_token and access_token_file are mutually exclusive`,
	"secret-file-missing":             `:4: targets[0].access_token_file: cannot read "does-not-exist.txt": no such file or directory`,
	"secret-file-empty":               `:4: targets[0].access_token_file: file "empty-token.txt" is empty`,
	"secret-env-unset":                `:4: targets[0].access_token: environment variable "HUBPROBE_TEST_UNSET_TOKEN" is not set`,
	"empty-target-name":               `:2: targets[0].name: must not be empty`,
	"empty-scenario-name":             `:5: scenarios[0].name: must not be empty`,
	"target-name-chars":               `:2: targets[0].name: invalid name "my hub": use only letters, digits, "_", "." and "-"`,
	"scenario-name-chars":             `:5: scenarios[0].name: invalid name "echo{1}": use only letters, digits, "_", "." and "-"`,
	"transport":                       `:10: scenarios[0].transport: unknown transport "webtransport" (valid: longpolling, sse, websockets)`,
	"protocol":                        `:10: scenarios[0].protocol: unknown protocol "protobuf" (valid: json, messagepack)`,
	"messagepack-sse":                 `:9: scenarios[0].protocol: messagepack needs a binary transport; sse carries text only`,
	"fallback-transport":              `:9: scenarios[0].fallback_transports[1]: unknown transport "carrier-pigeon" (valid: longpolling, sse, websockets)`,
	"bad-duration":                    `:9: scenarios[0].duration: expected a duration such as "10s", got "10"`,
	"bad-integer":                     `:10: scenarios[0].connections: expected an integer, got "ten"`,
	"float-integer":                   `:10: scenarios[0].message_size: expected an integer, got "1.5"`,
	"bad-boolean":                     `:4: targets[0].embedded: expected true or false, got "yes"`,
	"not-a-list":                      `:1: targets: expected a list, got "local"`,
	"not-a-mapping":                   `:2: targets[0]: expected a mapping, got "local"`,
	"headers-not-strings":             `:6: targets[0].headers.X-Probe: expected a string, got a list`,
	"header-name":                     `:5: targets[0].headers: invalid header name "X Probe"`,
	"header-authorization":            `:6: targets[0].headers.authorization: conflicts with access_token`,
	"duplicate-key":                   `:10: scenarios[0]: duplicate key "duration" (first at line 9)`,
	"syntax":                          `:3: did not find expected ',' or ']'`,
	"two-documents":                   `:10: only one YAML document is allowed`,
	"no-targets":                      `: targets: at least one target is required`,
	"no-scenarios":                    `: scenarios: at least one scenario is required`,
	"empty":                           `: targets: at least one target is required`,
	"merge-scalar":                    `:5: scenarios[0]: "<<" expects a mapping or a list of mappings`,
	"profile-service":                 `:8: scenarios[0].profile.service: unknown service "signalr-premium" (valid: signalr, webpubsub)`,
	"profile-table":                   `:9: scenarios[0].profile.scenario: unknown table "send_to_everyone" (valid: broadcast, echo, rest_broadcast, rest_send_to_user, send_to_big_group, send_to_connection, send_to_small_group)`,
	"profile-units":                   `:10: scenarios[0].profile.units: the signalr send_to_connection table has no column for 10 units`,
	"profile-scale":                   `:11: scenarios[0].profile.scale: must be greater than 0 and at most 1, got 2`,
	"profile-scale-string":            `:11: scenarios[0].profile.scale: expected a number, got "1%"`,
	"profile-scale-nan":               `:11: scenarios[0].profile.scale: expected a finite number, got ".nan"`,
	"profile-too-many":                `:11: scenarios[0].profile.scale: gives 500000 connections, more than 100000; lower the scale or write connections`,
	"profile-target-service":          `:8: scenarios[0].profile.service: must be signalr, the service of target "local", got "webpubsub"`,
	"profile-unknown-key":             `:10: scenarios[0].profile: unknown key "unit"`,
	"profile-kind-mismatch":           `:12: scenarios[0].kind: "echo" does not run the broadcast table of the profile; leave kind out or write "broadcast"`,
	"profile-over-senders":            `:13: scenarios[0].senders: must be between 0 and connections (50), got 60`,
	"tier-service":                    `:5: targets[0].tier.service: unknown service "signalR" (valid: signalr, webpubsub)`,
	"tier-units":                      `:7: targets[0].tier.units: webpubsub has no published limits for 3 units (units: 1 2 10 50 100 200 500 1000)`,
	"tier-target-service":             `:5: targets[0].tier.service: must be signalr, the target's service, got "webpubsub"`,
	"service":                         `:3: targets[0].service: unknown service "pubsub" (valid: aspnet_signalr, signalr, webpubsub)`,
	"webpubsub-url":                   `:4: targets[0].url: not allowed with service: webpubsub; give connection_string, or embedded: true`,
	"webpubsub-no-endpoint":           `:2: targets[0]: one of embedded: true or connection_string is required with service: webpubsub`,
	"webpubsub-no-hub":                `:2: targets[0]: hub is required with connection_string`,
	"webpubsub-mode":                  `:6: targets[0].mode: not allowed with service: webpubsub, which has no modes`,
	"webpubsub-authorization-header":  `:6: targets[0].headers.authorization: not allowed with service: webpubsub (hubprobe mints the client tokens)`,
	"signalr-kind-webpubsub-target":   `:8: scenarios[0].kind: "broadcast" does not run on target "wps" (service: webpubsub); its kinds: echo, held, rest_broadcast, rest_send_to_connection, rest_send_to_group, rest_send_to_user, send_to_group`,
	"webpubsub-kind-signalr-target":   `:8: scenarios[0].kind: "rest_send_to_connection" does not run on target "azure" (service: signalr); its kinds: broadcast, echo, held, rest_broadcast, rest_send_to_group, rest_send_to_user, send_to_client, send_to_group, server_push, streaming_echo`,
	"webpubsub-protocol":              `:8: scenarios[0].protocol: unknown subprotocol "messagepack" (valid: json.reliable.webpubsub.azure.v1, json.webpubsub.azure.v1)`,
	"subprotocol-signalr-target":      `:7: scenarios[0].protocol: unknown protocol "json.webpubsub.azure.v1" (valid: json, messagepack)`,
	"webpubsub-transport":             `:8: scenarios[0].transport: unknown transport "sse" (valid: websockets)`,
	"webpubsub-fallback-transports":   `:8: scenarios[0].fallback_transports: not allowed with service: webpubsub, which clients reach over websockets only`,
	"tier-unknown-key":                `:6: targets[0].tier: unknown key "unit_count"`,
	"tier-not-a-mapping":              `:4: targets[0].tier: expected a mapping, got "standard"`,
	"mode":                            `:9: scenarios[0].mode: unknown mode "capacity" (valid: capacity_search, run)`,
	"capacity-without-mode":           `:9: scenarios[0].capacity_search: only allowed with mode: capacity_search`,
	"held-without-kind":               `:7: scenarios[0].held: only allowed with kind: held`,
	"held-report-interval":            `:8: scenarios[0].held.report_interval: must be between 10s and 1h0m0s, got 5s`,
	"held-within-loss-timeout":        `:9: scenarios[0].held.report_interval: 30s must be longer than loss_timeout (30s)`,
	"held-send-interval":              `:7: scenarios[0].send_interval: 2m0s must not be longer than held.report_interval (1m0s)`,
	"held-capacity-search":            `:7: scenarios[0].mode: a held scenario runs as long as hubprobe does; mode must be run`,
	"drop-without-every":              `:5: targets[0].embedded_hub.drop: needs drop_every`,
	"drop-how":                        `:6: targets[0].embedded_hub.drop: unknown drop "explode" (valid: abort, close_error, close_reconnect, disconnect, restart)`,
	"capacity-base-sending":           `:11: scenarios[0].capacity_search.base_sending: must be between 1 and connections (20), got 21`,
	"capacity-step":                   `:11: scenarios[0].capacity_search.step: must be between 1 and connections (20), got 0`,
	"capacity-step-duration":          `:11: scenarios[0].capacity_search.step_duration: must be greater than 0, got 0s`,
	"capacity-max-steps":              `:11: scenarios[0].capacity_search.max_steps: must be between 0 and 100000, got -1`,
	"capacity-too-long":               `:10: scenarios[0].capacity_search: the capacity search's longest ramp (1m0s) must be shorter than the schedule interval 1m0s`,
	"connection-string-and-url":       `:2: targets[0]: connection_string and url are mutually exclusive`,
	"connection-string-and-embedded":  `:2: targets[0]: connection_string and embedded are mutually exclusive`,
	"connection-string-parse":         `:3: targets[0].connection_string: AccessKey is missing`,
	"connection-string-file-parse":    `:4: targets[0].connection_string_file: Endpoint is missing`,
	"connection-string-both":          `:2: targets[0]: connection_string and connection_string_file are mutually exclusive`,
	"connection-string-env-unset":     `:4: targets[0].connection_string: environment variable "HUBPROBE_TEST_UNSET_CONNECTION_STRING" is not set`,
	"connection-string-no-hub":        `:2: targets[0]: hub is required with connection_string`,
	"connection-string-default-mode":  `:5: targets[0].mode: a connection_string target is reached in serverless mode; for default mode give the app server's url`,
	"hub-name":                        `:4: targets[0].hub: invalid hub name "my-hub": use a letter, then letters, digits or "_"`,
	"rest-api-version":                `:5: targets[0].rest_api_version: unknown REST API version "2024-01-01" (valid: 2022-06-01, v1)`,
	"serverless-access-token":         `:5: targets[0].access_token: not allowed with mode: serverless (hubprobe mints the client tokens and negotiates)`,
	"serverless-authorization-header": `:6: targets[0].headers.Authorization: not allowed with mode: serverless (hubprobe mints the client tokens)`,
	"target-mode":                     `:4: targets[0].mode: unknown mode "direct" (valid: default, serverless)`,
	"serverless-url":                  `:4: targets[0].mode: serverless needs connection_string, or embedded: true with embedded_hub.access_key`,
	"serverless-embedded-no-key":      `:4: targets[0].mode: serverless needs embedded_hub.access_key on an embedded target`,
	"hub-without-serverless":          `:4: targets[0].hub: only allowed with mode: serverless`,
	"rest-kind-default-target":        `:7: scenarios[0].kind: "rest_broadcast" sends through the REST API and needs a target with mode: serverless, not "local"`,
	"hub-kind-serverless-target":      `:10: scenarios[0].kind: "server_push" invokes hub methods, which serverless mode does not take from clients; target "local" needs mode: default`,
	"batch-size":                      `:10: scenarios[0].batch_size: must be between 1 and 100000, got 0`,
	"redirect-without-key":            `:5: targets[0].embedded_hub.redirect_negotiate: needs access_key or entra_issuer`,
	"entra-issuer-http":               `:5: targets[0].embedded_hub.entra_issuer: the issuer must be an https URL, not http`,
	"disable-local-auth-alone":        `:6: targets[0].embedded_hub.disable_local_auth: needs entra_issuer: without it nothing could call the REST APIs`,
	"embedded-hub-units":              `:5: targets[0].embedded_hub.units: must be between 0 and 1000, got -1`,
	"embedded-hub-connection-quota":   `:5: targets[0].embedded_hub.connection_quota: must be between 0 and 1000000, got 2000000`,
	"embedded-hub-message-rate-limit": `:5: targets[0].embedded_hub.message_rate_limit: must not be negative, got -0.5`,
	"access-key-env-unset":            `:5: targets[0].embedded_hub.access_key: environment variable "HUBPROBE_TEST_UNSET_ACCESS_KEY" is not set`,
	"capacity-timeout":                `:10: scenarios[0].timeout: must be greater than the capacity search's longest ramp 40s, got 30s`,
	"max-send-lag":                    `:10: scenarios[0].max_send_lag: must be greater than 0, got 0s`,
	"header-value":                    `:5: targets[0].headers.X-Probe: value must not contain line breaks or NUL`,
	"connection-string-endpoint":      `:3: targets[0].connection_string: Endpoint must be an http:// or https:// URL`,
	"connection-string-file-version":  `:4: targets[0].connection_string_file: Version is not supported (want 1.x)`,
	"azure-monitor-embedded":          `:4: targets[0].azure_monitor: not allowed with embedded: true (the embedded hub reports its own server load)`,
	"azure-monitor-no-resource-id":    `:4: targets[0].azure_monitor: resource_id is required`,
	"azure-monitor-resource-id":       `:5: targets[0].azure_monitor.resource_id: provider must be Microsoft.SignalRService, got "Microsoft.Web"`,
	"azure-monitor-service":           `:5: targets[0].azure_monitor.resource_id: names a Microsoft.SignalRService/WebPubSub resource, but target "azure" has service: signalr`,
	"azure-monitor-endpoint":          `:6: targets[0].azure_monitor.endpoint: must be an https URL, got scheme "http"`,
	"azure-monitor-interval":          `:6: targets[0].azure_monitor.interval: must be one of Azure Monitor's time grains 1m, 5m, 15m, 30m or 1h, got 30s`,
	"azure-monitor-unknown-key":       `:5: targets[0].azure_monitor: unknown key "resource"`,
	"aspnet-connection-string":        `:4: targets[0].connection_string: not allowed with service: aspnet_signalr; give the app server's url, or embedded: true`,
	"aspnet-mode":                     `:5: targets[0].mode: must be default with service: aspnet_signalr, which has no serverless mode, got "serverless"`,
	"aspnet-skip-negotiation":         `:5: targets[0].skip_negotiation: not allowed with service: aspnet_signalr, whose connections need negotiate's connection token`,
	"aspnet-transport":                `:8: scenarios[0].transport: unknown transport "webSocket" (valid: foreverFrame, foreverframe, longPolling, longpolling, serverSentEvents, sse, webSockets, websockets)`,
	"aspnet-fallback-transport":       `:9: scenarios[0].fallback_transports[1]: unknown transport "iframe" (valid: foreverFrame, foreverframe, longPolling, longpolling, serverSentEvents, sse, webSockets, websockets)`,
	"aspnet-protocol":                 `:8: scenarios[0].protocol: unknown protocol "messagepack" (valid: json)`,
	"aspnet-kind":                     `:7: scenarios[0].kind: "streaming_echo" does not run on target "classic" (service: aspnet_signalr); its kinds: broadcast, echo, held, send_to_client, send_to_group`,
	"aspnet-tier":                     `:6: targets[0].tier.service: must be signalr, the target's service, got "webpubsub"`,
	"aspnet-hub":                      `:5: targets[0].hub: invalid hub name "bench-hub": use a letter, then letters, digits or "_"`,
	"foreverframe-signalr-target":     `:7: scenarios[0].transport: unknown transport "foreverframe" (valid: longpolling, sse, websockets)`,
}

func TestInvalidConfigs(t *testing.T) {
	tests := invalidConfigs
	files, err := filepath.Glob("testdata/invalid-*.yml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(tests) {
		t.Errorf("%d testdata/invalid-*.yml files but %d expected errors: every file needs a row", len(files), len(tests))
	}
	for name, suffix := range tests {
		t.Run(name, func(t *testing.T) {
			path := "testdata/invalid-" + name + ".yml"
			_, err := Load(path, testKinds)
			if err == nil {
				t.Fatalf("Load(%s) succeeded, want error", path)
			}
			if got, want := err.Error(), path+suffix; got != want {
				t.Errorf("error\n got: %s\nwant: %s", got, want)
			}
			var cerr *Error
			if !errors.As(err, &cerr) || cerr.File != path || cerr.Msg == "" {
				t.Errorf("error %#v is not a *config.Error for %s", err, path)
			}
		})
	}
}

func TestMinimalConfigGetsDefaults(t *testing.T) {
	c, err := Load("testdata/valid-minimal.yml", testKinds)
	if err != nil {
		t.Fatal(err)
	}
	want := &Config{
		Global: Global{StartJitter: true},
		Targets: []Target{{
			Name: "local", Service: ServiceSignalR, URL: "http://127.0.0.1:5050/signalrbench",
			EmbeddedHub: EmbeddedHub{MaxMessageSize: 32768}, Mode: TargetModeDefault,
		}},
		Scenarios: []Scenario{{
			Name: "echo", Target: "local", Kind: "echo", Schedule: "@every 30s",
			Timeout:  30 * time.Second, // 15s+10s+5s+10s, capped at the 30s interval
			Duration: 10 * time.Second, Connections: 10, ConnectConcurrency: 50,
			ConnectTimeout: 15 * time.Second, MessageSize: 2048, SendInterval: time.Second,
			GroupSize: 10, BatchSize: 100, LossTimeout: 5 * time.Second, MaxSendLag: 100 * time.Millisecond, Transport: "websockets", Protocol: "json", Mode: ModeRun,
			Objective: slo.Default,
		}},
	}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("Load(valid-minimal.yml)\n got: %+v\nwant: %+v", c, want)
	}
}

// fullTargets and fullScenarios are what testdata/valid-full.yml holds
// after Load.
var fullTargets = []Target{{
	Name: "app-server", Service: ServiceSignalR, URL: "wss://hub.example.com/signalrbench?tenant=a",
	EmbeddedHub: DefaultEmbeddedHub, AccessToken: "Bearer-t0k",
	Headers: map[string]string{"X-Probe": "hubprobe"}, SkipNegotiation: true,
	Tier: &Tier{Service: "signalr", Units: 10}, Mode: TargetModeDefault,
	AzureMonitor: &AzureMonitor{
		ResourceID: "/subscriptions/00000000-1111-2222-3333-444444444444/resourceGroups/probe/providers/Microsoft.SignalRService/SignalR/probe-west/replicas/probe-east",
		Endpoint:   "https://management.chinacloudapi.cn", Interval: 5 * time.Minute,
	},
	SLO: &SLO{Objective: 0.995, Window: SLOWindow(28 * slo.Day)},
}, {
	Name: "embedded.slow", Service: ServiceSignalR, Embedded: true, Mode: TargetModeDefault,
	EmbeddedHub: EmbeddedHub{DeliveryDelay: 250 * time.Millisecond, MaxMessageSize: 65536,
		AccessKey: "key-t0k", Units: 2, ConnectionQuota: 1500, MessageRateLimit: 0.5, RedirectNegotiate: true},
}, {
	Name: "from_file", Service: ServiceSignalR, URL: "https://hub.example.com/chat", EmbeddedHub: DefaultEmbeddedHub,
	AccessToken: "file-token", AccessTokenFile: "testdata/token.txt", Mode: TargetModeDefault,
}, {
	Name: "azure", Service: ServiceSignalR, EmbeddedHub: DefaultEmbeddedHub,
	ConnectionString:     "Endpoint=https://probe-west.service.signalr.net;AccessKey=file-key;Version=1.0;",
	ConnectionStringFile: "testdata/connstr.txt", Hub: "chat", Mode: TargetModeServerless, RESTAPIVersion: "2022-06-01",
}, {
	Name: "azure-inline", Service: ServiceSignalR, EmbeddedHub: DefaultEmbeddedHub,
	ConnectionString: "Endpoint=https://probe-north.service.signalr.net;AccessKey=t0k;Version=1.0;",
	Hub:              "Chat_2", Mode: TargetModeServerless, RESTAPIVersion: "v1",
}, {
	Name: "wps", Service: ServiceWebPubSub, EmbeddedHub: DefaultEmbeddedHub,
	ConnectionString: "Endpoint=https://probe.webpubsub.azure.com;AccessKey=t0k;Version=1.0;Port=8443;",
	Hub:              "probe.v1", Tier: &Tier{Service: "webpubsub", Units: 2},
}}

var fullScenarios = []Scenario{{
	Name: "stream-1", Target: "embedded.slow", Kind: "streaming_echo", Schedule: "*/5 * * * *",
	Timeout: 2 * time.Minute, Duration: time.Minute, Connections: 200, ConnectConcurrency: 20,
	ConnectTimeout: 5 * time.Second, MessageSize: 40000, SendInterval: 500 * time.Millisecond,
	Senders: 50, GroupSize: 25, BatchSize: 1000, LossTimeout: 3 * time.Second, MaxSendLag: 100 * time.Millisecond, Transport: "websockets",
	Protocol: "json", StreamItemDelay: 10 * time.Millisecond, Mode: ModeRun,
	SLO: &SLO{Objective: 0.999}, Objective: slo.Objective{Ratio: 0.999, Window: slo.DefaultWindow},
}, {
	// From the big-group row of unit 100 at 1/100: 1000 connections in
	// 10 groups; senders is written and wins over the row's 1.
	Name: "ramp", Target: "app-server", Kind: "send_to_group", Schedule: "@daily",
	Timeout: 48 * time.Second, Duration: 10 * time.Second, Connections: 1000, ConnectConcurrency: 50,
	ConnectTimeout: 15 * time.Second, MessageSize: 2048, SendInterval: time.Second,
	Senders: 4, GroupSize: 100, BatchSize: 100, LossTimeout: 5 * time.Second, MaxSendLag: 100 * time.Millisecond, Transport: "websockets", Protocol: "json",
	Profile: &Profile{
		Service: "signalr", Scenario: "send_to_big_group", Units: 100, Scale: 0.01,
		Set: []string{"connections", "group_size", "message_size", "send_interval"}, Explicit: []string{"senders"},
	},
	Mode:           ModeCapacitySearch,
	CapacitySearch: &CapacitySearch{BaseSending: 2, Step: 2, StepDuration: 5 * time.Second, MaxSteps: 3},
	Objective:      slo.Objective{Ratio: 0.995, Window: 28 * slo.Day},
}, {
	Name: "rest", Target: "azure", Kind: "rest_send_to_group", Schedule: "@every 1m",
	Timeout: 40 * time.Second, Duration: 10 * time.Second, Connections: 10, ConnectConcurrency: 50,
	ConnectTimeout: 15 * time.Second, MessageSize: 2048, SendInterval: time.Second,
	GroupSize: 10, BatchSize: 100, LossTimeout: 5 * time.Second, MaxSendLag: 100 * time.Millisecond, Transport: "websockets", Protocol: "json", Mode: ModeRun,
	Objective: slo.Default,
}, {
	Name: "wps-groups", Target: "wps", Kind: "send_to_group", Schedule: "@every 1m",
	Timeout: 40 * time.Second, Duration: 10 * time.Second, Connections: 10, ConnectConcurrency: 50,
	ConnectTimeout: 15 * time.Second, MessageSize: 2048, SendInterval: time.Second,
	GroupSize: 10, BatchSize: 100, LossTimeout: 5 * time.Second, MaxSendLag: 100 * time.Millisecond, Transport: "websockets",
	Protocol: "json.reliable.webpubsub.azure.v1", Mode: ModeRun, Objective: slo.Default,
}}

func TestFullConfigKeepsEveryValue(t *testing.T) {
	t.Setenv("HUBPROBE_TEST_TOKEN", "t0k")
	c, err := Load("testdata/valid-full.yml", testKinds)
	if err != nil {
		t.Fatal(err)
	}
	want := &Config{
		Global:    Global{StartJitter: false},
		Targets:   fullTargets,
		Scenarios: fullScenarios,
	}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("Load(valid-full.yml)\n got: %#v\nwant: %#v", c, want)
	}
}

func TestAnchorsAndMergeKeys(t *testing.T) {
	c, err := Load("testdata/valid-anchors.yml", testKinds)
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		name, kind, target string
		conns, size        int
		duration           time.Duration
	}
	var got []row
	for _, s := range c.Scenarios {
		got = append(got, row{s.Name, s.Kind, s.Target, s.Connections, s.MessageSize, s.Duration})
	}
	want := []row{
		{"echo", "echo", "local", 4, 256, 5 * time.Second},
		{"broadcast", "broadcast", "local", 4, 256, 5 * time.Second},
		{"send_to_group", "send_to_group", "local", 8, 256, 5 * time.Second},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("scenarios\n got: %+v\nwant: %+v", got, want)
	}
}

// A mapping that merges itself must not loop forever; yaml.v3 accepts the
// alias, and the merge adds nothing new.
func TestSelfMergeTerminates(t *testing.T) {
	data := "global: &g\n  <<: *g\n  start_jitter: false\n" + minimalBody
	c, err := Parse([]byte(data), "loop.yml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Global.StartJitter {
		t.Error("start_jitter: false was lost")
	}
}

const minimalBody = `
targets:
  - name: local
    url: ws://127.0.0.1:1/hub
scenarios:
  - name: echo
    kind: echo
`

func TestDefaultsDependingOnOtherFields(t *testing.T) {
	tests := []struct {
		extra                string
		wantTimeout          time.Duration
		wantGroup, wantConns int
	}{
		{"    schedule: \"@every 30s\"\n", 30 * time.Second, 10, 10},
		{"    schedule: \"@every 2m\"\n", 40 * time.Second, 10, 10},
		{"    schedule: \"*/5 * * * *\"\n    loss_timeout: 20s\n", 55 * time.Second, 10, 10},
		{"    schedule: \"@hourly\"\n    connections: 3\n", 40 * time.Second, 3, 3},
		{"    timeout: 11s\n    group_size: 2\n", 11 * time.Second, 2, 10},
	}
	for _, tt := range tests {
		c, err := Parse([]byte(minimalBody+tt.extra), "defaults.yml", testKinds)
		if err != nil {
			t.Errorf("%q: %v", tt.extra, err)
			continue
		}
		s := c.Scenarios[0]
		if s.Timeout != tt.wantTimeout || s.GroupSize != tt.wantGroup || s.Connections != tt.wantConns {
			t.Errorf("%q: timeout %s group_size %d connections %d, want %s %d %d",
				tt.extra, s.Timeout, s.GroupSize, s.Connections, tt.wantTimeout, tt.wantGroup, tt.wantConns)
		}
		if s.Target != "local" {
			t.Errorf("%q: target %q, want the only target \"local\"", tt.extra, s.Target)
		}
	}
}

func TestNilKindsSkipsKindCheck(t *testing.T) {
	data := strings.Replace(minimalBody, "kind: echo", "kind: some_future_kind", 1)
	if _, err := Parse([]byte(data), "kinds.yml", nil); err != nil {
		t.Errorf("with nil kinds: %v", err)
	}
	if _, err := Parse([]byte(data), "kinds.yml", testKinds); err == nil {
		t.Error("with kinds: unknown kind accepted")
	}
}

func TestEmptyValuesKeepDefaults(t *testing.T) {
	c, err := Parse([]byte(minimalBody+"    timeout:\n    connections: ~\nglobal:\n"), "null.yml", testKinds)
	if err != nil {
		t.Fatal(err)
	}
	if s := c.Scenarios[0]; s.Connections != 10 || s.Timeout != 40*time.Second || !c.Global.StartJitter {
		t.Errorf("null values changed defaults: %+v %+v", c.Global, s)
	}
}

func TestDuplicateHeaderDifferentCase(t *testing.T) {
	data := strings.Replace(minimalBody, "    url:", "    headers:\n      x-a: \"1\"\n      X-A: \"2\"\n    url:", 1)
	_, err := Parse([]byte(data), "h.yml", nil)
	want := `h.yml:5: targets[0].headers.x-a: duplicate header "x-a" (also written as "X-A")`
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}

func TestDefault(t *testing.T) {
	c := Default()
	if len(c.Targets) != 3 || c.Targets[0].Name != "embedded" || !c.Targets[0].Embedded {
		t.Fatalf("default targets: %+v", c.Targets)
	}
	if classic := c.Targets[2]; !classic.Embedded || !classic.AspNet() || classic.Hub != AspNetHubName || *classic.Tier != (Tier{Service: "signalr", Units: 1}) {
		t.Errorf("default classic target: %+v", classic)
	}
	if wps := c.Targets[1]; !wps.Embedded || !wps.WebPubSub() || *wps.Tier != (Tier{Service: "webpubsub", Units: 1}) {
		t.Errorf("default Web PubSub target: %+v", wps)
	}
	if !c.Global.StartJitter {
		t.Error("default start_jitter is false")
	}
	if tier := c.Targets[0].Tier; tier == nil || *tier != (Tier{Service: "signalr", Units: 1}) {
		t.Errorf("default tier %+v, want signalr unit 1", tier)
	}
	wantKinds := []string{"echo", "broadcast", "send_to_group", "send_to_client"}
	if len(c.Scenarios) != len(wantKinds)+5 {
		t.Fatalf("%d default scenarios, want %d", len(c.Scenarios), len(wantKinds)+5)
	}
	if s := c.Scenarios[len(wantKinds)+2]; s.Target != "classic" || s.Kind != "echo" || s.Name != "classic_echo" || s.Transport != "sse" {
		t.Errorf("default classic scenario: %+v", s)
	}
	for i, kind := range []string{"send_to_group", "echo"} {
		if s := c.Scenarios[len(wantKinds)+i]; s.Target != "webpubsub" || s.Kind != kind || s.Name != "webpubsub_"+kind || s.Protocol != "json.webpubsub.azure.v1" {
			t.Errorf("default Web PubSub scenario %d: %+v", i, s)
		}
	}
	// A few held connections, echoing every 10 s, reported every minute.
	if held := c.Scenarios[len(c.Scenarios)-2]; held.Kind != KindHeld || held.Connections != 3 || held.SendInterval != 10*time.Second ||
		held.Held == nil || held.Held.ReportInterval != time.Minute {
		t.Errorf("default held scenario: %+v", held)
	}
	// The last one is a capacity search sized by the unit-1 echo profile:
	// 5 steps of 2s (2 to 10 senders) fit well within its 15m schedule.
	capacity := c.Scenarios[len(c.Scenarios)-1]
	if capacity.Mode != ModeCapacitySearch || capacity.Kind != "echo" || capacity.Connections != 10 ||
		capacity.CapacitySearch.Steps(capacity.Connections) != 5 || capacity.Timeout != 15*time.Second+15*time.Second+5*time.Second+DefaultTimeoutPad {
		t.Errorf("default capacity search: %+v %+v", capacity, capacity.CapacitySearch)
	}
	for i, s := range c.Scenarios[:len(wantKinds)] {
		if s.Kind != wantKinds[i] || s.Name != wantKinds[i] || s.Target != "embedded" || s.Schedule != "@every 30s" ||
			s.Duration != 10*time.Second || s.Connections < 10 || s.Connections > 20 ||
			s.MessageSize != 2048 || s.SendInterval != time.Second || s.GroupSize != 10 || s.Timeout != 30*time.Second {
			t.Errorf("default scenario %d: %+v", i, s)
		}
	}
	if _, err := Parse(DefaultYAML, DefaultFilename, testKinds); err != nil {
		t.Errorf("default.yml with the scenario kinds: %v", err)
	}
	c.Scenarios[0].Name = "changed"
	if Default().Scenarios[0].Name != "echo" {
		t.Error("Default() returns shared state")
	}
}

// A printed config parses back to the same config.
func TestMarshalRoundTrip(t *testing.T) {
	for _, path := range []string{"testdata/valid-minimal.yml", "testdata/valid-anchors.yml", ""} {
		c := Default()
		if path != "" {
			var err error
			if c, err = Load(path, testKinds); err != nil {
				t.Fatal(err)
			}
		}
		out, err := yaml.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		again, err := Parse(out, "printed.yml", testKinds)
		if err != nil {
			t.Fatalf("%s printed:\n%s\ndoes not parse: %v", path, out, err)
		}
		if !reflect.DeepEqual(c, again) {
			t.Errorf("%s: round trip changed the config\nbefore: %+v\nafter:  %+v", path, c, again)
		}
	}
}

func TestTargetLookup(t *testing.T) {
	c := Default()
	if tg, ok := c.Target("embedded"); !ok || tg != &c.Targets[0] {
		t.Errorf("Target(embedded) = %p, %v; want %p, true", tg, ok, &c.Targets[0])
	}
	if tg, ok := c.Target("nope"); ok || tg != nil {
		t.Errorf("Target(nope) = %v, %v; want nil, false", tg, ok)
	}
}

func TestErrorFormat(t *testing.T) {
	tests := []struct {
		err  Error
		want string
	}{
		{Error{File: "c.yml", Line: 9, Key: "scenarios[0].connections", Msg: "bad"}, "c.yml:9: scenarios[0].connections: bad"},
		{Error{File: "c.yml", Key: "targets", Msg: "bad"}, "c.yml: targets: bad"},
		{Error{Line: 3, Msg: "bad"}, "line 3: bad"},
		{Error{Msg: "bad"}, "bad"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("got %q, want %q", got, tt.want)
		}
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := Load("testdata/no-such-config.yml", nil)
	want := "testdata/no-such-config.yml: cannot read file: no such file or directory"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

// Every configuration shipped in examples/ must load.
func TestExamples(t *testing.T) {
	t.Setenv("HUBPROBE_WESTEU_TOKEN", "example-token")
	t.Setenv("HUBPROBE_SIGNALR_CONNECTION_STRING", "Endpoint=https://example.service.signalr.net;AccessKey=example-key;Version=1.0;")
	t.Setenv("HUBPROBE_WEBPUBSUB_CONNECTION_STRING", "Endpoint=https://example.webpubsub.azure.com;AccessKey=example-key;Version=1.0;")
	files, err := filepath.Glob("../examples/*.yml")
	if err != nil || len(files) < 2 {
		t.Fatalf("found %d examples (%v), want at least 2", len(files), err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, ".workload.yml") {
			continue // `hubprobe plan` input, not a configuration
		}
		if _, err := Load(f, testKinds); err != nil {
			t.Errorf("%v", err)
		}
	}
}

// A classic target takes its transports in the classic client's spelling
// too, and Load stores hubprobe's, which the scenario info label carries.
func TestAspNetTransportNamesAreStoredInHubprobesSpelling(t *testing.T) {
	c, err := Load("testdata/valid-aspnet.yml", testKinds)
	if err != nil {
		t.Fatal(err)
	}
	tgt := c.Targets[0]
	if tgt.Service != ServiceAspNetSignalR || tgt.Mode != TargetModeDefault || tgt.TierService() != ServiceSignalR || tgt.Hub != AspNetHubName {
		t.Errorf("target = service %q mode %q tier service %q hub %q", tgt.Service, tgt.Mode, tgt.TierService(), tgt.Hub)
	}
	echo, group := c.Scenarios[0], c.Scenarios[1]
	if echo.Transport != TransportForeverFrame || !reflect.DeepEqual(echo.FallbackTransports, []string{"sse", "longpolling"}) {
		t.Errorf("echo transport %q, fallbacks %q", echo.Transport, echo.FallbackTransports)
	}
	if group.Transport != "websockets" || group.Protocol != "json" {
		t.Errorf("group transport %q protocol %q", group.Transport, group.Protocol)
	}
}
