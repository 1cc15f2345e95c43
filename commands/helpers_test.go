package commands_test

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/events"
)

const (
	tenant      = "acme"
	otherTenant = "globex"
	agent       = "demo"
)

var (
	actor = events.Actor{Type: "user", ID: "user:42"}
	// parentRun is a valid run id for CreateRun.parentRunId.
	parentRun = events.NewID("run")
	// awaitingItem is the item the paused(awaiting_approval) fixtures wait on.
	awaitingItem = events.NewID("itm")
	revokedGrant = events.NewID("grt")
)

// validPayload returns a payload of type typ that passes Validate for tenant.
func validPayload(typ commands.Type) any {
	switch typ {
	case commands.CreateRun:
		return &commands.CreateRunPayload{
			AgentID: agent, Input: events.UserInput{Content: "Summarise the repository."},
			SandboxKey:  events.SandboxKey{TenantID: tenant, WorkspaceID: "ws-1", AgentID: agent, OwnerID: "user:42"},
			ParentRunID: parentRun, Metadata: map[string]string{"source": "test"},
		}
	case commands.AppendUserInput:
		return &commands.AppendUserInputPayload{Intent: commands.IntentSteer, Content: "Use Go, please.", InteractionID: "ia-1"}
	case commands.CancelRun:
		return &commands.CancelRunPayload{Reason: "user pressed stop"}
	case commands.SubmitApprovalDecision:
		return &commands.SubmitApprovalDecisionPayload{ItemID: awaitingItem, Decision: "allow", Scope: "item", Reason: "looks safe"}
	case commands.RequestCompaction:
		return &commands.RequestCompactionPayload{Reason: "context is long"}
	case commands.RevokePermissionGrant:
		return &commands.RevokePermissionGrantPayload{GrantID: revokedGrant, Reason: "no longer needed"}
	}
	return nil
}

// validEnvelope builds a valid envelope of type typ with commands.New and an
// automatic idempotency key.
func validEnvelope(t testing.TB, typ commands.Type) commands.Envelope {
	t.Helper()
	runID := events.NewID("run")
	if typ == commands.CreateRun {
		runID = commands.RunIDFor(tenant, events.NewID("key"), events.SandboxKey{}, 1)
	}
	return newEnvelope(t, typ, commands.Header{RunID: runID, PlatformSessionID: "ps:1", TenantID: tenant, Actor: actor},
		validPayload(typ))
}

func newEnvelope(t testing.TB, typ commands.Type, h commands.Header, payload any) commands.Envelope {
	t.Helper()
	e, err := commands.New(typ, h, payload)
	if err != nil {
		t.Fatalf("commands.New(%s): %v", typ, err)
	}
	return e
}

// editFn changes an envelope before it is validated.
type editFn func(t *testing.T, e *commands.Envelope)

// envEdit changes envelope fields.
func envEdit(fn func(e *commands.Envelope)) editFn {
	return func(_ *testing.T, e *commands.Envelope) { fn(e) }
}

// payloadEdit decodes the payload as P, lets fn change it and encodes it again.
func payloadEdit[P any](fn func(p *P)) editFn {
	return func(t *testing.T, e *commands.Envelope) {
		t.Helper()
		var p P
		if err := json.Unmarshal(e.Payload, &p); err != nil {
			t.Fatalf("decode payload: %v", err)
		}
		fn(&p)
		raw, err := json.Marshal(&p)
		if err != nil {
			t.Fatalf("encode payload: %v", err)
		}
		e.Payload = raw
	}
}

// rawPayload replaces the payload bytes.
func rawPayload(s string) editFn {
	return envEdit(func(e *commands.Envelope) { e.Payload = json.RawMessage(s) })
}

// checkProblems asserts that err is a *ValidationError naming exactly the
// fields in want (in any order), or that err is nil when want is empty.
func checkProblems(t *testing.T, err error, want []string) {
	t.Helper()
	if len(want) == 0 {
		if err != nil {
			t.Fatalf("want a valid command, got %v", err)
		}
		return
	}
	var ve *commands.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("got %v (%T), want a *commands.ValidationError", err, err)
	}
	got := make([]string, 0, len(ve.Problems))
	for _, p := range ve.Problems {
		got = append(got, p.Field)
		if p.Message == "" {
			t.Errorf("problem %q has no message", p.Field)
		}
		if !strings.Contains(ve.Error(), p.Field+": ") {
			t.Errorf("Error() %q does not name %q", ve.Error(), p.Field)
		}
	}
	want = slices.Clone(want)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("problems name %q, want %q (%v)", got, want, ve)
	}
}
