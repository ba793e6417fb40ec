package signalrhub

import (
	"sync"
	"sync/atomic"

	"github.com/hubprobe/hubprobe/hub/internal/transport"
	"github.com/hubprobe/hubprobe/signalr"
)

// frame is one encoded hub message on its way to one or more clients. A
// fanned-out message is encoded once and the same frame is queued to every
// receiver; the last writer to finish with it returns it to the pool.
type frame struct {
	b      []byte
	refs   atomic.Int32
	static bool // shared constant (Ping); never pooled
}

var framePool = sync.Pool{New: func() any { return &frame{b: make([]byte, 0, 512)} }}

// newFrame returns an empty frame holding one reference for its creator.
func newFrame() *frame {
	f := framePool.Get().(*frame)
	f.b = f.b[:0]
	f.refs.Store(1)
	return f
}

func staticFrame(b []byte) *frame { return &frame{b: b, static: true} }

func (f *frame) retain() {
	if !f.static {
		f.refs.Add(1)
	}
}

func (f *frame) release() {
	if f.static || f.refs.Add(-1) != 0 {
		return
	}
	if cap(f.b) <= transport.MaxPooledBuffer {
		framePool.Put(f)
	}
}

// encodeFrame encodes m with cd into a fresh frame.
func encodeFrame(cd *codec, m *signalr.Message) (*frame, error) {
	f := newFrame()
	b, err := cd.AppendMessage(f.b, m)
	if err != nil {
		f.release()
		return nil, err
	}
	f.b = b
	return f, nil
}
