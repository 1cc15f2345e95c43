package systemtest_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xbot-runtime/xbot/services/api/client"
	"github.com/xbot-runtime/xbot/services/api/client/agentruntime"
	"github.com/xbot-runtime/xbot/services/engine/profile"
	"github.com/xbot-runtime/xbot/services/stack"
)

// recordRuntimeLogs is where TestRecordRuntimeClientLogs writes the
// protocol logs it records (services/api/client/agentruntime/testdata).
var recordRuntimeLogs = flag.String("record-runtime-logs", "",
	"record the session streams of real conversations into this directory (the runtime client's recorded logs) and exit")

// recording is a conversation TestRecordRuntimeClientLogs records.
type recording struct {
	name, agent string
	drive       func(t *testing.T, c *conv, dir string)
}

// tooler reasons, runs a command, writes and reads a file, then answers.
var tooler = profile.Profile{ID: "tooler", Model: profile.ModelScripted, Tools: allTools, Policy: noPolicy, Script: []profile.Turn{
	{Reasoning: "The user wants notes.", Text: "Let me write the notes.", ToolCalls: []profile.ScriptedCall{
		{Name: "shell", Arguments: `{"command":"echo hi from the sandbox"}`},
		{Name: "write_file", Arguments: `{"path":"notes.md","content":"one\ntwo\n"}`}}},
	{ToolCalls: call1("read_file", `{"path":"notes.md"}`)},
	{Text: "The notes are written."}}}

var recordings = []recording{
	{"text_reply", "demo", func(_ *testing.T, c *conv, _ string) { c.submit("rec-text-1", "hello"); c.idle() }},
	{"tools", "tooler", func(_ *testing.T, c *conv, _ string) { c.submit("rec-tools-1", "write notes"); c.idle() }},
	{"approvals", "conformance-approval", recordApprovals},
	{"question", "conformance-question", func(t *testing.T, c *conv, _ string) {
		c.submit("rec-question-1", "ask me")
		answerNext(t, c, agentruntime.Response{Text: "green"})
		c.idle()
	}},
	{"steer_while_working", "gated", func(t *testing.T, c *conv, dir string) {
		c.submit("rec-steer-1", "start")
		c.until("the command's start", isFrame("tool-input-available"))
		c.submit("rec-steer-2", "and this too")
		releaseCommand(t, workspaceOf(t, dir, "gated"))
		c.idle()
	}},
	{"failed", "conformance-fail", func(_ *testing.T, c *conv, _ string) { c.submit("rec-failed-1", "fail"); c.idle() }},
	{"interrupted", "conformance-slow", func(t *testing.T, c *conv, _ string) {
		c.submit("rec-interrupted-1", "talk")
		c.until("the reply streaming", isFrame("text-delta"))
		interruptConv(t, c, false)
		c.idle()
	}},
	{"interrupt_with_queued_input", "conformance-approval", recordInterruptQueued},
	{"withdrawn", "conformance-approval", func(t *testing.T, c *conv, _ string) {
		c.submit("rec-withdrawn-1", "go")
		c.until("the approval", isEvent[agentruntime.InteractionOpened])
		interruptConv(t, c, true)
		c.idle()
	}},
	{"expired", "conformance-expire", func(_ *testing.T, c *conv, _ string) { c.submit("rec-expired-1", "go"); c.idle() }},
}

func recordApprovals(t *testing.T, c *conv, _ string) {
	c.submit("rec-approvals-1", "first")
	answerNext(t, c, agentruntime.Response{Decision: "allow"})
	c.idle()
	c.submit("rec-approvals-2", "second")
	answerNext(t, c, agentruntime.Response{Decision: "deny", Reason: "not this time"})
	c.idle()
}

func recordInterruptQueued(t *testing.T, c *conv, _ string) {
	c.submit("rec-queued-1", "first")
	c.until("the approval", isEvent[agentruntime.InteractionOpened])
	c.submit("rec-queued-2", "queued behind it")
	interruptConv(t, c, false)
	c.until("the queued input's reply", startedFor("rec-queued-2"))
	answerNext(t, c, agentruntime.Response{Decision: "allow", Scope: "run"})
	c.idle()
}

func answerNext(t *testing.T, c *conv, r agentruntime.Response) {
	t.Helper()
	open := c.until("an interaction", isEvent[agentruntime.InteractionOpened]).(agentruntime.InteractionOpened)
	if err := c.rc.Answer(t.Context(), open.InteractionID, r); err != nil {
		t.Fatal(err)
	}
}

func interruptConv(t *testing.T, c *conv, cancelQueued bool) {
	t.Helper()
	if err := c.rc.Interrupt(t.Context(), cancelQueued); err != nil {
		t.Fatal(err)
	}
}

// TestRecordRuntimeClientLogs records, with -record-runtime-logs DIR, the
// session streams of real conversations — the protocol logs the runtime
// client's mapping tests replay (TestStep1EventMappingFromRecordedLogs) —
// as DIR/<name>.sse. Regenerate the mapping's golden files afterwards with
// go test ./services/api/client/agentruntime -update.
func TestRecordRuntimeClientLogs(t *testing.T) {
	if *recordRuntimeLogs == "" {
		t.Skip("records only with -record-runtime-logs DIR")
	}
	marker, keeperProfile := keeperAgent()
	_, st, dir := conformanceSystemIn(t, gated, tooler, keeperProfile)
	lost := recording{"sandbox_lost", "keeper", func(t *testing.T, c *conv, dir string) {
		c.submit("rec-lost-1", "work")
		deleteSandboxMidCommand(t, dir, marker)
		c.idle()
		c.submit("rec-lost-2", "again")
		c.until("the next reply", startedFor("rec-lost-2"))
		waitSleeping(t, marker)
		killAll(marker)
		c.idle()
	}}
	for _, r := range append(recordings, lost) {
		t.Run(r.name, func(t *testing.T) {
			c := newConv(t, runtimeClient(t, st, "rec-"+r.name, r.agent), nil)
			r.drive(t, c, dir)
			raw := rawSession(t, st, "rec-"+r.name, after(t, c.got[len(c.got)-1].Cursor()))
			path := filepath.Join(*recordRuntimeLogs, r.name+".sse")
			if err := os.WriteFile(path, raw, 0o644); err != nil { //nolint:gosec // a test fixture of the repository
				t.Fatal(err)
			}
		})
	}
}

// rawSession reads the session's stream from its first run's start up to
// the chunk last, as the server sent it.
func rawSession(t *testing.T, st *stack.Stack, session, last string) []byte {
	t.Helper()
	api := apiOf(t, st)
	page, err := api.ListSessionRuns(t.Context(), session, client.RunQuery{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), convWait)
	defer cancel()
	var b strings.Builder
	for ch, err := range api.SessionChunks(ctx, session, client.StreamOptions{After: page.Session.FirstRunID + ":0"}) {
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "id: %s\ndata: %s\n\n", ch.EventID, ch.Raw)
		if ch.EventID == last {
			break
		}
	}
	return []byte(b.String())
}
