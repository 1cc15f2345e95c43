package api_test

import (
	"net/http"
	"testing"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/services/api"
	"github.com/xbot-runtime/xbot/services/api/client"
	"github.com/xbot-runtime/xbot/services/engine/profile"
)

// tokenUnconfined may ask for bypass and danger-full-access.
const tokenUnconfined = "secret-token-unconfined"

// withAgents gives the API two profiles: "coder" with the default bounds
// and no network, "open" that allows bypass, danger-full-access and the
// network.
func withAgents() option {
	return withConfig(func(c *api.Config) {
		c.Tokens[tokenUnconfined] = tenantA + "/ops/full+unconfined"
		agents := map[string]profile.Profile{
			"coder": {ID: "coder"},
			"open": {ID: "open", Sandbox: profile.Sandbox{Network: true}, RunOptions: profile.RunOptions{
				SafetyModes:   []events.SafetyMode{events.SafetyReadOnly, events.SafetyWorkspaceWrite, events.SafetyDangerFullAccess},
				ApprovalModes: []events.ApprovalMode{events.ApprovalAsk, events.ApprovalAuto, events.ApprovalBypass}}},
		}
		c.Agents = func(id string) (profile.Profile, bool) { p, ok := agents[id]; return p, ok }
	})
}

func yes() *bool { b := true; return &b }

func optionsBody(agent string, o events.RunOptions) client.CreateRunRequest {
	b := createBody("hi")
	b.AgentID = agent
	b.Options = &o
	return b
}

// TestCreateRunOptionsReachTheCommand: options within the bounds are sent
// as asked, nothing filled in (the executor merges the defaults).
func TestCreateRunOptionsReachTheCommand(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withAgents())
	asked := events.RunOptions{WorkingDirectory: "src/app", SafetyMode: events.SafetyReadOnly, ApprovalMode: events.ApprovalAuto}
	e.do(t, "POST", "/v1/runs", tokenA, optionsBody("coder", asked)).want(t, http.StatusAccepted)
	p, err := e.sender.envelopes()[0].Validate()
	if err != nil {
		t.Fatal(err)
	}
	got := p.(*commands.CreateRunPayload).Options
	if got == nil || *got != asked {
		t.Fatalf("options sent %+v, want %+v", got, asked)
	}
}

// TestCreateRunOptionsRefused: more than the profile allows is 403
// option_not_allowed, more than the token's scopes 403 forbidden_scope, a
// malformed option 422 naming it; nothing is sent.
func TestCreateRunOptionsRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withAgents())
	cases := []struct {
		name     string
		token    string
		body     any
		status   int
		code     string
		location string
	}{
		{"bypass not in profile", tokenUnconfined, optionsBody("coder", events.RunOptions{ApprovalMode: events.ApprovalBypass}),
			http.StatusForbidden, "option_not_allowed", "body.options.approvalMode"},
		{"network forbidden", tokenA, optionsBody("coder", events.RunOptions{NetworkAccess: yes()}),
			http.StatusForbidden, "option_not_allowed", "body.options.networkAccess"},
		{"bypass without scope", tokenA, optionsBody("open", events.RunOptions{ApprovalMode: events.ApprovalBypass}),
			http.StatusForbidden, "forbidden_scope", ""},
		{"full access without scope", tokenA, optionsBody("open", events.RunOptions{SafetyMode: events.SafetyDangerFullAccess}),
			http.StatusForbidden, "forbidden_scope", ""},
		{"absolute directory", tokenA, optionsBody("coder", events.RunOptions{WorkingDirectory: "/etc"}),
			http.StatusUnprocessableEntity, "validation_failed", "body.options.workingDirectory"},
		{"escaping directory", tokenA, optionsBody("coder", events.RunOptions{WorkingDirectory: "a/../../b"}),
			http.StatusUnprocessableEntity, "validation_failed", "body.options.workingDirectory"},
		{"unknown mode", tokenA, `{"agentId":"coder","input":{"content":"hi"},"options":{"safetyMode":"yolo"}}`,
			http.StatusUnprocessableEntity, "validation_failed", "body.options.safetyMode"},
		{"unknown option", tokenA, `{"agentId":"coder","input":{"content":"hi"},"options":{"sandbox":"none"}}`,
			http.StatusUnprocessableEntity, "validation_failed", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do(t, "POST", "/v1/runs", tc.token, tc.body).wantCode(t, tc.status, tc.code)
			if tc.location != "" {
				r.wantLocation(t, tc.location)
			}
		})
	}
	if n := len(e.sender.envelopes()); n != 0 {
		t.Fatalf("%d commands sent for refused options", n)
	}
}

// TestCreateRunUnconfinedOptions: with scope unconfined and a profile that
// lists them, bypass and danger-full-access are sent.
func TestCreateRunUnconfinedOptions(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withAgents())
	asked := events.RunOptions{SafetyMode: events.SafetyDangerFullAccess, ApprovalMode: events.ApprovalBypass, NetworkAccess: yes()}
	e.do(t, "POST", "/v1/runs", tokenUnconfined, optionsBody("open", asked)).want(t, http.StatusAccepted)
}
