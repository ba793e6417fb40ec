package config

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// profileBody is a target and one scenario whose profile and extra keys
// the cases fill in.
const profileBody = `
targets:
  - name: local
    url: ws://127.0.0.1:1/hub
scenarios:
  - name: sized
    profile:
`

// webPubSubBody is profileBody with an embedded Web PubSub target.
const webPubSubBody = `
targets:
  - name: local
    service: webpubsub
    embedded: true
scenarios:
  - name: sized
    profile:
`

type resolved struct {
	kind                                 string
	connections, senders, group, message int
	interval                             time.Duration
	set, explicit                        []string
}

// The profile keys most cases fill.
var (
	profileAll       = []string{"connections", "senders", "message_size", "send_interval"}
	profileWithGroup = []string{"connections", "senders", "group_size", "message_size", "send_interval"}
)

// profileCases are profiles and what they resolve to.
var profileCases = []struct {
	name, profile, extra string
	webPubSub            bool
	want                 resolved
}{{
	name:    "echo unit 10 at 1/100: 10000 connections and senders",
	profile: "service: signalr\n      scenario: echo\n      units: 10\n      scale: 0.01",
	want:    resolved{"echo", 100, 100, 10, 2048, time.Second, profileAll, nil},
}, {
	name:    "broadcast keeps at least one sender: 2 × 1/100 rounds to 0",
	profile: "service: signalr\n      scenario: broadcast\n      units: 1\n      scale: 0.01",
	want:    resolved{"broadcast", 10, 1, 10, 2048, time.Second, profileAll, nil},
}, {
	name:    "small groups keep 10 members and scale the group count",
	profile: "service: signalr\n      scenario: send_to_small_group\n      units: 100\n      scale: 0.01",
	want:    resolved{"send_to_group", 1000, 100, 10, 2048, time.Second, profileWithGroup, nil},
}, {
	name:    "big groups keep 10 groups and scale their size",
	profile: "service: signalr\n      scenario: send_to_big_group\n      units: 100\n      scale: 0.01",
	want:    resolved{"send_to_group", 1000, 1, 100, 2048, time.Second, profileWithGroup, nil},
}, {
	name:    "big groups follow written connections: 10 groups of 25",
	profile: "service: signalr\n      scenario: send_to_big_group\n      units: 100\n      scale: 0.01",
	extra:   "    connections: 250\n",
	want:    resolved{"send_to_group", 250, 1, 25, 2048, time.Second, []string{"senders", "group_size", "message_size", "send_interval"}, []string{"connections"}},
}, {
	name:    "send to connection runs send_to_client; unit 20 exists only there",
	profile: "service: signalr\n      scenario: send_to_connection\n      units: 20\n      scale: 0.005",
	want:    resolved{"send_to_client", 100, 100, 10, 2048, time.Second, profileAll, nil},
}, {
	name:      "web pubsub small groups",
	profile:   "service: webpubsub\n      scenario: send_to_small_group\n      units: 1\n      scale: 0.1",
	webPubSub: true,
	want:      resolved{"send_to_group", 100, 20, 10, 2048, time.Second, profileWithGroup, nil},
}, {
	name:      "web pubsub big groups: connections/10 members",
	profile:   "service: webpubsub\n      scenario: send_to_big_group\n      units: 2\n      scale: 0.05",
	webPubSub: true,
	want:      resolved{"send_to_group", 100, 2, 10, 2048, time.Second, profileWithGroup, nil},
}, {
	name:      "the web pubsub upstream echo runs echo",
	profile:   "service: webpubsub\n      scenario: upstream_echo\n      units: 1\n      scale: 0.02",
	webPubSub: true,
	want:      resolved{"echo", 20, 10, 10, 2048, time.Second, profileAll, nil},
}, {
	name:      "web pubsub rest broadcast",
	profile:   "service: webpubsub\n      scenario: rest_broadcast\n      units: 10\n      scale: 0.001",
	webPubSub: true,
	want:      resolved{"rest_broadcast", 10, 1, 10, 2048, time.Second, profileAll, nil},
}, {
	name:    "written settings win, and kind may be written when it matches",
	profile: "service: signalr\n      scenario: echo\n      units: 2\n      scale: 0.01",
	extra:   "    kind: echo\n    senders: 5\n    message_size: 256\n    send_interval: 250ms\n",
	want:    resolved{"echo", 20, 5, 10, 256, 250 * time.Millisecond, []string{"connections"}, []string{"senders", "message_size", "send_interval"}},
}, {
	name:    "scale 1 and an integer scale",
	profile: "service: signalr\n      scenario: echo\n      units: 1\n      scale: 1",
	want:    resolved{"echo", 1000, 1000, 10, 2048, time.Second, profileAll, nil},
}}

func TestProfileResolution(t *testing.T) {
	tests := profileCases
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := profileBody
			if tt.webPubSub {
				body = webPubSubBody
			}
			data := body + "      " + tt.profile + "\n" + tt.extra
			c, err := Parse([]byte(data), "profile.yml", testKinds)
			if err != nil {
				t.Fatal(err)
			}
			s := c.Scenarios[0]
			got := resolved{s.Kind, s.Connections, s.Senders, s.GroupSize, s.MessageSize, s.SendInterval, s.Profile.Set, s.Profile.Explicit}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("resolved\n got: %+v\nwant: %+v", got, tt.want)
			}
		})
	}
}

