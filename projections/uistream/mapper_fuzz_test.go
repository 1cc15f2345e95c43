package uistream_test

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/projections/uistream"
)

// choices hands out the fuzzer's bytes as decisions; once they run out every
// decision is 0.
type choices struct{ b []byte }

func (c *choices) pick(n int) int {
	if len(c.b) == 0 {
		return 0
	}
	v := c.b[0]
	c.b = c.b[1:]
	return int(v) % n
}

// fuzzFields are the payload fields a fuzzed event may carry, with the
// values it may give them (JSON text), valid and invalid alike.
var fuzzFields = []struct {
	key  string
	vals []string
}{
	{"itemType", []string{`"assistant_message"`, `"reasoning"`, `"command_execution"`, `"clarification_request"`, `"file_change"`, `"plan"`, `"user_message"`}},
	{"agentId", []string{`"a"`}},
	{"pauseReason", []string{`"awaiting_approval"`, `"awaiting_user_input"`}},
	{"errorCode", []string{`"internal"`, `"expired"`}},
	{"commandType", []string{`"AppendUserInput"`, `"SubmitApprovalDecision"`, `"CancelRun"`}},
	{"idempotencyKey", []string{`"k1"`, `"follow_up:cmd_a"`}},
	{"delta", []string{`"He"`, `"llo"`, `""`, `"<&>\u2028"`}},
	{"content", []string{`"Hello"`, `"He"`, `""`, `"x"`}},
	{"status", []string{`"completed"`, `"truncated"`}},
	{"decision", []string{`"allow"`, `"deny"`}},
	{"itemIds", []string{`["itm_a"]`, `["itm_b","itm_c"]`}},
	{"data", []string{`{"toolName":"shell","arguments":"{\"command\":\"ls\"}","question":"Which?"}`,
		`{"arguments":"{bad"}`, `{"finishReason":"length","usage":{"promptTokens":1,"completionTokens":2,"totalTokens":3}}`,
		`{"output":"ok","fileChange":{"path":"a.md","diff":"+a","bytes":2}}`, `7`}},
	{"toolName", []string{`"shell"`, `""`}},
	{"input", []string{`{"command":"rm"}`, `"raw"`}},
	{"reason", []string{`"user"`, `""`}},
	{"createdRunId", []string{`"run_x"`, `""`}},
	{"message", []string{`"boom"`, `""`}},
}

const fuzzRun = "run_01J0000000000000000000000F"

// candidate reads an event of run fuzzRun at seq: type, item, command, a
// field count and per field its index and value.
func candidate(c *choices, seq int64) events.Envelope {
	cat := events.Catalog()
	e := events.Envelope{EventID: "evt_" + strconv.FormatInt(seq, 10), RunID: fuzzRun, Seq: seq,
		SchemaVersion: events.SchemaVersion, Type: cat[c.pick(len(cat))], OccurredAt: 1000 * seq, EmittedAt: 1000 * seq,
		TenantID: "acme", ItemID: []string{"", "itm_a", "itm_b", "itm_c"}[c.pick(4)],
		CommandID: []string{"", "cmd_a", "cmd_b", events.DerivedID("cmd", "follow_up", "cmd_a")}[c.pick(4)]}
	var parts []string
	for range c.pick(5) {
		f := fuzzFields[c.pick(len(fuzzFields))]
		parts = append(parts, strconv.Quote(f.key)+":"+f.vals[c.pick(len(f.vals))])
	}
	e.Payload = json.RawMessage("{" + strings.Join(parts, ",") + "}")
	return e
}

// fuzzLog folds candidates and keeps the ones Fold accepts: a log the
// executor could have written.
func fuzzLog(data []byte) []events.Envelope {
	c := &choices{b: data}
	var st events.RunState
	var log []events.Envelope
	for tries := 0; tries < 200 && len(log) < 40 && len(c.b) > 0; tries++ {
		e := candidate(c, st.LastSeq+1)
		if n, err := events.Fold(st, e); err == nil {
			st, log = n, append(log, e)
		}
	}
	return log
}

