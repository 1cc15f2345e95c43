package uistream

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/xbot-runtime/xbot/events"
)

// SetHeaders sets the response headers of a UI message stream (the ones the
// AI SDK's own createUIMessageStreamResponse sends).
func SetHeaders(h http.Header) {
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	h.Set("X-Vercel-Ai-Ui-Message-Stream", "v1")
	h.Set("X-Accel-Buffering", "no") // nginx and similar proxies must not buffer the stream
}

// Sink is where a stream's bytes go: an HTTP response in production.
type Sink interface {
	io.Writer
	// Flush sends what was written to the client.
	Flush() error
	// SetWriteDeadline bounds the next writes; a client that does not
	// accept them in time is dropped.
	SetWriteDeadline(t time.Time) error
}

// HTTPSink adapts an http.ResponseWriter (or a wrapper with Unwrap).
func HTTPSink(w http.ResponseWriter) Sink { return httpSink{w: w, rc: http.NewResponseController(w)} }

type httpSink struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

func (s httpSink) Write(p []byte) (int, error) { return s.w.Write(p) }
func (s httpSink) Flush() error                { return s.rc.Flush() }
func (s httpSink) SetWriteDeadline(t time.Time) error {
	if err := s.rc.SetWriteDeadline(t); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return err
	}
	return nil
}

// frames encodes SSE frames into a buffer.
type frames struct {
	buf bytes.Buffer
	enc *json.Encoder
}

func newFrames() *frames {
	f := &frames{}
	f.enc = json.NewEncoder(&f.buf)
	f.enc.SetEscapeHTML(false)
	return f
}

// chunk appends one chunk as an SSE event with its id.
func (f *frames) chunk(id string, c Chunk) error {
	f.buf.WriteString("id: ")
	f.buf.WriteString(id)
	f.buf.WriteString("\ndata: ")
	if err := f.enc.Encode(c); err != nil { // Encode ends the line
		return fmt.Errorf("encode %s chunk: %w", c.Type, err)
	}
	f.buf.WriteByte('\n')
	return nil
}

// done appends the end-of-stream marker.
func (f *frames) done() { f.buf.WriteString("data: [DONE]\n\n") }

// keepAlive appends an SSE comment, which clients ignore; it keeps proxies
// from closing an idle connection.
func (f *frames) keepAlive() { f.buf.WriteString(": keep-alive\n\n") }

// mapEvent maps e and appends the chunks after from, each with its id
// (prefix + position).
func (f *frames) mapEvent(m *Mapper, e events.Envelope, from Position, prefix string) error {
	cs, err := m.Next(e)
	if err != nil {
		return err
	}
	for i, c := range cs {
		if from.covers(e.Seq, i) {
			continue
		}
		p := Position{Seq: e.Seq, Part: i}
		if i == len(cs)-1 {
			p.Part = AllParts
		}
		if err := f.chunk(prefix+p.String(), c); err != nil {
			return err
		}
	}
	return nil
}

// WriteRun writes the run stream of a run's events (in seq order, from seq
// 1) after position from, exactly as the run stream endpoint serves it,
// ending with [DONE] when the events include the reply's end.
func WriteRun(w io.Writer, evs []events.Envelope, from Position) error {
	if len(evs) == 0 {
		return nil
	}
	m := NewMapper(evs[0].RunID)
	f := newFrames()
	for _, e := range evs {
		if m.Ended() {
			break
		}
		if err := f.mapEvent(m, e, from, ""); err != nil {
			return err
		}
	}
	if m.Ended() {
		f.done()
	}
	_, err := w.Write(f.buf.Bytes())
	return err
}
