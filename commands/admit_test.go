package commands_test

import (
	"fmt"
	"testing"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/events"
)

// matrixColumns are the commands of the admission matrix, in its column order.
func matrixColumns() []cmdSpec {
	return []cmdSpec{createSpec(agent), cancelSpec, inputSpec(commands.IntentSteer), inputSpec(commands.IntentFollowUp),
		inputSpec(commands.IntentClarification), approveSpec(awaitingItem), compactSpec}
}

// matrix is the expected decision per state and command when the engine
// implements everything.
var matrix = []struct {
	state string
	//          CreateRun, CancelRun, steer, follow_up, clarification, approval, compaction
	want [7]want
}{
	{"nonexistent", [7]want{accepted, notFound, notFound, notFound, notFound, notFound, notFound}},
	{"queued", [7]want{exists, applied, badState, badState, badState, badState, badState}},
	{"running", [7]want{exists, accepted, accepted, badState, badState, badState, accepted}},
	{"running/cancel pending", [7]want{exists, noEffect, accepted, badState, badState, badState, accepted}},
	{"running/item awaiting approval", [7]want{exists, accepted, accepted, badState, badState, badState, accepted}},
	{"paused/awaiting_approval", [7]want{exists, applied, badState, badState, badState, applied, accepted}},
	{"paused/awaiting_user_input", [7]want{exists, applied, badState, badState, accepted, badState, accepted}},
	{"paused/awaiting_user_input with an item awaiting approval", [7]want{exists, applied, badState, badState, accepted, badState, accepted}},
	{"paused/awaiting_external_tool_result", [7]want{exists, applied, badState, badState, badState, badState, accepted}},
	{"completed", [7]want{exists, noEffect, badState, applied, badState, badState, badState}},
	{"failed", [7]want{exists, noEffect, badState, applied, badState, badState, badState}},
	{"cancelled", [7]want{exists, noEffect, badState, applied, badState, badState, badState}},
	{"expired", [7]want{exists, noEffect, badState, applied, badState, badState, badState}},
}

func TestAdmitMatrix(t *testing.T) {
	t.Parallel()
	if len(matrix) != len(fixtures) {
		t.Fatalf("matrix has %d states, fixtures %d", len(matrix), len(fixtures))
	}
	for _, row := range matrix {
		for i, spec := range matrixColumns() {
			t.Run(row.state+"/"+spec.name, func(t *testing.T) {
				t.Parallel()
				st := stateOf(t, row.state)
				c, p := admitEnvelope(t, st, spec, tenant, "")
				checkDecision(t, admit(t, st, c, p, opts(allFeatures...)), row.want[i])
			})
		}
	}
}

// TestAdmit covers agents, unimplemented features and the rules the matrix
// does not reach.
func TestAdmit(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		state    string
		spec     cmdSpec
		features []string
		want     want
	}{
		{"unknown agent", "nonexistent", createSpec("ghost"), allFeatures, badAgent},
		{"existing run beats unknown agent", "running", createSpec("ghost"), allFeatures, exists},
		{"create needs no feature", "nonexistent", createSpec(agent), nil, accepted},
		{"cancel needs no feature/running", "running", cancelSpec, nil, accepted},
		{"cancel needs no feature/queued", "queued", cancelSpec, nil, applied},
		{"steer not implemented", "running", inputSpec(commands.IntentSteer), nil, notImpl},
		{"steer implemented", "running", inputSpec(commands.IntentSteer), []string{featSteer}, accepted},
		{"steer needs its own feature", "running", inputSpec(commands.IntentSteer), []string{featFollowUp, featClarification}, notImpl},
		{"steer while paused", "paused/awaiting_user_input", inputSpec(commands.IntentSteer), []string{featSteer}, badState},
		{"state is checked before the feature", "paused/awaiting_approval", inputSpec(commands.IntentSteer), nil, badState},
		{"follow_up not implemented", "completed", inputSpec(commands.IntentFollowUp), []string{featSteer}, notImpl},
		{"follow_up implemented", "completed", inputSpec(commands.IntentFollowUp), []string{featFollowUp}, applied},
		{"clarification not implemented", "paused/awaiting_user_input", inputSpec(commands.IntentClarification), nil, notImpl},
		{"clarification implemented", "paused/awaiting_user_input", inputSpec(commands.IntentClarification), []string{featClarification}, accepted},
		{"approval not implemented", "paused/awaiting_approval", approveSpec(awaitingItem), nil, notImpl},
		{"approval implemented", "paused/awaiting_approval", approveSpec(awaitingItem), []string{featApproval}, applied},
		{"approval of an item that is not awaiting", "paused/awaiting_approval", approveSpec(startedItem), allFeatures, notPending},
		{"approval of an unknown item", "paused/awaiting_approval", approveSpec(events.NewID("itm")), allFeatures, notPending},
		{"approval of a completed item", "paused/awaiting_user_input", approveSpec(askItem), allFeatures, badState},
		{"compaction not implemented/running", "running", compactSpec, nil, notImpl},
		{"compaction not implemented/paused", "paused/awaiting_approval", compactSpec, nil, notImpl},
		{"compaction implemented", "running", compactSpec, []string{featCompaction}, accepted},
		{"compaction while queued", "queued", compactSpec, nil, badState},
		{"no payload", "running", cmdSpec{"RequestCompaction", commands.RequestCompaction, nil}, allFeatures, internal},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			st := stateOf(t, tc.state)
			c, p := admitEnvelope(t, st, tc.spec, tenant, "")
			if tc.spec.payload == nil {
				p = nil
			}
			checkDecision(t, admit(t, st, c, p, opts(tc.features...)), tc.want)
		})
	}
}

