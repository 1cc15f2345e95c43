package events_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"testing"

	"github.com/xbot-runtime/xbot/events"
)

// choices hands out the fuzzer's bytes as decisions; once they run out every
// decision is 0, so any input describes a finite log.
type choices struct{ b []byte }

func (c *choices) next() int {
	if len(c.b) == 0 {
		return 0
	}
	v := c.b[0]
	c.b = c.b[1:]
	return int(v)
}

func (c *choices) pick(n int) int { return c.next() % n }

// Payload fields and the values a fuzzed payload may give them: valid ones
// and ones Fold must refuse.
var fuzzVocab = map[string][]any{
	"agentId":        {"demo", ""},
	"pauseReason":    {"awaiting_approval", "awaiting_user_input", "bogus", ""},
	"errorCode":      {"internal", ""},
	"itemType":       {"assistant_message", "reasoning", "command_execution", "clarification_request", ""},
	"status":         {"completed", "truncated", ""},
	"commandType":    {"AppendUserInput", "CancelRun", "SubmitApprovalDecision"},
	"idempotencyKey": {"k1", "k2", ""},
	"decision":       {"allow", "deny"},
	"itemIds":        {[]string{"itm_a"}, []string{}, "x"},
	"delta":          {"He", "", 7},
	"lastSeq":        {1, -1, "x"},
	"position":       {1, 0, 2},
}

var fuzzKeys = []string{"agentId", "pauseReason", "errorCode", "itemType", "status", "commandType",
	"idempotencyKey", "decision", "itemIds", "delta", "lastSeq", "position"}

// essential are the fields Fold requires of a type; a fuzzed payload of the
// type always has them (with a fuzzed, possibly invalid, value).
var essential = map[events.Type][]string{
	events.RunAccepted:          {"agentId", "idempotencyKey"},
	events.RunPaused:            {"pauseReason"},
	events.RunFailed:            {"errorCode"},
	events.ItemStarted:          {"itemType"},
	events.ItemCompleted:        {"status"},
	events.CommandAccepted:      {"commandType", "idempotencyKey"},
	events.CommandApplied:       {"commandType", "idempotencyKey"},
	events.CommandRejected:      {"commandType", "idempotencyKey"},
	events.CommandNoEffect:      {"commandType", "idempotencyKey"},
	events.ItemAwaitingApproval: {"itemType"},
	events.RunQueued:            {"position"},
}

const fuzzRun = "run_01J8XK8A1B2C3D4E5F6G7H8J9K"

// candidate reads the next event to try on s: per event the bytes are type,
// flags (bits 0-2 payload form: 6 raw bytes, 7 none, else fields; bits 3-5
// seq: 6 repeat, 7 skip one, else next; bits 6-7 both set: another run),
// item, command, one value per essential field, a count of extra fields and
// a key and value per extra field.
func candidate(c *choices, s events.RunState) events.Envelope {
	cat := events.Catalog()
	typ := cat[c.pick(len(cat))]
	flags := c.next()
	e := events.Envelope{EventID: events.DerivedID("evt", fuzzRun, string(rune(s.LastSeq))), RunID: fuzzRun,
		Seq: s.LastSeq + 1, SchemaVersion: events.SchemaVersion, Type: typ, OccurredAt: 1 + s.LastSeq,
		TenantID: "acme", ItemID: []string{"", "itm_a", "itm_b", "itm_c"}[c.pick(4)],
		CommandID: []string{"", "cmd_a", "cmd_b"}[c.pick(3)]}
	switch flags >> 3 & 7 {
	case 6:
		e.Seq--
	case 7:
		e.Seq++
	}
	if flags>>6 == 3 {
		e.RunID = "run_other"
	}
	switch flags & 7 {
	case 6:
		n := c.pick(16)
		raw := make([]byte, 0, n)
		for range n {
			raw = append(raw, byte(c.next()))
		}
		e.Payload = raw
	case 7:
	default:
		e.Payload = fuzzPayload(c, typ)
	}
	return e
}

