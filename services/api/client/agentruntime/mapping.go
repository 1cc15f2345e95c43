package agentruntime

import (
	"slices"
	"strings"

	"github.com/xbot-runtime/xbot/services/api/client"
)

// eventKey is the "<runId>:<seq>" of a session stream chunk id
// ("<runId>:<seq>" or "<runId>:<seq>.<i>") and whether the chunk is the
// last of its event's chunks (the one without ".<i>").
func eventKey(id string) (key string, last bool) {
	run, pos, _ := strings.Cut(id, ":")
	seq, _, hasPart := strings.Cut(pos, ".")
	return run + ":" + seq, !hasPart
}

// mapper maps the chunks of one log event of a session stream to the
// contract's events. It is a pure function of the state before the chunks
// and the chunks, which is what makes cursors deterministic: the same
// chunks after the same position always give the same events.
type mapper struct {
	st  mapState
	out []Event
	// opened are the InteractionOpened of the chunks, placed before their
	// parts; openAt is where (after a ResponseStarted of the same chunks).
	opened []Event
	openAt int
	// errText is the text of the error chunk of a failed reply.
	errText string
}

// mapChunks returns the events of one log event's chunks and the state
// after them.
func mapChunks(st mapState, chunks []client.Chunk) ([]Event, mapState) {
	m := &mapper{st: st.clone()}
	for _, ch := range chunks {
		m.chunk(ch)
	}
	out := slices.Insert(m.out, m.openAt, m.opened...)
	return out, m.st
}

func (m *mapper) chunk(ch client.Chunk) {
	switch ch.Type {
	case client.ChunkStart:
		m.start(ch)
	case client.ChunkMessageMetadata:
		m.admit(ch.MessageMetadata)
		m.output(ch)
	case client.ChunkError:
		m.errText = ch.ErrorText
		m.output(ch)
	case client.ChunkFinish:
		m.output(ch)
		if ch.FinishReason != client.FinishToolCalls {
			m.end(ch.MessageMetadata, "")
		}
	case client.ChunkAbort:
		m.output(ch)
		m.end(nil, ch.Reason)
	case client.ChunkDataInteraction:
		m.interaction(ch)
	case client.ChunkDataStatus:
		m.status(ch)
	default:
		m.output(ch)
	}
}

// start begins a reply, or reopens the open one (the same messageId after
// a pause).
func (m *mapper) start(ch client.Chunk) {
	if ch.MessageID != m.st.Response {
		m.st.Response, m.st.Inputs = ch.MessageID, nil
		meta := ch.MessageMetadata
		if meta == nil {
			meta = &client.MessageMetadata{}
		}
		m.admit(meta)
		m.out = append(m.out, ResponseStarted{ResponseID: ch.MessageID, Origin: meta.Origin, InputIDs: slices.Clone(meta.InputIDs)})
		m.openAt = len(m.out)
	} else {
		m.admit(ch.MessageMetadata)
	}
	m.output(ch)
}

// admit reports the input ids of a reply's metadata that it has not
// reported yet.
func (m *mapper) admit(meta *client.MessageMetadata) {
	if meta == nil {
		return
	}
	for _, id := range meta.InputIDs {
		if !slices.Contains(m.st.Inputs, id) {
			m.st.Inputs = append(m.st.Inputs, id)
			m.out = append(m.out, InputAdmitted{InputID: id})
		}
	}
}

// output forwards a browser part: of the open reply, or, outside any reply,
// as output of no reply (an empty response id), which still reaches the
// browser — a RuntimeDiagnostic never does.
func (m *mapper) output(ch client.Chunk) {
	m.out = append(m.out, ResponseOutput{ResponseID: m.st.Response, Frame: ch.Raw})
}
