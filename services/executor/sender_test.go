package executor_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/services/engine/profile"
)

// longProfile streams one reply for about 7.5 s, so that commands sent
// while it streams are admitted long before the next before_model_request.
func longProfile() profile.Profile {
	turn := profile.Turn{Text: strings.Repeat("one two three four five six seven eight nine ten ", 20), ChunkChars: 4, Delay: 30 * time.Millisecond}
	return profile.Profile{ID: "long", Model: profile.ModelScripted, Script: []profile.Turn{turn}}
}

func steerBy(t *testing.T, runID, key string, by events.Actor) commands.Envelope {
	t.Helper()
	c, err := commands.New(commands.AppendUserInput, commands.Header{RunID: runID, PlatformSessionID: "sess-1",
		TenantID: "acme", Actor: by, IdempotencyKey: key},
		commands.AppendUserInputPayload{Intent: commands.IntentSteer, Content: "also update the changelog"})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func cancelBy(t *testing.T, runID, key string, by events.Actor) commands.Envelope {
	t.Helper()
	c := cancelRun(t, "acme", runID, key)
	c.Actor = by
	return c
}

// sendRaw produces c without validating it, signed, as a faulty client
// holding the signing key could.
func (h *harness) sendRaw(c commands.Envelope) {
	h.t.Helper()
	raw, err := json.Marshal(c)
	if err != nil {
		h.t.Fatal(err)
	}
	h.produce(c.RunID, raw, h.keys.Sign(c.RunID, raw))
}

// outcome is a runtime.command.* event as the test compares it.
type outcome struct {
	Type  events.Type
	Actor events.Actor
}

// outcomesByCommand returns the runtime.command.* events of runID per command id, in log order.
func outcomesByCommand(t *testing.T, h *harness, runID string) map[string][]outcome {
	t.Helper()
	evs, err := readRun(h, runID)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]outcome{}
	for _, e := range evs {
		if !strings.HasPrefix(string(e.Type), "runtime.command.") {
			continue
		}
		p, err := e.DecodePayload()
		if err != nil {
			t.Fatal(err)
		}
		var a *events.Actor
		switch v := p.(type) {
		case *events.CommandAcceptedPayload:
			a = v.Actor
		case *events.CommandRejectedPayload:
			a = v.Actor
		case *events.CommandAppliedPayload:
			a = v.Actor
		case *events.CommandNoEffectPayload:
			a = v.Actor
		case *events.CommandDuplicatePayload:
			a = v.Actor
		}
		o := outcome{Type: e.Type}
		if a != nil {
			o.Actor = *a
		}
		out[e.CommandID] = append(out[e.CommandID], o)
	}
	return out
}

// TestOutcomesNameTheSender: every outcome of a command names who sent it,
// also the ones recorded after admission: a cancel applied at a safe point,
// and a steer that cancel closes without effect.
func TestOutcomesNameTheSender(t *testing.T) {
	t.Parallel()
	h := newHarness(t, longProfile())
	h.startExecutor("ex1", nil)
	carol, dave := events.Actor{Type: "user", ID: "carol"}, events.Actor{Type: "user", ID: "dave"}
	ops := events.Actor{Type: "service", ID: "ops-bot"}
	c := createRun(t, "acme", "sender-1", "long", "x")
	h.send(c)
	h.waitFor("streaming", func(map[string]events.RunState) bool { return count(h, c.RunID, events.ItemDelta) >= 2 })
	steer, cancel := steerBy(t, c.RunID, "steer-1", carol), cancelBy(t, c.RunID, "cancel-1", dave)
	h.send(steer)
	h.send(cancel)
	h.waitFor("cancelled", statusIs(c.RunID, events.StatusCancelled))
	late, retry := cancelBy(t, c.RunID, "cancel-2", ops), steerBy(t, c.RunID, "steer-1", carol)
	nowhere := steerBy(t, events.NewID("run"), "steer-2", carol)
	for _, cmd := range []commands.Envelope{late, retry, nowhere} {
		h.send(cmd)
	}
	h.waitFor("the late commands' outcomes", func(map[string]events.RunState) bool {
		return count(h, c.RunID, events.CommandDuplicate) == 1 && count(h, c.RunID, events.CommandNoEffect) == 2 &&
			count(h, nowhere.RunID, events.CommandRejected) == 1
	})
	got := outcomesByCommand(t, h, c.RunID)
	for id, os := range outcomesByCommand(t, h, nowhere.RunID) {
		got[id] = os
	}
	want := map[string][]outcome{
		steer.CommandID:   {{events.CommandAccepted, carol}, {events.CommandNoEffect, carol}},
		cancel.CommandID:  {{events.CommandAccepted, dave}, {events.CommandApplied, dave}},
		late.CommandID:    {{events.CommandNoEffect, ops}},
		retry.CommandID:   {{events.CommandDuplicate, carol}},
		nowhere.CommandID: {{events.CommandRejected, carol}},
	}
	for id, w := range want {
		if g := got[id]; !slices.Equal(g, w) {
			t.Errorf("command %s: outcomes %+v, want %+v", id, g, w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("outcomes of %d commands, want %d: %+v", len(got), len(want), got)
	}
}
