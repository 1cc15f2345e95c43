package api_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/services/api"
	"github.com/xbot-runtime/xbot/services/api/client"
	"github.com/xbot-runtime/xbot/services/engine/policy"
)

func sandboxKeyOf(t *testing.T, c commands.Envelope) events.SandboxKey {
	t.Helper()
	p, err := c.DecodePayload()
	if err != nil {
		t.Fatal(err)
	}
	return p.(*commands.CreateRunPayload).SandboxKey
}

// Created runs are placed on their sandbox key's partition of the commands
// topic, whose count is read once; until it is known, the configured count
// places them.
func TestCreateRunIsPlacedOnItsSandboxKeysPartition(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	counted := func(n int, err error) func(*api.Config) {
		return func(c *api.Config) {
			c.Partitions = 5
			c.CommandPartitions = func(context.Context) (int, error) {
				calls.Add(1)
				return n, err
			}
		}
	}
	for name, tc := range map[string]struct {
		cfg  func(*api.Config)
		want int
	}{
		"topic read":    {counted(7, nil), 7},
		"topic unknown": {counted(0, errors.New("UNKNOWN_TOPIC_OR_PARTITION")), 5},
		"configured":    {func(c *api.Config) { c.Partitions = 3 }, 3},
	} {
		e := newEnv(t, withConfig(tc.cfg))
		before := calls.Load()
		for _, ws := range []string{"ws-1", "ws-2", "ws-3", "ws-4"} {
			body := createBody("hi")
			body.SandboxKey = &client.SandboxKeyRequest{WorkspaceID: ws}
			r := e.do(t, "POST", "/v1/runs", tokenA, body, "Idempotency-Key", "k-"+ws).want(t, http.StatusAccepted)
			sk := sandboxKeyOf(t, e.sender.envelopes()[len(e.sender.envelopes())-1])
			id := r.command(t).RunID
			if id != commands.RunIDFor(tenantA, "k-"+ws, sk, tc.want) || !commands.Routed(id, sk, tc.want) {
				t.Fatalf("%s: runId %s is not RunIDFor(%s, k-%s, %+v, %d)", name, id, tenantA, ws, sk, tc.want)
			}
		}
		if n := calls.Load() - before; name == "topic read" && n != 1 {
			t.Fatalf("partition count read %d times, want once", n)
		}
	}
}

func TestCreateRunInheritsSessionGrants(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	grant := events.PermissionGrant{GrantID: events.NewID("grt"), Scope: events.ScopePlatformSession, ToolName: "shell",
		RuleID: "network", RunID: "run_prev", ItemID: "itm_prev", Actor: events.Actor{Type: "user", ID: "alice"}}
	e.store.setGrants(tenantA, "chat-1", grant)
	grantsOf := func(body any, token string) []events.PermissionGrant {
		t.Helper()
		e.do(t, "POST", "/v1/runs", token, body).want(t, http.StatusAccepted)
		sent := e.sender.envelopes()
		p, err := sent[len(sent)-1].Validate()
		if err != nil {
			t.Fatal(err)
		}
		return p.(*commands.CreateRunPayload).SessionGrants
	}
	inSession := createBody("again")
	inSession.PlatformSessionID = "chat-1"
	if got := grantsOf(inSession, tokenA); !slices.Equal(got, []events.PermissionGrant{grant}) {
		t.Fatalf("grants %+v, want the session's", got)
	}
	if got := grantsOf(inSession, tokenB); len(got) != 0 {
		t.Fatalf("another tenant's run in a session of the same id got %+v", got)
	}
	if got := grantsOf(createBody("new session"), tokenA); len(got) != 0 {
		t.Fatalf("a run in a new session got %+v", got)
	}
	// Clients cannot hand themselves grants.
	forged := `{"agentId":"coder","input":{"content":"forged"},` +
		`"sessionGrants":[{"grantId":"grt_x","scope":"platform_session","toolName":"shell"}]}`
	e.do(t, "POST", "/v1/runs", tokenA, forged).wantCode(t, http.StatusUnprocessableEntity, "validation_failed").
		wantLocation(t, "body.sessionGrants")
}

// The run a follow-up created is the one the read model recorded, for the
// follow-up and for a duplicate of it.
func TestFollowUpCreatedRunIDComesFromTheReadModel(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	run := seedRun(e, tenantA, "completed")
	e.sender.decide = func(c commands.Envelope, row *api.CommandRecord) {
		p, _ := c.DecodePayload()
		if in, ok := p.(*commands.AppendUserInputPayload); ok && in.Intent == commands.IntentFollowUp {
			if row.Outcome == "duplicate" {
				row.OriginalOutcome = "applied"
			} else {
				row.Outcome, row.FirstOutcome = "applied", "applied"
			}
			row.CreatedRunID = "run_recorded"
		}
	}
	followUp := client.AppendInputRequest{Intent: "follow_up", Content: "and then?"}
	for _, want := range []string{client.OutcomeApplied, client.OutcomeDuplicate} {
		r := e.do(t, "POST", "/v1/runs/"+run.RunID+"/inputs", tokenA, followUp, "Idempotency-Key", "f-1").
			want(t, http.StatusAccepted).command(t)
		if r.Outcome != want || r.CreatedRunID != "run_recorded" {
			t.Fatalf("%s follow-up answered %+v", want, r)
		}
	}
}

