package agentloop

import (
	"context"
	"fmt"
	"sync"
	"unicode/utf8"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/services/engine/profile"
)

// outputStream coalesces a tool's streamed output into deltas of its item,
// up to the profile's limits.maxStreamedOutputBytes of log per item: the
// deltas' text plus an envelope's worth for each delta, so neither a flood
// nor a trickle of tiny writes adds more than a bounded number of events
// (profile.DeltaEnvelopeBytes).
// Past the cap (or once the run's events used up their budget) output is
// counted, not appended. The item's result still carries the output's
// preview, and the marker delta (see streamCut.marker) says what was left
// out. Output arrives from the process's stdout and stderr concurrently.
type outputStream struct {
	ctx   context.Context
	r     *execution
	id    string
	limit int

	mu        sync.Mutex
	buf       string
	sent      bool // a delta was appended
	lastFlush int64
	text      int   // output bytes streamed (appended or buffered)
	cost      int   // log bytes charged for the appended deltas
	omitted   int64 // output bytes not streamed
	err       error
}

func newOutputStream(ctx context.Context, r *execution, id string) *outputStream {
	return &outputStream{ctx: ctx, r: r, id: id, limit: r.limits.MaxStreamedOutputBytes, lastFlush: nowMs()}
}

func (o *outputStream) write(_, chunk string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.omitted > 0 || o.r.overEventBudget() {
		o.omitted += int64(len(chunk))
		return
	}
	// What is buffered goes out as one delta, whose envelope is charged too.
	if room := o.limit - o.cost - len(o.buf) - profile.DeltaEnvelopeBytes; len(chunk) > room {
		keep := runeCut(chunk, room)
		o.omitted += int64(len(chunk) - keep)
		chunk = chunk[:keep]
	}
	o.buf += chunk
	o.text += len(chunk)
	// The item's first output goes out at once; later output is coalesced.
	if !o.sent || len(o.buf) >= o.r.e.cfg.FlushBytes || nowMs()-o.lastFlush >= o.r.e.cfg.FlushInterval.Milliseconds() {
		o.flushLocked()
	}
}

// runeCut is the longest prefix of s within n bytes that does not split a
// UTF-8 sequence.
func runeCut(s string, n int) int {
	n = max(0, min(n, len(s)))
	for n > 0 && n < len(s) && !utf8.RuneStart(s[n]) {
		n--
	}
	return n
}

// flushLocked appends the buffered output as a delta; nothing waits for its
// commit (the item's closing event does).
func (o *outputStream) flushLocked() {
	if o.buf != "" && o.err == nil {
		o.err = o.r.run.Post(o.ctx, events.Draft{Type: events.ItemDelta, ItemID: o.id,
			Payload: events.ItemDeltaPayload{Delta: o.buf}})
		o.cost += len(o.buf) + profile.DeltaEnvelopeBytes
		o.sent = true
	}
	o.buf, o.lastFlush = "", nowMs()
}

// close appends what is buffered and returns what the stream left out.
func (o *outputStream) close() (streamCut, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.flushLocked()
	return streamCut{streamed: o.text, omitted: o.omitted}, o.err
}

// streamCut is what an item's output stream left out.
type streamCut struct {
	streamed int
	omitted  int64
}

// marker is the truncation marker of an item whose output was not all
// streamed (none when it was): the item's last delta, appended with its
// closing event once the result, and where the full output is stored, is
// known. ref is nil when the output was not offloaded.
func (c streamCut) marker(itemID string, ref *events.OutputRef) []events.Draft {
	if c.omitted == 0 {
		return nil
	}
	where := "the item's closing event has the result"
	if ref != nil {
		where = fmt.Sprintf("the output is stored at %s (%d bytes)", ref.Path, ref.Bytes)
	}
	text := fmt.Sprintf("\n[streaming stopped after %d bytes: %d more bytes were not streamed; %s]\n", c.streamed, c.omitted, where)
	return []events.Draft{{Type: events.ItemDelta, ItemID: itemID,
		Payload: events.ItemDeltaPayload{Delta: text, Truncated: true, OmittedBytes: c.omitted}}}
}
