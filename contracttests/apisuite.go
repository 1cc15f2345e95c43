package contracttests

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/xbot-runtime/xbot/services/api/client"
)

// APIConformance runs the API conformance suite (APISuite) against target,
// each check a parallel subtest of t.
func APIConformance(t *testing.T, target Target) { APISuite(target).RunTests(t) }

// APISuite is the API conformance suite: its checks of target, through its
// HTTP API only (and the Go client, services/api/client):
//
//   - AgentsConfigured: the demo agent and those of ConformanceAgentsYAML
//     are served by GET /v1/agents/{agentId};
//   - IdempotentCommands: every command type sent twice under one
//     Idempotency-Key is answered duplicate with the first command's id and
//     outcome and changes nothing; another body under the key is refused 422
//     idempotency_key_reused;
//   - EveryIntentInEveryState: every run intent (cancel, steer, follow_up,
//     clarification, approval decision, compaction) in every state a run can
//     be in (queued, running, paused for an approval or a question,
//     completed, failed, cancelled, expired) gets the outcome and code the
//     protocol decides (commands/admit_test.go's matrix), and a session
//     message and an interrupt get theirs by the session's head (docs/sessions.md);
//   - OtherTenantsSeeNothing: another tenant's token reads and commands
//     none of the tenant's runs, commands, sessions or approvals: 404 with
//     the registered code, never 403, never the data (needs OtherToken);
//   - EveryErrorHasARegisteredCode: refused requests (no token, a bad
//     token, unknown routes and ids, bad bodies, bad ids) are RFC 9457
//     problems with a code of schemas/v1/errors.json;
//   - PaginationIsStable: runs, items, approvals and events read page by
//     page, with the smallest pages, equal one big page, with nothing
//     repeated or missing, also while new runs are created in between.
func APISuite(target Target) Suite {
	target.setDefaults()
	s := &apiSuite{Target: target}
	return Suite{Name: "api", Timeout: target.CheckTimeout, Checks: []Check{
		{Name: "AgentsConfigured", Run: s.agents},
		{Name: "IdempotentCommands", Run: s.idempotency},
		{Name: "EveryIntentInEveryState", Run: s.intents},
		{Name: "SessionIntentsByTheHeadsState", Run: s.sessionIntents},
		{Name: "OtherTenantsSeeNothing", Run: s.tenants},
		{Name: "EveryErrorHasARegisteredCode", Run: s.errorCodes},
		{Name: "PaginationIsStable", Run: s.pagination},
	}}
}

type apiSuite struct {
	Target
}

// main is a client of the target with its full token.
func (s *apiSuite) main() *client.Client {
	c, err := s.api(s.Token)
	if err != nil {
		panic("contracttests: " + err.Error()) // Target.BaseURL is checked by the callers' flags
	}
	return c
}

// requiredAgents are the agents the suites need.
var requiredAgents = []string{AgentDemo, AgentSlow, AgentApproval, AgentQuestion, AgentExpire, AgentFail}

func (s *apiSuite) agents(ctx context.Context) error {
	return agentsConfigured(ctx, s.main())
}

func agentsConfigured(ctx context.Context, c *client.Client) error {
	var errs []error
	for _, id := range requiredAgents {
		if _, err := c.GetAgent(ctx, id); err != nil {
			errs = append(errs, fmt.Errorf("agent %s: %w (add contracttests.ConformanceAgentsYAML, printed by xbot conformance --print-agents, to the agents file)", id, err))
		}
	}
	return errors.Join(errs...)
}
