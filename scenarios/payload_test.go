package scenarios

import (
	"encoding/json"
	"testing"
	"time"
)

func TestPayloadRoundTripAndRunIsolation(t *testing.T) {
	b := newPayloadBuilder("runA", 64)
	p := b.Append(nil, keyGroupName, "g1")
	var m map[string]any
	if err := json.Unmarshal(p, &m); err != nil {
		t.Fatalf("payload is not JSON: %v: %s", err, p)
	}
	if m[keyGroupName] != "g1" || len(m[keyBlob].(string)) != 64 {
		t.Fatalf("payload fields wrong: %v", m)
	}
	us, ok := b.Parse(p)
	if !ok || sinceStamp(us) < 0 || sinceStamp(us) > time.Second {
		t.Fatalf("Parse = %d, %v", us, ok)
	}
	if _, ok := newPayloadBuilder("runB", 8).Parse(p); ok {
		t.Fatal("a payload of another run was accepted")
	}
}

func TestPayloadParseSurvivesReencoding(t *testing.T) {
	b := newPayloadBuilder("runA", 16)
	var m map[string]any
	_ = json.Unmarshal(b.Append(nil, "", ""), &m)
	pretty, _ := json.MarshalIndent(m, "", "  ") // keys reordered, spaces added, number as float
	if _, ok := b.Parse(pretty); !ok {
		t.Fatalf("re-encoded payload not recognised: %s", pretty)
	}
	for _, bad := range []string{`{}`, `[]`, `not json`, `{"payload.Run":"runA"}`, `{"payload.Run":"runA","payload.Timestamp":"x"}`} {
		if _, ok := b.Parse([]byte(bad)); ok {
			t.Errorf("Parse(%s) accepted", bad)
		}
	}
}
