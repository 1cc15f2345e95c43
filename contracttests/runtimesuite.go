package contracttests

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/xbot-runtime/xbot/services/api/client"
	"github.com/xbot-runtime/xbot/services/api/client/agentruntime"
)

// RuntimeClientConformance runs the runtime client conformance suite
// (RuntimeClientSuite) against target, one check after the other as
// subtests of t.
func RuntimeClientConformance(t *testing.T, target Target) { RuntimeClientSuite(target).RunTests(t) }

// RuntimeClientSuite is the runtime client conformance suite: its checks of
// target, driving conversations through agentruntime.Client (the runtime
// client contract over the API). The checks run one after the other (the
// conversations of one agent share a sandbox, and so wait for one another),
// over a set of conversations with the conformance agents that they build
// once: a reply that asks for two approvals (one allowed, one denied) and
// one that asks a question, a failed reply, an interrupted reply, an approval
// withdrawn by an interrupt, and one that expires.
//
//   - SubmitIsIdempotentByInputID: the same input twice is one input of one
//     reply; a refused input is an *agentruntime.InputRefusedError with its
//     code.
//   - EventsFromEveryCursorEqualTheRest: from every event's cursor, a new
//     reader (or the same) gets exactly the events that followed it, cursors
//     included; from no cursor, all of them.
//   - StreamResumesAfterEveryChunk: the session stream opened after any
//     of its chunk ids (Last-Event-ID), in the middle of an event's chunks
//     too, goes on with exactly the chunks that followed it.
//   - ChunkGrammar: each reply's parts run start … finish; a failed reply
//     sends error before its finish; a pause is InteractionOpened, then the
//     tool-approval-request (for an approval), the data-interaction and a
//     finish with finishReason tool-calls, then StatusChanged waiting, and
//     the reply goes on with a start of the same message id.
//   - InteractionsOpenThenClose: every interaction opens once and closes
//     once, answered, withdrawn or expired as its conversation did, and the
//     state keeps that receipt.
//   - EveryChunkAcceptedByTheAISDK: every reply's parts pass the Vercel AI
//     SDK's own schema and message builder (Node.js; not applicable without
//     it, unless CI=true).
//   - AnswerAfterTheReaderReconnected: a new reader takes over a paused
//     reply from State's cursor, answers it, and sees the rest of the reply;
//     a repeated answer is accepted, an unknown one ErrInteractionNotOpen.
//   - InterruptAndQueuedInputs: an interrupt stops the reply in progress;
//     inputs queued behind it become the next reply, or are dropped with
//     cancelQueued.
//   - MembersOfTheContract: engine kind, session key, capabilities,
//     committed, cursors of another conversation, close.
func RuntimeClientSuite(target Target) Suite {
	_, suite := newRuntimeSuite(target)
	return suite
}

// newRuntimeSuite is RuntimeClientSuite and the state its checks share.
func newRuntimeSuite(target Target) (*runtimeSuite, Suite) {
	target.setDefaults()
	s := &runtimeSuite{Target: target}
	return s, Suite{Name: "runtime-client", Sequential: true, Timeout: target.CheckTimeout, Cleanup: s.cleanup, Checks: []Check{
		{Name: "AgentsConfigured", Run: func(ctx context.Context) error { return agentsConfigured(ctx, s.main().main()) }},
		{Name: "SubmitIsIdempotentByInputID", Run: s.submit},
		{Name: "EventsFromEveryCursorEqualTheRest", Run: s.cursors},
		{Name: "StreamResumesAfterEveryChunk", Run: s.resume},
		{Name: "ChunkGrammar", Run: s.grammar},
		{Name: "InteractionsOpenThenClose", Run: s.interactions},
		{Name: "EveryChunkAcceptedByTheAISDK", Run: s.aisdk},
		{Name: "AnswerAfterTheReaderReconnected", Run: s.reconnect},
		{Name: "InterruptAndQueuedInputs", Run: s.interrupt},
		{Name: "MembersOfTheContract", Run: s.members},
	}}
}

type runtimeSuite struct {
	Target
	once  sync.Once
	tours []*tour
	err   error
	// sessions are the conversations the checks started, for cleanup.
	mu       sync.Mutex
	sessions []string
}

func (s *runtimeSuite) main() *apiSuite { return &apiSuite{Target: s.Target} }

// conversation is a runtime client of a fresh session of agent.
func (s *runtimeSuite) conversation(agent string) (*agentruntime.Client, error) {
	api, err := s.api(s.Token)
	if err != nil {
		return nil, err
	}
	session := freshID("conformance-session")
	s.mu.Lock()
	s.sessions = append(s.sessions, session)
	s.mu.Unlock()
	return agentruntime.New(agentruntime.Config{API: api, SessionID: session, AgentID: agent})
}

// cleanup interrupts every conversation the checks started, dropping the
// inputs queued in it: a check that failed half-way may have left a reply
// running, or paused on an approval that would otherwise wait for its
// pause to expire. A conversation with nothing going on is not changed.
func (s *runtimeSuite) cleanup() {
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	api, err := s.api(s.Token)
	if err != nil {
		return
	}
	s.mu.Lock()
	sessions := slices.Clone(s.sessions)
	s.mu.Unlock()
	for _, id := range sessions {
		_, _ = api.InterruptSession(ctx, id, client.InterruptRequest{CancelQueued: true}, client.CommandOptions{})
	}
}

// reader is another runtime client of rc's conversation.
func (s *runtimeSuite) reader(rc *agentruntime.Client, agent string) (*agentruntime.Client, error) {
	api, err := s.api(s.Token)
	if err != nil {
		return nil, err
	}
	return agentruntime.New(agentruntime.Config{API: api, SessionID: rc.SessionKey(), AgentID: agent})
}

// fixtures builds the suite's conversations once, one after the other.
func (s *runtimeSuite) fixtures(ctx context.Context) ([]*tour, error) {
	s.once.Do(func() {
		for _, build := range tourBuilders {
			t, err := build(ctx, s)
			if err != nil {
				s.err = fmt.Errorf("building the conversation %q: %w", t.name, err)
				return
			}
			s.tours = append(s.tours, t)
		}
	})
	return s.tours, s.err
}