// fuzzPayload builds the JSON text by hand: map encoding sorts keys from a
// random iteration order, which would make coverage vary between runs of one
// input and stall the fuzzer's minimization.
func fuzzPayload(c *choices, typ events.Type) json.RawMessage {
	var b bytes.Buffer
	field := func(k string) {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		v, err := json.Marshal(fuzzVocab[k][c.pick(len(fuzzVocab[k]))])
		if err != nil {
			panic(err) // only vocabulary values are encoded
		}
		b.WriteString(strconv.Quote(k) + ":" + string(v))
	}
	for _, k := range essential[typ] {
		field(k)
	}
	for range c.pick(3) {
		field(fuzzKeys[c.pick(len(fuzzKeys))])
	}
	return json.RawMessage("{" + b.String() + "}")
}

// step encodes one candidate for a seed: type, default flags, item and
// command indexes, then vals for the essential fields and no extras.
func step(typ events.Type, item, cmd int, vals ...byte) []byte {
	idx := 0
	for i, t := range events.Catalog() {
		if t == typ {
			idx = i
		}
	}
	return append(append([]byte{byte(idx), 0, byte(item), byte(cmd)}, vals...), 0)
}

func seed(steps ...[]byte) []byte {
	var out []byte
	for _, s := range steps {
		out = append(out, s...)
	}
	return out
}

// FuzzFold folds fuzzed events from the empty state. Fold never panics and
// never changes its input; a refused event leaves the state as it was with a
// typed error; an accepted one advances LastSeq by exactly one, moves the
// status only as its type says, never leaves a terminal status, never ends a
// run with an open item, and cannot be folded a second time. Folding the
// accepted events again gives the same state.
func FuzzFold(f *testing.F) {
	f.Add([]byte{})
	accept := step(events.RunAccepted, 0, 1, 0, 0)
	f.Add(seed(accept, step(events.RunStarted, 0, 0),
		step(events.ItemStarted, 1, 0, 0), step(events.ItemDelta, 1, 0), step(events.ItemCompleted, 1, 0, 0),
		step(events.RunCompleted, 0, 0)))
	f.Add(seed(accept, step(events.RunStarted, 0, 0),
		step(events.ItemStarted, 2, 0, 2), step(events.ItemAwaitingApproval, 2, 0, 2), step(events.RunPaused, 0, 0, 0),
		step(events.CommandAccepted, 0, 2, 2, 1), step(events.ApprovalDecisionSubmitted, 2, 2),
		step(events.CommandApplied, 0, 2, 2, 1), step(events.RunResumed, 0, 0), step(events.ItemFailed, 2, 0),
		step(events.RunFailed, 0, 0, 0), step(events.CommandRejected, 0, 1, 1, 1)))
	// A paused run resumed while its sandbox key is taken waits queued,
	// then resumes; a run that never ran waits queued, then starts.
	f.Add(seed(accept, step(events.RunQueued, 0, 0, 2), step(events.RunQueued, 0, 0, 0), step(events.RunStarted, 0, 0),
		step(events.RunPaused, 0, 0, 1), step(events.CommandAccepted, 0, 2, 0, 1), step(events.RunQueued, 0, 2, 0),
		step(events.RunStarted, 0, 0), step(events.RunResumed, 0, 0), step(events.RunCompleted, 0, 0)))
	f.Add(seed(accept, step(events.CommandAccepted, 0, 2, 1, 1),
		step(events.RunCancelled, 0, 0), step(events.CommandNoEffect, 0, 2, 1, 1), step(events.RunStarted, 0, 0)))
	f.Add([]byte{0, 0x3f, 0, 0, 0, 0, 0, 0x07, 0, 0, 0, 0x06, 0, 0, 5, '{', '"', 'a', '"', ':'})
	f.Fuzz(func(t *testing.T, data []byte) {
		c := &choices{b: data}
		var s events.RunState
		var log []events.Envelope
		for i := 0; i < 64 && len(c.b) > 0; i++ {
			e := candidate(c, s)
			n, ok := checkFold(t, s, e)
			if ok {
				s, log = n, append(log, e)
			}
		}
		again, err := events.FoldAll(events.RunState{}, log)
		if err != nil || !reflect.DeepEqual(again, s) {
			t.Fatalf("refolding the accepted log: %v\n%+v\n%+v", err, again, s)
		}
	})
}

