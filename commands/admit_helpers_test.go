package commands_test

import (
	"reflect"
	"slices"
	"testing"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/events"
)

// cmdSpec is a command to admit, without its envelope.
type cmdSpec struct {
	name    string
	typ     commands.Type
	payload any
}

func createSpec(agentID string) cmdSpec {
	p := validPayload(commands.CreateRun).(*commands.CreateRunPayload)
	p.AgentID = agentID
	return cmdSpec{"CreateRun", commands.CreateRun, p}
}

func inputSpec(intent string) cmdSpec {
	return cmdSpec{"AppendUserInput/" + intent, commands.AppendUserInput,
		&commands.AppendUserInputPayload{Intent: intent, Content: "more, please"}}
}

func approveSpec(item string) cmdSpec {
	return cmdSpec{"SubmitApprovalDecision", commands.SubmitApprovalDecision,
		&commands.SubmitApprovalDecisionPayload{ItemID: item, Decision: "allow", Scope: "item"}}
}

var (
	cancelSpec  = cmdSpec{"CancelRun", commands.CancelRun, &commands.CancelRunPayload{Reason: "stop"}}
	compactSpec = cmdSpec{"RequestCompaction", commands.RequestCompaction, &commands.RequestCompactionPayload{}}
)

// features the engine may implement, named as Admit asks for them.
const (
	featSteer         = "AppendUserInput/steer"
	featFollowUp      = "AppendUserInput/follow_up"
	featClarification = "AppendUserInput/clarification"
	featApproval      = "SubmitApprovalDecision"
	featCompaction    = "RequestCompaction"
)

var allFeatures = []string{featSteer, featFollowUp, featClarification, featApproval, featCompaction}

// opts knows the agent "demo" and implements exactly features; with none,
// Implemented is nil.
func opts(features ...string) commands.AdmitOptions {
	o := commands.AdmitOptions{KnownAgent: func(id string) bool { return id == agent }}
	if features != nil {
		o.Implemented = func(what string) bool { return slices.Contains(features, what) }
	}
	return o
}

// admitEnvelope builds and validates the envelope of spec for the run of st,
// as the executor receives it.
func admitEnvelope(t *testing.T, st *events.RunState, spec cmdSpec, tenantID, key string) (commands.Envelope, any) {
	t.Helper()
	payload := spec.payload
	if p, ok := payload.(*commands.CreateRunPayload); ok {
		cp := *p
		cp.SandboxKey.TenantID = tenantID
		payload = &cp
	}
	c := newEnvelope(t, spec.typ, commands.Header{RunID: st.RunID, TenantID: tenantID, Actor: actor, IdempotencyKey: key}, payload)
	p, err := c.Validate()
	if err != nil {
		t.Fatalf("fixture command is invalid: %v", err)
	}
	return c, p
}

// admit calls Admit twice and checks that it is deterministic and leaves the
// state alone.
func admit(t *testing.T, st *events.RunState, c commands.Envelope, p any, o commands.AdmitOptions) commands.Decision {
	t.Helper()
	before := st.Clone()
	d := commands.Admit(st, c, p, o)
	if again := commands.Admit(st, c, p, o); !reflect.DeepEqual(d, again) {
		t.Fatalf("Admit is not deterministic: %+v then %+v", d, again)
	}
	if !reflect.DeepEqual(before, st) {
		t.Fatalf("Admit changed the run state")
	}
	return d
}

// want is an expected decision.
type want struct {
	outcome events.Outcome
	code    events.Code
}

var (
	accepted   = want{events.OutcomeAccepted, ""}
	applied    = want{events.OutcomeApplied, ""}
	noEffect   = want{events.OutcomeNoEffect, ""}
	notFound   = want{events.OutcomeRejected, events.CodeRunNotFound}
	exists     = want{events.OutcomeRejected, events.CodeRunAlreadyExists}
	badState   = want{events.OutcomeRejected, events.CodeInvalidState}
	notPending = want{events.OutcomeRejected, events.CodeApprovalNotPending}
	notImpl    = want{events.OutcomeRejected, events.CodeNotImplemented}
	badAgent   = want{events.OutcomeRejected, events.CodeUnknownAgent}
	internal   = want{events.OutcomeRejected, events.CodeInternal}
	duplicated = want{events.OutcomeDuplicate, events.CodeDuplicateCommand}
)

func checkDecision(t *testing.T, d commands.Decision, w want) {
	t.Helper()
	if d.Outcome != w.outcome || d.Code != w.code {
		t.Fatalf("decision %s/%s (%q), want %s/%s", d.Outcome, d.Code, d.Message, w.outcome, w.code)
	}
	if (d.Outcome == events.OutcomeRejected || d.Outcome == events.OutcomeDuplicate) && d.Message == "" {
		t.Errorf("a %s decision has no message", d.Outcome)
	}
	if (d.Original != nil) != (d.Outcome == events.OutcomeDuplicate) {
		t.Errorf("Original = %+v for outcome %s", d.Original, d.Outcome)
	}
}
