// Package ledger is a run's per-message identity ledger: it numbers each
// sender's messages and keeps, per receiver, which of them arrived, so a
// run counts every delivery as fresh, reordered or duplicated, and every
// expected one never seen as lost.
package ledger

import (
	"sync"
	"sync/atomic"
)

// Message identity. Every payload carries payload.Seq, the sender's index
// times 2^32 plus the sender's own sequence number, so a receiver knows
// exactly which message it got. The number stays below 2^53, so it survives
// a hub that re-encodes numbers as float64 while config.MaxConnections is
// below 2^21 (a test holds it there).
const seqSenderShift = 32

// MessageID is the identity of sender's message number seq.
func MessageID(sender int, seq uint32) uint64 {
	return uint64(sender)<<seqSenderShift | uint64(seq)
}

// SplitMessageID is the sender and sequence number of identity id.
func SplitMessageID(id uint64) (sender int, seq uint32) {
	return int(id >> seqSenderShift), uint32(id)
}

// Ledger assigns sequence numbers to senders and keeps, per receiver,
// which messages arrived. Memory is one bit per expected delivery plus a
// small header per (receiver, sender) route. It is safe for concurrent use.
type Ledger struct {
	next      []atomic.Uint32 // per sender: the next sequence number
	receivers []receiverLog

	// void holds identities whose send failed: nothing was expected of
	// them, so a delivery of one must not make up for a lost message.
	hasVoid atomic.Bool
	voidMu  sync.Mutex
	void    map[uint64]struct{}
}

// New is the ledger of a run of clients connections, each both a
// possible sender and a possible receiver.
func New(clients int) *Ledger {
	return &Ledger{next: make([]atomic.Uint32, clients), receivers: make([]receiverLog, clients)}
}

// Assign returns the identity of sender's next message.
func (ids *Ledger) Assign(sender int) uint64 {
	return MessageID(sender, ids.next[sender].Add(1)-1)
}

// Unsent marks id as a message whose send failed.
func (ids *Ledger) Unsent(id uint64) {
	ids.voidMu.Lock()
	defer ids.voidMu.Unlock()
	if ids.void == nil {
		ids.void = map[uint64]struct{}{}
	}
	ids.void[id] = struct{}{}
	ids.hasVoid.Store(true)
}

func (ids *Ledger) isVoid(id uint64) bool {
	if !ids.hasVoid.Load() {
		return false
	}
	ids.voidMu.Lock()
	defer ids.voidMu.Unlock()
	_, ok := ids.void[id]
	return ok
}

// Verdict is what one delivery turned out to be.
type Verdict uint8

// The verdicts of a delivery.
const (
	Fresh     Verdict = iota // first time this receiver saw the message
	Reordered                // first time, but behind a later message of the same sender
	Duplicate                // seen before by this receiver
	Unknown                  // not an identity this run gave out
)

// See records that receiver got message id; pos is the message's place in
// the sender's stream to this receiver (the sequence number, or for a
// batch, sequence × batch size + index).
func (ids *Ledger) See(receiver int, id uint64, pos uint64) Verdict {
	sender, seq := SplitMessageID(id)
	if receiver < 0 || receiver >= len(ids.receivers) || sender >= len(ids.next) ||
		seq >= ids.next[sender].Load() || ids.isVoid(id) {
		return Unknown
	}
	return ids.receivers[receiver].see(receiver, sender, pos)
}

// Seen reports whether receiver saw message id, at position pos of its
// sender's stream.
func (ids *Ledger) Seen(receiver int, id uint64, pos uint64) bool {
	sender, _ := SplitMessageID(id)
	if receiver < 0 || receiver >= len(ids.receivers) || sender >= len(ids.next) {
		return false
	}
	return ids.receivers[receiver].seen(receiver, sender, pos)
}

// receiverLog is one receiver's record of the streams it gets. The stream
// of its own sends (echo, streaming, server push) is kept inline; others
// (fan-out kinds) in a map by sender.
type receiverLog struct {
	mu     sync.Mutex
	self   trail
	others map[int]*trail
}

// trail is what one receiver saw of one sender: a bit per position and
// the highest position seen plus one.
type trail struct {
	seen []uint64
	top  uint64
}

func (l *receiverLog) see(receiver, sender int, pos uint64) Verdict {
	l.mu.Lock()
	defer l.mu.Unlock()
	rt := &l.self
	if sender != receiver {
		if l.others == nil {
			l.others = map[int]*trail{}
		}
		if rt = l.others[sender]; rt == nil {
			rt = &trail{}
			l.others[sender] = rt
		}
	}
	return rt.mark(pos)
}

func (l *receiverLog) seen(receiver, sender int, pos uint64) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	rt := &l.self
	if sender != receiver {
		if rt = l.others[sender]; rt == nil {
			return false
		}
	}
	word, bit := pos/64, uint64(1)<<(pos%64)
	return word < uint64(len(rt.seen)) && rt.seen[word]&bit != 0
}

func (rt *trail) mark(pos uint64) Verdict {
	word, bit := pos/64, uint64(1)<<(pos%64)
	for uint64(len(rt.seen)) <= word {
		rt.seen = append(rt.seen, 0)
	}
	if rt.seen[word]&bit != 0 {
		return Duplicate
	}
	rt.seen[word] |= bit
	if pos+1 < rt.top {
		return Reordered
	}
	rt.top = pos + 1
	return Fresh
}