// checkFold folds e onto s and checks the properties of one step.
func checkFold(t *testing.T, s events.RunState, e events.Envelope) (events.RunState, bool) {
	t.Helper()
	before := normalized(*s.Clone())
	n, err := events.Fold(s, e)
	if !reflect.DeepEqual(normalized(s), before) {
		t.Fatalf("Fold changed its input state:\n%+v\n%+v", before, s)
	}
	if err != nil {
		checkRefused(t, s, e, n, err)
		return s, false
	}
	checkAccepted(t, s, e, n)
	return n, true
}

func checkRefused(t *testing.T, s events.RunState, e events.Envelope, n events.RunState, err error) {
	t.Helper()
	if !reflect.DeepEqual(n, s) {
		t.Fatalf("refused %s (%v) but returned a different state:\n%+v\n%+v", e.Type, err, s, n)
	}
	var gap *events.SeqGapError
	if e.Seq != s.LastSeq+1 {
		if !errors.As(err, &gap) || gap.Expected != s.LastSeq+1 || gap.Actual != e.Seq {
			t.Fatalf("seq %d after %d: want a SeqGapError, got %v", e.Seq, s.LastSeq, err)
		}
		return
	}
	var ill *events.IllegalTransitionError
	var pe *events.PayloadError
	if !errors.As(err, &ill) && !errors.As(err, &pe) && !errors.Is(err, events.ErrUnknownType) {
		t.Fatalf("refused %s with an untyped error: %v", e.Type, err)
	}
}

func checkAccepted(t *testing.T, s events.RunState, e events.Envelope, n events.RunState) {
	t.Helper()
	if n.LastSeq != s.LastSeq+1 || n.RunID != e.RunID {
		t.Fatalf("accepted seq %d run %s: state has seq %d run %s", e.Seq, e.RunID, n.LastSeq, n.RunID)
	}
	if !events.Allowed(s.Status, e.Type) {
		t.Fatalf("accepted %s in state %s, which Allowed refuses", e.Type, s.CurrentStatus())
	}
	want := s.Status
	if to, ok := events.StatusAfter(e.Type); ok {
		want = to
	}
	if n.Status != want || !n.CurrentStatus().Valid() {
		t.Fatalf("%s moved %s to %q, want %q", e.Type, s.CurrentStatus(), n.Status, want)
	}
	if s.Status.Terminal() && n.Status != s.Status {
		t.Fatalf("%s left terminal state %s for %s", e.Type, s.Status, n.Status)
	}
	if n.Status.Terminal() && len(n.OpenItems()) > 0 {
		t.Fatalf("run ended %s with open items %+v", n.Status, n.OpenItems())
	}
	checkUnique(t, n)
	var gap *events.SeqGapError
	if again, err := events.Fold(n, e); !errors.As(err, &gap) || !reflect.DeepEqual(again, n) {
		t.Fatalf("folding seq %d twice: want a SeqGapError, got %v", e.Seq, err)
	}
}

// normalized is s with empty slices and maps made nil (Clone and Fold may
// change one into the other), so reflect.DeepEqual compares meaning.
func normalized(s events.RunState) events.RunState {
	if len(s.Commands) == 0 {
		s.Commands = nil
	}
	if len(s.Pending) == 0 {
		s.Pending = nil
	}
	if s.Items.Len() == 0 {
		s.Items = events.ItemList{}
	}
	return s
}

// checkUnique checks that item ids and pending command ids are unique.
func checkUnique(t *testing.T, n events.RunState) {
	t.Helper()
	seen := map[string]bool{}
	for it := range n.Items.All() {
		if seen["item "+it.ID] {
			t.Fatalf("item %s twice in %+v", it.ID, n.Items)
		}
		seen["item "+it.ID] = true
	}
	for _, p := range n.Pending {
		if seen["cmd "+p.CommandID] {
			t.Fatalf("command %s pending twice in %+v", p.CommandID, n.Pending)
		}
		seen["cmd "+p.CommandID] = true
	}
}
