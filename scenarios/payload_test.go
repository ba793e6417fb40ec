package scenarios

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/scenarios/internal/ledger"
)

func TestPayloadRoundTripAndRunIsolation(t *testing.T) {
	b := newPayloadBuilder("runA", 64)
	id := ledger.MessageID(7, 41)
	p := b.Append(nil, keyGroupName, "g1", id)
	var m map[string]any
	if err := json.Unmarshal(p, &m); err != nil {
		t.Fatalf("payload is not JSON: %v: %s", err, p)
	}
	if m[keyGroupName] != "g1" || len(m[keyBlob].(string)) != 64 {
		t.Fatalf("payload fields wrong: %v", m)
	}
	us, gotID, ok := b.Parse(p)
	if !ok || sinceStamp(us) < 0 || sinceStamp(us) > time.Second || gotID != id {
		t.Fatalf("Parse = %d, %d, %v; want id %d", us, gotID, ok, id)
	}
	if _, _, ok := newPayloadBuilder("runB", 8).Parse(p); ok {
		t.Fatal("a payload of another run was accepted")
	}
}

func TestPayloadParseSurvivesReencoding(t *testing.T) {
	b := newPayloadBuilder("runA", 16)
	var m map[string]any
	// The largest identity a run can give out must survive float64.
	id := ledger.MessageID(1<<21-1, 1<<32-1)
	_ = json.Unmarshal(b.Append(nil, "", "", id), &m)
	pretty, _ := json.MarshalIndent(m, "", "  ") // keys reordered, spaces added, number as float
	if _, gotID, ok := b.Parse(pretty); !ok || gotID != id {
		t.Fatalf("re-encoded payload not recognised (id %d, want %d): %s", gotID, id, pretty)
	}
	for _, bad := range []string{`{}`, `[]`, `not json`, `{"payload.Run":"runA"}`, `{"payload.Run":"runA","payload.Timestamp":"x"}`,
		`{"payload.Run":"runA","payload.Timestamp":1}`, `{"payload.Run":"runA","payload.Timestamp":1,"payload.Seq":-1}`} {
		if _, _, ok := b.Parse([]byte(bad)); ok {
			t.Errorf("Parse(%s) accepted", bad)
		}
	}
}

// Identities stay exact through float64 only while every sender index is
// below 2^21.
func TestMaxConnectionsKeepsIdentitiesExact(t *testing.T) {
	if config.MaxConnections >= 1<<21 {
		t.Fatalf("config.MaxConnections %d: message identities would exceed 2^53", config.MaxConnections)
	}
}