func TestSubmitApprovalDecisionAndRequestCompaction(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	run := seedRun(e, tenantA, "paused")
	decided := events.NewID("itm")
	e.sender.decide = func(c commands.Envelope, row *api.CommandRecord) {
		if p, _ := c.DecodePayload(); c.Type == commands.SubmitApprovalDecision &&
			p.(*commands.SubmitApprovalDecisionPayload).ItemID == decided {
			row.Outcome, row.FirstOutcome, row.Code = "rejected", "rejected", string(events.CodeApprovalNotPending)
		}
	}
	path := "/v1/runs/" + run.RunID + "/approval-decisions"
	item := events.NewID("itm")
	r := e.do(t, "POST", path, tokenA, client.ApprovalDecisionRequest{ItemID: item, Decision: "allow", Scope: "platform_session",
		Reason: "trusted"}).want(t, http.StatusAccepted).command(t)
	if r.Outcome != client.OutcomeAccepted || r.RunID != run.RunID {
		t.Fatalf("decision answered %+v", r)
	}
	r = e.do(t, "POST", path, tokenA, client.ApprovalDecisionRequest{ItemID: decided, Decision: "deny", Scope: "item"}).
		want(t, http.StatusAccepted).command(t)
	if r.Outcome != client.OutcomeRejected || r.Code != "approval_not_pending" {
		t.Fatalf("decision on a decided item answered %+v", r)
	}
	e.do(t, "POST", "/v1/runs/"+run.RunID+"/compact", tokenA, nil).want(t, http.StatusAccepted)
	e.do(t, "POST", "/v1/runs/"+run.RunID+"/compact", tokenA, `{"reason":"too long"}`).want(t, http.StatusAccepted)
	sent := e.sender.envelopes()
	want := []any{&commands.SubmitApprovalDecisionPayload{ItemID: item, Decision: "allow", Scope: "platform_session",
		Reason: "trusted"}, &commands.SubmitApprovalDecisionPayload{ItemID: decided, Decision: "deny", Scope: "item"},
		&commands.RequestCompactionPayload{}, &commands.RequestCompactionPayload{Reason: "too long"}}
	for i, c := range sent {
		p, err := c.Validate()
		if err != nil || c.RunID != run.RunID || !samePayload(p, want[i]) {
			t.Fatalf("command %d: %+v payload %+v, %v", i, c, p, err)
		}
	}
	if sent[0].Actor.ID != tenantA {
		t.Fatalf("decision actor %+v", sent[0].Actor)
	}
	for field, body := range map[string]client.ApprovalDecisionRequest{
		"body.decision": {ItemID: item, Decision: "maybe", Scope: "item"},
		"body.scope":    {ItemID: item, Decision: "allow", Scope: "forever"},
		"body.itemId":   {ItemID: "not-an-item", Decision: "allow", Scope: "item"},
	} {
		e.do(t, "POST", path, tokenA, body).wantCode(t, http.StatusUnprocessableEntity, "validation_failed").
			wantLocation(t, field)
	}
	e.do(t, "POST", path, tokenB, client.ApprovalDecisionRequest{ItemID: item, Decision: "allow", Scope: "item"}).
		wantCode(t, http.StatusNotFound, "run_not_found")
	e.do(t, "POST", "/v1/runs/"+run.RunID+"/compact", tokenB, nil).wantCode(t, http.StatusNotFound, "run_not_found")
}

func samePayload(got, want any) bool {
	switch w := want.(type) {
	case *commands.SubmitApprovalDecisionPayload:
		g, ok := got.(*commands.SubmitApprovalDecisionPayload)
		return ok && *g == *w
	case *commands.RequestCompactionPayload:
		g, ok := got.(*commands.RequestCompactionPayload)
		return ok && *g == *w
	}
	return false
}

func TestGovernanceOperationsAreDocumented(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.do(t, "GET", "/openapi.json", "", nil).want(t, http.StatusOK)
	doc := string(r.raw)
	for _, s := range []string{`"operationId":"submitApprovalDecision"`, `"operationId":"requestCompaction"`,
		"approval_not_pending", "denied_by_user", "manual_compact", "sandbox key's partition", `"queuePosition"`,
		`"snapshotHash"`, `"compactions"`, `"requestReason"`} {
		if !strings.Contains(doc, s) {
			t.Errorf("the OpenAPI document lacks %s", s)
		}
	}
}

// TestBuiltinPolicyIsReadableByItsHash: the hash a snapshot records is the
// one the API shows, with the rules it stands for.
func TestBuiltinPolicyIsReadableByItsHash(t *testing.T) {
	t.Parallel()
	builtins, err := newEnv(t).apiAs(t, tokenA).BuiltinPolicy(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if builtins.Hash != policy.BuiltinsHash() || len(builtins.Rules) != len(policy.DefaultRules()) {
		t.Fatalf("hash %s with %d rules, want %s with %d", builtins.Hash, len(builtins.Rules), policy.BuiltinsHash(), len(policy.DefaultRules()))
	}
	if first := builtins.Rules[0]; first.ID != policy.DefaultRules()[0].ID || first.Pattern == "" {
		t.Errorf("first rule %+v", first)
	}
}

// TestCreateRunInASessionWhoseGrantsCannotBeRead: without its session's
// grants the run would ask again what the session allowed, so the create is
// refused as unavailable (retry with the same key) and nothing is sent.
func TestCreateRunInASessionWhoseGrantsCannotBeRead(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.store.failGrants(errors.New("connection refused"))
	body := createBody("again")
	body.PlatformSessionID = "chat-1"
	e.do(t, "POST", "/v1/runs", tokenA, body).wantCode(t, http.StatusServiceUnavailable, "unavailable")
	if n := len(e.sender.envelopes()); n != 0 {
		t.Fatalf("%d commands sent", n)
	}
	e.do(t, "POST", "/v1/runs", tokenA, createBody("no session")).want(t, http.StatusAccepted)
}