// fuzzSeed encodes a log for fuzzLog: per event type index, item, command,
// and fields as (index, value) pairs.
func fuzzSeed(evs ...[]int) []byte {
	var out []byte
	for _, e := range evs {
		for _, v := range e {
			out = append(out, byte(v))
		}
	}
	return out
}

// FuzzWriteRun maps fuzzed fold-valid logs. Rendering is deterministic;
// every chunk carries only the fields its type declares; mapping event by
// event gives the bytes of mapping the whole log; resuming at any id gives
// exactly the rest of the stream; ids go up in the "N.i … N" pattern; no
// text or reasoning delta comes outside its start and end, no tool chunk
// before its tool-input-start, no chunk outside an open message; [DONE]
// ends the stream exactly when the log holds the run's end.
func FuzzWriteRun(f *testing.F) {
	// Catalog indexes: 0 accepted, 1 started, 2 paused, 3 resumed, 4 completed, 5 failed, 6 cancelled,
	// 9 command.accepted, 11 applied, 14 item.started, 15 delta, 16 completed, 17 failed, 18 awaiting, 19 decision.
	f.Add(fuzzSeed([]int{0, 0, 1, 1, 1, 0}, []int{1, 0, 0, 0}, []int{14, 1, 0, 1, 0, 0}, []int{15, 1, 0, 1, 6, 0},
		[]int{15, 1, 0, 1, 6, 1}, []int{16, 1, 0, 2, 0, 0, 7, 0}, []int{4, 0, 0, 0}))
	f.Add(fuzzSeed([]int{0, 0, 1, 1, 1, 0}, []int{1, 0, 0, 0}, []int{14, 1, 0, 1, 0, 1}, []int{15, 1, 0, 1, 6, 0},
		[]int{17, 1, 0, 1, 0, 1}, []int{14, 2, 0, 2, 0, 2, 11, 0}, []int{18, 2, 0, 2, 0, 2, 12, 0},
		[]int{2, 0, 0, 2, 2, 0, 10, 0}, []int{9, 0, 1, 2, 4, 1, 5, 0}, []int{19, 2, 1, 1, 9, 1},
		[]int{11, 0, 1, 2, 4, 1, 5, 0}, []int{3, 0, 0, 0}, []int{17, 2, 0, 1, 0, 2}, []int{5, 0, 0, 1, 3, 0}))
	f.Add(fuzzSeed([]int{0, 0, 3, 3, 1, 0, 5, 1, 16, 0}, []int{1, 0, 0, 0}, []int{14, 3, 0, 2, 0, 3, 11, 0},
		[]int{2, 0, 0, 2, 2, 1, 10, 1}, []int{6, 0, 0, 1, 14, 0}))
	f.Fuzz(func(t *testing.T, data []byte) {
		evs := fuzzLog(data)
		if len(evs) == 0 {
			return
		}
		whole := render(t, evs, uistream.Position{})
		if again := render(t, evs, uistream.Position{}); !bytes.Equal(again, whole) {
			t.Fatalf("two renderings differ:\n%s\n---\n%s", whole, again)
		}
		checkChunks(t, whole)
		if byEvent := stripComments(annotated(t, evs)); !bytes.Equal(byEvent, whole) {
			t.Fatalf("event by event:\n%s\n---\nwhole:\n%s", byEvent, whole)
		}
		frames := checkFrames(t, evs, whole)
		for i := 0; i < len(frames); i += 1 + len(frames)/4 {
			pos, err := uistream.ParsePosition(frames[i].id)
			if err != nil {
				t.Fatal(err)
			}
			want := whole[len(strings.Join(frameTexts(frames[:i+1]), "")):]
			if got := render(t, evs, pos); !bytes.Equal(got, want) {
				t.Fatalf("resumed after %s:\n%s\n---\nwant:\n%s", frames[i].id, got, want)
			}
		}
	})
}

func render(t *testing.T, evs []events.Envelope, from uistream.Position) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := uistream.WriteRun(&b, evs, from); err != nil {
		t.Fatalf("WriteRun of a fold-valid log: %v", err)
	}
	return b.Bytes()
}

// frame is one SSE event of a run stream; [DONE] has no id.
type frame struct {
	id, text string
	chunk    map[string]any
}

func frameTexts(fs []frame) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.text
	}
	return out
}

