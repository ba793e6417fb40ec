package scenarios

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strconv"
	"time"
)

// Payload keys follow the benchmark hub's dictionary contract, so an app
// server built from the vendor's benchmark hub routes hubprobe's messages
// without change. payload.Run is hubprobe's own: it tells a run's messages
// apart from another run's broadcasts on the same hub, and one shard's
// messages from another's (see runMarker).
const (
	keyTimestamp    = "payload.Timestamp"
	keyBlob         = "payload.MessageBlob"
	keyRun          = "payload.Run"
	keySeq          = "payload.Seq"
	keyConnectionID = "information.ConnectionId"
	keyGroupName    = "information.GroupName"
)

// epoch anchors send timestamps to this process's monotonic clock. Sender
// and receiver share the process, so there is no clock skew to correct.
var epoch = time.Now()

// stamp is microseconds since epoch: an integer small enough to survive a
// hub that re-encodes numbers as float64.
func stamp() int64 { return time.Since(epoch).Microseconds() }

func sinceStamp(us int64) time.Duration {
	return time.Since(epoch) - time.Duration(us)*time.Microsecond
}

// payloadBuilder writes one run's payloads. The blob and run id are encoded
// once; each message only appends its route and timestamp.
type payloadBuilder struct {
	body []byte // `"payload.Run":"…","payload.MessageBlob":"…","payload.Timestamp":`
	run  []byte // `"payload.Run":"…"`, what a receiver looks for
}

func newPayloadBuilder(marker string, size int) *payloadBuilder {
	blob, _ := json.Marshal(randomBlob(size))
	var b payloadBuilder
	b.run = appendKey(nil, keyRun)
	b.run = strconv.AppendQuote(b.run, marker)
	b.body = append(b.body, b.run...)
	b.body = append(append(b.body, ','), appendKey(nil, keyBlob)...)
	b.body = append(b.body, blob...)
	b.body = append(append(b.body, ','), appendKey(nil, keyTimestamp)...)
	return &b
}

// Append writes message id's payload, routed by (routeKey, routeValue) when
// routeKey is set, stamped now.
func (b *payloadBuilder) Append(dst []byte, routeKey, routeValue string, id uint64) []byte {
	return b.AppendAt(dst, routeKey, routeValue, id, stamp())
}

// AppendAt is Append stamped us (a stamp()) rather than now: a message
// that fell due while its connection was away, and goes out later.
func (b *payloadBuilder) AppendAt(dst []byte, routeKey, routeValue string, id uint64, us int64) []byte {
	dst = append(dst, '{')
	if routeKey != "" {
		dst = appendKey(dst, routeKey)
		dst = strconv.AppendQuote(dst, routeValue)
		dst = append(dst, ',')
	}
	dst = append(dst, b.body...)
	dst = strconv.AppendInt(dst, us, 10)
	dst = append(append(dst, ','), seqKey...)
	dst = strconv.AppendUint(dst, id, 10)
	return append(dst, '}')
}

// seqKey is the payload.Seq key as written, quoted and with its colon;
// runKey the payload.Run key followed by the opening quote of its value.
var (
	seqKey = appendKey(nil, keySeq)
	runKey = append(appendKey(nil, keyRun), '"')
)

// Parse returns the send stamp and the identity of a payload of this run.
// ok is false for a payload of another run or one hubprobe did not write.
// Hubs may re-encode the dictionary (key order, spacing, numbers as
// floats), so the fast path falls back to a decode.
func (b *payloadBuilder) Parse(p []byte) (us int64, id uint64, ok bool) {
	if bytes.Contains(p, b.run) {
		us, okStamp := scanInt(p, keyTimestamp)
		seq, okSeq := scanInt(p, keySeq)
		if okStamp && okSeq && seq >= 0 {
			return us, uint64(seq), true
		}
	} else if bytes.Contains(p, runKey) {
		// Another run's or another shard's payload, as hubprobe wrote it:
		// most of what a sharded broadcast receives, not worth a decode.
		return 0, 0, false
	}
	return b.decode(p)
}

// decode is Parse's slow path for a dictionary the hub re-encoded.
func (b *payloadBuilder) decode(p []byte) (us int64, id uint64, ok bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(p, &m) != nil {
		return 0, 0, false
	}
	var run string
	if json.Unmarshal(m[keyRun], &run) != nil || !bytes.Contains(b.run, []byte(strconv.Quote(run))) {
		return 0, 0, false
	}
	var stampF, seqF float64
	if json.Unmarshal(m[keyTimestamp], &stampF) != nil || json.Unmarshal(m[keySeq], &seqF) != nil || seqF < 0 {
		return 0, 0, false
	}
	return int64(stampF), uint64(seqF), true
}

// scanInt finds "key": and parses the integer after it.
func scanInt(p []byte, key string) (int64, bool) {
	k := appendKey(make([]byte, 0, len(key)+3), key)
	i := bytes.Index(p, k[:len(k)-1])
	if i < 0 {
		return 0, false
	}
	rest := bytes.TrimLeft(p[i+len(k)-1:], " \t\r\n")
	if len(rest) == 0 || rest[0] != ':' {
		return 0, false
	}
	rest = bytes.TrimLeft(rest[1:], " \t\r\n")
	end := 0
	for end < len(rest) && (rest[end] >= '0' && rest[end] <= '9' || end == 0 && rest[end] == '-') {
		end++
	}
	// A number written as a float ("3.0064771072e+10", as some hubs
	// re-encode) is not an integer here; the caller decodes it instead.
	if end < len(rest) && !bytes.ContainsRune([]byte(",} \t\r\n"), rune(rest[end])) {
		return 0, false
	}
	v, err := strconv.ParseInt(string(rest[:end]), 10, 64)
	return v, err == nil
}

func appendKey(dst []byte, key string) []byte {
	dst = strconv.AppendQuote(dst, key)
	return append(dst, ':')
}

// randomBlob is random bytes, base64-encoded and cut to size characters, as
// the benchmark does, so JSON and MessagePack carry the same string.
func randomBlob(size int) string {
	raw := make([]byte, size)
	_, _ = rand.Read(raw)
	return base64.StdEncoding.EncodeToString(raw)[:size]
}

// runID is a short token naming the run of scenario that starts at at: the
// same in every process that runs it then, so that the shards of a scenario
// share its groups.
func runID(scenario string, at time.Time) string {
	sum := sha256.Sum256([]byte(scenario + "\x00" + strconv.FormatInt(at.UnixNano(), 10)))
	return base64.RawURLEncoding.EncodeToString(sum[:6])
}

// runMarker is what this process's payloads of run id carry as
// payload.Run: the run, the shard, and a random token, so that a shard
// counts only what it sent itself, even beside a process that runs the
// same shard of the same scenario (an overlapping rollout).
func runMarker(id string, shard Shard) string {
	raw := make([]byte, 6)
	_, _ = rand.Read(raw)
	return id + "." + strconv.Itoa(shard.Index) + "." + base64.RawURLEncoding.EncodeToString(raw)
}
