package commands_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/events"
)

// TestFingerprintIgnoresWhatARetryChanges: a retry gets a new command id,
// time, session id and freshly read session grants; none of them change the
// fingerprint, while the body and the command type do.
func TestFingerprintIgnoresWhatARetryChanges(t *testing.T) {
	t.Parallel()
	st := stateOf(t, "queued")
	first, _ := admitEnvelope(t, st, createSpec(agent), tenant, "k")
	retry := first
	retry.CommandID, retry.IssuedAt, retry.PlatformSessionID = events.NewID("cmd"), first.IssuedAt+5000, "sess-other"
	var p commands.CreateRunPayload
	if err := json.Unmarshal(first.Payload, &p); err != nil {
		t.Fatal(err)
	}
	p.SessionGrants = []events.PermissionGrant{{GrantID: "grt_1", Scope: "platform_session", ToolName: "shell"}}
	retry.Payload, _ = json.Marshal(p)
	if commands.Fingerprint(retry) != commands.Fingerprint(first) {
		t.Errorf("a retry changed the fingerprint")
	}
	other := first
	p.Input.Content = "something else"
	other.Payload, _ = json.Marshal(p)
	if commands.Fingerprint(other) == commands.Fingerprint(first) {
		t.Errorf("another body kept the fingerprint")
	}
	cancel, _ := admitEnvelope(t, st, cancelSpec, tenant, "k")
	compact := cancel
	compact.Type, compact.Payload = commands.RequestCompaction, json.RawMessage(`{"reason":"stop"}`)
	if commands.Fingerprint(cancel) == commands.Fingerprint(compact) {
		t.Errorf("another command type kept the fingerprint")
	}
}

// TestAdmitKeyReusedForAnotherRequest: the same idempotency key with another
// body is rejected idempotency_key_reused; the same body is a duplicate; a
// key recorded before fingerprints were kept stays a duplicate.
func TestAdmitKeyReusedForAnotherRequest(t *testing.T) {
	t.Parallel()
	st := stateOf(t, "running")
	c, p := admitEnvelope(t, st, cancelSpec, tenant, "cancel-fp")
	cmd := events.NewID("cmd")
	st = fold(t, *st, ev{typ: events.CommandAccepted, cmd: cmd, p: events.CommandAcceptedPayload{
		CommandType: "CancelRun", IdempotencyKey: "cancel-fp", Command: c.Payload, Fingerprint: commands.Fingerprint(c)}})
	retry := c
	retry.CommandID = events.NewID("cmd")
	checkDecision(t, admit(t, st, retry, p, opts()), duplicated)
	other, op := admitEnvelope(t, st, cmdSpec{"CancelRun", commands.CancelRun, &commands.CancelRunPayload{Reason: "another reason"}}, tenant, "cancel-fp")
	checkDecision(t, admit(t, st, other, op, opts()), want{events.OutcomeRejected, events.CodeIdempotencyKeyReused})
	legacy := fold(t, *stateOf(t, "running"), ev{typ: events.CommandAccepted, cmd: cmd, p: events.CommandAcceptedPayload{
		CommandType: "CancelRun", IdempotencyKey: "cancel-fp", Command: c.Payload}})
	checkDecision(t, admit(t, legacy, other, op, opts()), duplicated)
}

// TestASessionCommandsFingerprintCoversItsSession: keys are tenant-wide, so
// a session message or interrupt under a used key in another session is
// another request (idempotency_key_reused), in the same session a retry; a
// fingerprint recorded before the session counted still matches a retry.
func TestASessionCommandsFingerprintCoversItsSession(t *testing.T) {
	t.Parallel()
	st := stateOf(t, "running")
	for _, spec := range []cmdSpec{
		{"AppendUserInput", commands.AppendUserInput, &commands.AppendUserInputPayload{Intent: commands.IntentAuto, Content: "hi"}},
		{"CancelRun", commands.CancelRun, &commands.CancelRunPayload{Interrupt: true}},
	} {
		c := newEnvelope(t, spec.typ, commands.Header{RunID: st.RunID, PlatformSessionID: "sess-a", TenantID: tenant,
			Actor: actor, IdempotencyKey: "k-" + spec.name}, spec.payload)
		fp := commands.Fingerprint(c)
		retry, elsewhere := c, c
		retry.CommandID = events.NewID("cmd")
		elsewhere.PlatformSessionID = "sess-b"
		if !commands.SameRequest(fp, retry) || commands.SameRequest(fp, elsewhere) {
			t.Errorf("%s: a retry matches %v, the same key in another session matches %v; want true, false",
				spec.name, commands.SameRequest(fp, retry), commands.SameRequest(fp, elsewhere))
		}
		legacy := strings.TrimPrefix(commands.Fingerprint(noSession(c)), "s1:")
		if !commands.SameRequest(legacy, retry) || !commands.SameRequest(legacy, elsewhere) {
			t.Errorf("%s: a fingerprint recorded before sessions counted no longer matches its retries", spec.name)
		}
	}
	create, _ := admitEnvelope(t, st, createSpec(agent), tenant, "k-create")
	moved := create
	moved.PlatformSessionID = "sess-other"
	if !commands.SameRequest(commands.Fingerprint(create), moved) {
		t.Error("a CreateRun's fingerprint covers its session; a retry may name another")
	}
}

// noSession is c as a legacy fingerprint saw it: its payload and type only.
func noSession(c commands.Envelope) commands.Envelope {
	c.PlatformSessionID = ""
	return c
}

// BenchmarkFingerprint measures the fingerprint of a CreateRun, computed at
// admission for every command.
func BenchmarkFingerprint(b *testing.B) {
	c := validEnvelope(b, commands.CreateRun)
	for b.Loop() {
		_ = commands.Fingerprint(c)
	}
}