// checkFrames splits a stream into frames and checks ids, [DONE] and chunk order.
func checkFrames(t *testing.T, evs []events.Envelope, sse []byte) []frame {
	t.Helper()
	var fs []frame
	for _, text := range strings.SplitAfter(string(sse), "\n\n") {
		if text == "" {
			continue
		}
		f := frame{text: text}
		for _, l := range strings.Split(strings.TrimSuffix(text, "\n\n"), "\n") {
			if id, ok := strings.CutPrefix(l, "id: "); ok {
				f.id = id
			} else if d, ok := strings.CutPrefix(l, "data: "); ok && d != "[DONE]" {
				if err := json.Unmarshal([]byte(d), &f.chunk); err != nil {
					t.Fatalf("frame %q: %v", text, err)
				}
			}
		}
		fs = append(fs, f)
	}
	ended := false
	for _, e := range evs {
		if to, ok := events.StatusAfter(e.Type); ok && to.Terminal() {
			ended = true
		}
	}
	if done := len(fs) > 0 && fs[len(fs)-1].text == doneFrame; done != ended {
		t.Fatalf("[DONE] at the end is %v, the log ends the run %v:\n%s", done, ended, sse)
	}
	if ended {
		fs = fs[:len(fs)-1]
	}
	checkIDs(t, fs)
	checkOrder(t, fs)
	return fs
}

// checkIDs checks that each event's chunks have ids N.0 … N.k-1 then N, in
// increasing N.
func checkIDs(t *testing.T, fs []frame) {
	t.Helper()
	var lastSeq int64
	part := 0
	for _, f := range fs {
		seqText, partText, hasPart := strings.Cut(f.id, ".")
		seq, err := strconv.ParseInt(seqText, 10, 64)
		if err != nil || f.chunk == nil {
			t.Fatalf("frame %q has no seq id or no chunk", f.text)
		}
		if seq != lastSeq {
			if seq < lastSeq {
				t.Fatalf("id %s after seq %d", f.id, lastSeq)
			}
			lastSeq, part = seq, 0
		} else if part < 0 {
			t.Fatalf("id %s after the last chunk of seq %d", f.id, seq)
		}
		if !hasPart {
			part = -1
			continue
		}
		if p, err := strconv.Atoi(partText); err != nil || p != part {
			t.Fatalf("id %s, want part %d", f.id, part)
		}
		part++
	}
	if part > 0 {
		t.Fatalf("seq %d's chunks do not end with id %d", lastSeq, lastSeq)
	}
}

// checkOrder checks that parts open before they stream or end and that no
// chunk arrives while the message is closed.
func checkOrder(t *testing.T, fs []frame) {
	t.Helper()
	open := false
	parts := map[string]string{} // part id → "open" / "ended"
	tools := map[string]bool{}
	for _, f := range fs {
		typ, _ := f.chunk["type"].(string)
		id, _ := f.chunk["id"].(string)
		call, _ := f.chunk["toolCallId"].(string)
		if typ == "data-status" {
			continue // transient, sent whether or not the message is open (status.go)
		}
		if typ == "start" {
			if open {
				t.Fatalf("start while the message is open: %s", f.text)
			}
			open = true
			continue
		}
		if !open {
			t.Fatalf("%s outside an open message", f.text)
		}
		switch {
		case typ == "finish" || typ == "abort":
			open = false
		case strings.HasSuffix(typ, "-start") && (strings.HasPrefix(typ, "text") || strings.HasPrefix(typ, "reasoning")):
			if parts[id] != "" {
				t.Fatalf("%s: part %s already %s", f.text, id, parts[id])
			}
			parts[id] = "open"
		case strings.HasSuffix(typ, "-delta") || strings.HasSuffix(typ, "-end"):
			if parts[id] != "open" {
				t.Fatalf("%s: part %s is not open (%q)", f.text, id, parts[id])
			}
			if strings.HasSuffix(typ, "-end") {
				parts[id] = "ended"
			}
		case typ == "tool-input-start":
			tools[call] = true
		case strings.HasPrefix(typ, "tool-") && !tools[call]:
			t.Fatalf("%s before its tool-input-start", f.text)
		}
	}
}
