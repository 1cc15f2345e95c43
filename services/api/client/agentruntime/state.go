package agentruntime

import (
	"context"
	"fmt"

	"github.com/xbot-runtime/xbot/services/api/client"
)

// State is the runtime's own report of the conversation at one point of
// its log (the contract's RuntimeState).
type State struct {
	// Status is working, waiting or idle; Reason why it waits.
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
	// OpenResponses are the replies that have not ended (at most one).
	OpenResponses []OpenResponse `json:"openResponses"`
	// PendingInteractions wait for an answer; ClosedInteractions are the
	// latest closed ones with how they closed (the receipts of answers).
	PendingInteractions []Interaction `json:"pendingInteractions"`
	ClosedInteractions  []Interaction `json:"closedInteractions"`
	// QueuedInputIDs were received and not applied yet; AdmittedInputIDs
	// (the latest) were applied to a reply.
	QueuedInputIDs   []string `json:"queuedInputIds"`
	AdmittedInputIDs []string `json:"admittedInputIds"`
	// Truncated names the lists cut at the server's bound.
	Truncated []string `json:"truncated"`
	// Cursor is where Events continues right after this state.
	Cursor Cursor `json:"cursor"`
}

// OpenResponse is a reply in progress: running, or paused for PauseReason.
type OpenResponse struct {
	ResponseID  string `json:"responseId"`
	Status      string `json:"status"`
	PauseReason string `json:"pauseReason,omitempty"`
}

// Interaction is an interaction of the state: Reason is empty while it is
// open, else answered, withdrawn or expired; NativeStatus is xbot's own
// (open, answered, approved, denied, expired, cancelled).
type Interaction struct {
	InteractionID string `json:"interactionId"`
	ResponseID    string `json:"responseId"`
	Kind          string `json:"kind"`
	Reason        string `json:"reason,omitempty"`
	NativeStatus  string `json:"nativeStatus"`
	ToolName      string `json:"toolName,omitempty"`
	Question      string `json:"question,omitempty"`
}

// State reads the conversation's state (GET
// /v1/sessions/{platformSessionId}/state), as the read models hold it: it
// may lag the events a moment. A conversation without a run yet has no
// state: a 404 *client.Problem (errors.Is(err, client.ErrNotFound)); its
// events begin at Events(ctx, nil).
func (c *Client) State(ctx context.Context) (State, error) {
	if err := c.live(); err != nil {
		return State{}, err
	}
	s, err := c.cfg.API.SessionState(ctx, c.cfg.SessionID)
	if err != nil {
		return State{}, fmt.Errorf("agentruntime: state of session %s: %w", c.cfg.SessionID, err)
	}
	out := State{Status: s.Status.Status, Reason: s.Status.Reason, OpenResponses: []OpenResponse{},
		PendingInteractions: interactions(s.PendingInteractions), ClosedInteractions: interactions(s.ClosedInteractions),
		QueuedInputIDs: s.QueuedInputIDs, AdmittedInputIDs: s.AdmittedInputIDs, Truncated: s.Truncated}
	st := mapState{}
	if r := s.OpenReply; r != nil {
		out.OpenResponses = append(out.OpenResponses, OpenResponse{ResponseID: r.RunID, Status: r.Status, PauseReason: r.PauseReason})
		if r.RunID == s.Status.RunID {
			// The reply the cursor is in has started (it runs or is paused),
			// and the inputs it answers are among those admitted.
			st = mapState{Response: r.RunID, Inputs: s.AdmittedInputIDs}
		}
	}
	out.Cursor = c.cursor(position{After: s.Cursor, mapState: st})
	return out, nil
}

func interactions(in []client.Interaction) []Interaction {
	out := make([]Interaction, 0, len(in))
	for _, i := range in {
		out = append(out, Interaction{InteractionID: i.InteractionID, ResponseID: i.RunID, Kind: i.Kind,
			Reason: closeReason(i.Status), NativeStatus: i.Status, ToolName: i.ToolName, Question: i.Question})
	}
	return out
}

// closeReason is the contract's reason of an interaction's xbot status.
func closeReason(status string) string {
	switch status {
	case "open":
		return ""
	case "answered", "approved", "denied":
		return ClosedAnswered
	case "expired":
		return ClosedExpired
	}
	return ClosedWithdrawn
}