// TestAdmitOtherTenant: a run of another tenant does not exist for the
// caller, whatever the command; only a create learns that the id is taken.
func TestAdmitOtherTenant(t *testing.T) {
	t.Parallel()
	for _, row := range matrix {
		for i, spec := range matrixColumns() {
			t.Run(row.state+"/"+spec.name, func(t *testing.T) {
				t.Parallel()
				st := stateOf(t, row.state)
				c, p := admitEnvelope(t, st, spec, otherTenant, "")
				w := notFound
				if spec.typ == commands.CreateRun {
					w = row.want[i] // accepted when nothing exists, run_already_exists otherwise
				}
				checkDecision(t, admit(t, st, c, p, opts(allFeatures...)), w)
			})
		}
	}
}

// TestAdmitOtherTenantReusingAKey: another tenant that sends a command with an
// idempotency key this run already saw must get run_not_found, not a
// duplicate that reveals the run's command ids and outcomes.
func TestAdmitOtherTenantReusingAKey(t *testing.T) {
	t.Parallel()
	cases := []struct {
		state, key string
		spec       cmdSpec
	}{
		{"running/cancel pending", cancelKey, cancelSpec},
		{"queued", createKey, cancelSpec},
		{"completed", createKey, inputSpec(commands.IntentFollowUp)},
	}
	for _, tc := range cases {
		t.Run(tc.state+"/"+tc.spec.name, func(t *testing.T) {
			t.Parallel()
			st := stateOf(t, tc.state)
			c, p := admitEnvelope(t, st, tc.spec, otherTenant, tc.key)
			checkDecision(t, admit(t, st, c, p, opts(allFeatures...)), notFound)
		})
	}
}

func TestAdmitPanicsWithoutKnownAgent(t *testing.T) {
	t.Parallel()
	st := stateOf(t, "nonexistent")
	c, p := admitEnvelope(t, st, createSpec(agent), tenant, "")
	defer func() {
		if recover() == nil {
			t.Fatal("CreateRun admitted without AdmitOptions.KnownAgent")
		}
	}()
	commands.Admit(st, c, p, commands.AdmitOptions{})
}

func TestAdmitOtherCommandsNeedNoKnownAgent(t *testing.T) {
	t.Parallel()
	st := stateOf(t, "running")
	c, p := admitEnvelope(t, st, cancelSpec, tenant, "")
	checkDecision(t, admit(t, st, c, p, commands.AdmitOptions{}), accepted)
}

// TestAdmitCreateRefusesARunOffItsSandboxKeysPartition: runs of one sandbox
// key must share a partition to run one at a time, so a CreateRun whose
// runId is placed elsewhere is rejected; RunIDFor's ids are accepted.
func TestAdmitCreateRefusesARunOffItsSandboxKeysPartition(t *testing.T) {
	t.Parallel()
	const partitions = 12
	sk := events.SandboxKey{TenantID: tenant, WorkspaceID: "w", AgentID: agent, OwnerID: "alice"}
	o := opts()
	o.Partitions = partitions
	routed := commands.RunIDFor(tenant, "k", sk, partitions)
	var misrouted string
	for i := 0; misrouted == ""; i++ {
		if id := events.DerivedID("run", "x", fmt.Sprint(i)); !commands.Routed(id, sk, partitions) {
			misrouted = id
		}
	}
	for _, tc := range []struct {
		runID string
		want  want
	}{{routed, accepted}, {misrouted, want{events.OutcomeRejected, events.CodeSandboxKeyMisrouted}}} {
		c, err := commands.New(commands.CreateRun, commands.Header{RunID: tc.runID, TenantID: tenant, Actor: actor},
			commands.CreateRunPayload{AgentID: agent, Input: events.UserInput{Content: "hi"}, SandboxKey: sk})
		if err != nil {
			t.Fatal(err)
		}
		p, err := c.DecodePayload()
		if err != nil {
			t.Fatal(err)
		}
		checkDecision(t, admit(t, &events.RunState{}, c, p, o), tc.want)
	}
}
