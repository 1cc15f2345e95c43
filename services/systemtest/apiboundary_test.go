package systemtest_test

import (
	"testing"

	"github.com/xbot-runtime/xbot/contracttests"
)

// TestAPIBoundaryContract runs the API boundary contract suite against a
// live stack: alice's token has scope full without act_as, the reader's scope
// read.
func TestAPIBoundaryContract(t *testing.T) {
	t.Parallel()
	_, st, _ := agentEnv(t, isolationAgents()...)
	contracttests.APIBoundary(t, contracttests.APITarget{BaseURL: "http://" + st.Addr(), FullToken: aliceToken,
		ReadToken: readerToken, AgentID: "chat"})
}
