package contracttests

import (
	"errors"
	"slices"

	"github.com/xbot-runtime/xbot/services/api/client"
	"github.com/xbot-runtime/xbot/services/api/client/agentruntime"
)

// expected ticks off the next part a pause is due to send.
func (g *grammar) expected(r *grammarState, ch client.Chunk) {
	if len(r.expect) == 0 {
		return
	}
	var got string
	switch ch.Type {
	case client.ChunkApprovalRequest:
		got = ch.Type + ":" + ch.ToolCallID
	case client.ChunkDataInteraction:
		var in client.InteractionPart
		if ch.DataAs(&in) != nil || in.Status != client.InteractionOpen {
			return
		}
		got = ch.Type + ":" + in.InteractionID
	case client.ChunkFinish:
		got = ch.Type + ":" + ch.FinishReason
	default:
		return // other parts may come between (a finish-step)
	}
	if got != r.expect[0] {
		g.fail("the pause sent %s, want %s next", got, r.expect[0])
		return
	}
	r.expect = r.expect[1:]
}

// start checks a start part: the reply's first, or a reopen after a pause,
// with the reply's id as messageId and its metadata.
func (g *grammar) start(id string, r *grammarState, ch client.Chunk) {
	switch {
	case r.seg != segNone && r.seg != segPaused:
		g.fail("reply %s: a start while its message is open or ended", id)
	case ch.MessageID != id:
		g.fail("reply %s: a start with messageId %s", id, ch.MessageID)
	case ch.MessageMetadata == nil || ch.MessageMetadata.ResponseID != id:
		g.fail("reply %s: a start without its response_id in messageMetadata", id)
	case r.seg == segNone && !slices.Equal(ch.MessageMetadata.InputIDs, r.started.InputIDs):
		g.fail("reply %s: start's input_ids %v, ResponseStarted's %v", id, ch.MessageMetadata.InputIDs, r.started.InputIDs)
	case ch.MessageMetadata.Origin != r.started.Origin:
		g.fail("reply %s: start's origin %q, ResponseStarted's %q", id, ch.MessageMetadata.Origin, r.started.Origin)
	}
	r.seg = segOpen
}

// finish checks a finish or abort: a pause's finish (tool-calls) closes the
// message until a start reopens it; any other ends the reply, after an
// error part right before it when the reply failed.
func (g *grammar) finish(id string, r *grammarState, ch client.Chunk) {
	g.inOpen(id, r, ch.Type)
	if ch.Type == client.ChunkFinish && ch.FinishReason == client.FinishToolCalls {
		r.seg, r.waitStat = segPaused, true
		return
	}
	if r.failed && (ch.Type != client.ChunkFinish || r.last != client.ChunkError) {
		g.fail("reply %s failed: its %s does not come right after its error part (after %s)", id, ch.Type, r.last)
	}
	r.seg = segEnding
}

func (g *grammar) inOpen(id string, r *grammarState, typ string) {
	if r.seg != segOpen {
		g.fail("reply %s: a %s part outside start … finish", id, typ)
	}
}

// ends lists how a conversation's replies ended.
func ends(evs []agentruntime.Event) []string {
	var out []string
	for _, ev := range evs {
		if e, ok := ev.(agentruntime.ResponseEnded); ok {
			out = append(out, e.Outcome)
		}
	}
	return out
}

// CheckEvents checks a conversation's runtime client events (from its
// start) against the rules the ChunkGrammar check applies — each reply's
// parts run start … finish, an error part right before a failed reply's
// finish, a pause is InteractionOpened, the tool-approval-request (for an
// approval), the data-interaction and a finish with tool-calls, then
// StatusChanged waiting, and a reopen with the same message id; every input
// a reply answers admitted before it — and returns every problem found.
// Platforms run it on the events they record.
func CheckEvents(evs []agentruntime.Event) error { return errors.Join(checkGrammar(evs)...) }
