package webpubsub

import (
	"encoding/base64"
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"testing"
)

// probePayload is shaped like the payload hubprobe's scenarios send: a run
// id, a random blob of size bytes and a timestamp.
func probePayload(size int) []byte {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	r := rand.New(rand.NewPCG(1, 2))
	blob := make([]byte, size)
	for i := range blob {
		blob[i] = alphabet[r.IntN(len(alphabet))]
	}
	p := []byte(`{"payload.Run":"7f3a9c1e","payload.MessageBlob":"`)
	p = append(p, blob...)
	p = strconv.AppendInt(append(p, `","payload.Timestamp":`...), 1767225600123456, 10)
	return append(p, '}')
}

// wireFrame is what a plain encoding/json codec of the same frames looks
// like; the benchmarks compare against it.
type wireFrame struct {
	Type              string          `json:"type"`
	From              string          `json:"from,omitempty"`
	Group             string          `json:"group,omitempty"`
	Event             string          `json:"event,omitempty"`
	AckID             *uint64         `json:"ackId,omitempty"`
	NoEcho            bool            `json:"noEcho,omitempty"`
	Success           *bool           `json:"success,omitempty"`
	Error             *AckError       `json:"error,omitempty"`
	FromUserID        string          `json:"fromUserId,omitempty"`
	SequenceID        uint64          `json:"sequenceId,omitempty"`
	DataType          string          `json:"dataType,omitempty"`
	Data              json.RawMessage `json:"data,omitempty"`
	UserID            string          `json:"userId,omitempty"`
	ConnectionID      string          `json:"connectionId,omitempty"`
	ReconnectionToken string          `json:"reconnectionToken,omitempty"`
	Message           string          `json:"message,omitempty"`
}

// decodeWithEncodingJSON decodes as the encoding/json codec would, data
// types included.
func decodeWithEncodingJSON(b []byte) (wireFrame, []byte, error) {
	var w wireFrame
	if err := json.Unmarshal(b, &w); err != nil {
		return w, nil, err
	}
	switch w.DataType {
	case "text":
		var s string
		err := json.Unmarshal(w.Data, &s)
		return w, []byte(s), err
	case "binary":
		var s string
		if err := json.Unmarshal(w.Data, &s); err != nil {
			return w, nil, err
		}
		data, err := base64.StdEncoding.DecodeString(s)
		return w, data, err
	}
	return w, w.Data, nil
}

func groupMessageFrame(b *testing.B, size int) []byte {
	f := Frame{Kind: KindGroupMessage, Group: "group-0007", FromUserID: "user-0042",
		SequenceID: 123456, Data: probePayload(size)}
	frame, err := AppendFrame(nil, &f)
	if err != nil {
		b.Fatal(err)
	}
	return frame
}

func BenchmarkDecodeGroupMessage(b *testing.B) {
	for _, size := range []int{16, 2048} {
		frame := groupMessageFrame(b, size)
		b.Run("webpubsub/"+strconv.Itoa(size), func(b *testing.B) {
			var d Decoder
			var f Frame
			b.SetBytes(int64(len(frame)))
			b.ReportAllocs()
			for b.Loop() {
				if err := d.Decode(frame, &f); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("encoding-json/"+strconv.Itoa(size), func(b *testing.B) {
			b.SetBytes(int64(len(frame)))
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := decodeWithEncodingJSON(frame); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkDecodeAck(b *testing.B) {
	frame := []byte(`{"type":"ack","ackId":123456,"success":true}`)
	b.Run("webpubsub", func(b *testing.B) {
		var d Decoder
		var f Frame
		b.ReportAllocs()
		for b.Loop() {
			if err := d.Decode(frame, &f); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, _, err := decodeWithEncodingJSON(frame); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkEncodeSendToGroup(b *testing.B) {
	for _, size := range []int{16, 2048} {
		payload := probePayload(size)
		b.Run("webpubsub/"+strconv.Itoa(size), func(b *testing.B) {
			f := Frame{Kind: KindSendToGroup, Group: "group-0007", AckID: 99, HasAckID: true, NoEcho: true, Data: payload}
			var buf []byte
			b.ReportAllocs()
			for b.Loop() {
				var err error
				if buf, err = AppendFrame(buf[:0], &f); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("encoding-json/"+strconv.Itoa(size), func(b *testing.B) {
			ackID := uint64(99)
			w := wireFrame{Type: "sendToGroup", Group: "group-0007", AckID: &ackID, NoEcho: true, DataType: "json", Data: payload}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := json.Marshal(&w); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