func TestProfileSummary(t *testing.T) {
	data := profileBody + "      service: signalr\n      scenario: send_to_small_group\n      units: 10\n      scale: 0.01\n    senders: 4\n"
	c, err := Parse([]byte(data), "profile.yml", testKinds)
	if err != nil {
		t.Fatal(err)
	}
	want := "signalr send_to_small_group, unit 10 × 0.01: 100 connections, 4 senders, 10 groups of 10, " +
		"2048-byte messages every 1s (senders written in the file)"
	if got := c.Scenarios[0].ProfileSummary(); got != want {
		t.Errorf("ProfileSummary()\n got: %s\nwant: %s", got, want)
	}
	if got := DefaultScenario.ProfileSummary(); got != "" {
		t.Errorf("ProfileSummary() without a profile = %q, want empty", got)
	}
}

// A profile's scenario is held to the same limits as a written one: here
// its 100 connections exceed what group_size may be.
func TestProfileValuesAreValidated(t *testing.T) {
	data := profileBody + "      service: signalr\n      scenario: echo\n      units: 10\n      scale: 0.01\n    group_size: 101\n"
	_, err := Parse([]byte(data), "profile.yml", testKinds)
	want := "profile.yml:12: scenarios[0].group_size: must be between 1 and connections (100), got 101"
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}

func TestCapacitySearchDefaultsAndTimeout(t *testing.T) {
	data := strings.Replace(minimalBody, "kind: echo", "kind: echo\n    connections: 4\n    mode: capacity_search", 1)
	c, err := Parse([]byte(data), "capacity.yml", testKinds)
	if err != nil {
		t.Fatal(err)
	}
	s := c.Scenarios[0]
	if want := (CapacitySearch{BaseSending: 1, Step: 1, StepDuration: 10 * time.Second}); s.CapacitySearch == nil || *s.CapacitySearch != want {
		t.Fatalf("capacity_search = %+v, want the defaults %+v", s.CapacitySearch, want)
	}
	// 4 steps (1, 2, 3, 4 senders) of 10s plus a second each: 44s, plus
	// connect_timeout 15s, loss_timeout 5s and the 10s pad, capped at 1m.
	if s.Timeout != time.Minute {
		t.Errorf("timeout %s, want 1m0s (the @every 1m interval)", s.Timeout)
	}
	if got := s.CapacitySearch.Steps(s.Connections); got != 4 {
		t.Errorf("Steps(4) = %d, want 4", got)
	}
	cs := CapacitySearch{BaseSending: 3, Step: 4, MaxSteps: 2}
	if got, want := []int{cs.Steps(20), cs.Senders(0), cs.Senders(1), cs.Steps(2)}, []int{2, 3, 7, 0}; !reflect.DeepEqual(got, want) {
		t.Errorf("Steps/Senders = %v, want %v", got, want)
	}
}

func TestTierLimits(t *testing.T) {
	data := strings.Replace(minimalBody, "    url:", "    tier:\n      service: signalr\n      units: 10\n    url:", 1)
	c, err := Parse([]byte(data), "tier.yml", testKinds)
	if err != nil {
		t.Fatal(err)
	}
	l, err := c.Targets[0].Tier.Limits()
	if err != nil {
		t.Fatal(err)
	}
	if l.Connections != 10000 || l.InboundBytesPerSecond != 20480000 || l.OutboundBytesPerSecond != 40960000 {
		t.Errorf("signalr unit 10 limits = %+v", l)
	}
}

// A printed scenario leaves out what its profile filled in, so it parses
// back to the same scenario, with the same keys written and filled.
func TestProfileRoundTrip(t *testing.T) {
	data := profileBody + "      service: signalr\n      scenario: send_to_big_group\n      units: 10\n      scale: 0.02\n" +
		"    senders: 3\n    schedule: \"@daily\"\n    mode: capacity_search\n    capacity_search: {step: 30}\n"
	c, err := Parse([]byte(data), "profile.yml", testKinds)
	if err != nil {
		t.Fatal(err)
	}
	out, err := yaml.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "connections:") || !strings.Contains(string(out), "senders: 3") {
		t.Errorf("printed scenario should leave out connections and keep senders:\n%s", out)
	}
	again, err := Parse(out, "printed.yml", testKinds)
	if err != nil {
		t.Fatalf("printed config does not parse: %v\n%s", err, out)
	}
	if !reflect.DeepEqual(c, again) {
		t.Errorf("round trip changed the config\nbefore: %+v\nafter:  %+v", c.Scenarios[0], again.Scenarios[0])
	}
}

// Left out, base_sending and step are a tenth of the connections, so a
// ramp has about ten steps whatever its size.
func TestCapacitySearchRampsInTenSteps(t *testing.T) {
	for conns, want := range map[int]CapacitySearch{
		5:   {BaseSending: 1, Step: 1, StepDuration: 3 * time.Second},
		200: {BaseSending: 20, Step: 20, StepDuration: 3 * time.Second},
		205: {BaseSending: 20, Step: 20, StepDuration: 3 * time.Second},
	} {
		data := strings.Replace(minimalBody, "kind: echo", fmt.Sprintf("kind: echo\n    schedule: \"@hourly\"\n    connections: %d\n"+
			"    mode: capacity_search\n    capacity_search:\n      step_duration: 3s", conns), 1)
		c, err := Parse([]byte(data), "ramp.yml", testKinds)
		if err != nil {
			t.Fatal(err)
		}
		got := c.Scenarios[0].CapacitySearch
		if *got != want {
			t.Errorf("%d connections: %+v, want %+v", conns, *got, want)
		}
		if steps := got.Steps(conns); steps < 5 || steps > 10 {
			t.Errorf("%d connections: %d steps, want 5 to 10", conns, steps)
		}
	}
}
