package agentruntime

import (
	"encoding/json"
	"regexp"
	"strings"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/services/api/client"
)

// end ends the open reply: meta is the finish chunk's metadata (nil for an
// abort, whose outcome came in the message-metadata chunk before it).
func (m *mapper) end(meta *client.MessageMetadata, abortReason string) {
	e := ResponseEnded{ResponseID: m.st.Response}
	native := string(events.StatusCancelled)
	if meta != nil && meta.Outcome != "" {
		native = meta.Outcome
	}
	if meta != nil {
		e.Usage = meta.Usage
	}
	e.NativeReason, e.Outcome = native, outcomeOf(native)
	if e.Outcome == OutcomeFailed {
		e.Error = responseError(m.errText)
	}
	if abortReason != "" && e.Error == nil {
		e.Error = &ResponseError{Code: "cancelled", Message: abortReason}
	}
	m.out = append(m.out, e)
	m.st.Response, m.st.Inputs = "", nil
}

// outcomeOf interprets how a run ended: an expired run stopped because
// nobody answered in time, which is not a failure of the runtime.
func outcomeOf(native string) string {
	switch events.Status(native) {
	case events.StatusCompleted:
		return OutcomeCompleted
	case events.StatusFailed:
		return OutcomeFailed
	default:
	}
	return OutcomeCancelled
}

// errorCode is how an error chunk's text begins: the run's errorCode.
var errorCode = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// responseError reads an error chunk's text, "<errorCode>: <message>".
func responseError(text string) *ResponseError {
	code, msg, _ := strings.Cut(text, ": ")
	if !errorCode.MatchString(code) {
		return &ResponseError{Code: "failed", Message: text}
	}
	return &ResponseError{Code: code, Message: msg}
}

// interaction reports a data-interaction part: an open one as
// InteractionOpened (placed before the chunks' parts), a closed one as
// InteractionClosed before its part.
func (m *mapper) interaction(ch client.Chunk) {
	var in client.InteractionPart
	if err := json.Unmarshal(ch.Data, &in); err != nil || in.InteractionID == "" {
		m.output(ch)
		return
	}
	switch in.Status {
	case client.InteractionOpen:
		m.opened = append(m.opened, InteractionOpened{ResponseID: m.st.Response, InteractionID: in.InteractionID,
			Contract: contractOf(in)})
	case client.InteractionAnswered, client.InteractionWithdrawn, client.InteractionExpired:
		m.out = append(m.out, InteractionClosed{InteractionID: in.InteractionID, Reason: in.Status})
	}
	m.output(ch)
}

func contractOf(in client.InteractionPart) Contract {
	c := Contract{Kind: in.Kind, ToolName: in.ToolName, Input: in.Input, Question: in.Question,
		ApprovalID: in.ApprovalID, RuleID: in.RuleID, Reason: in.Reason}
	if in.Kind == client.KindToolApproval {
		c.Decisions, c.Scopes = approvalDecisions, approvalScopes
	}
	return c
}

// status reports a data-status part: what the runtime does now. It is not
// a browser part of the reply (it comes between replies too).
func (m *mapper) status(ch client.Chunk) {
	var s client.StatusPart
	if err := json.Unmarshal(ch.Data, &s); err != nil || s.Status == "" {
		m.out = append(m.out, RuntimeDiagnostic{EventType: "bad-status", Raw: ch.Raw})
		return
	}
	m.out = append(m.out, StatusChanged{Status: s.Status, Reason: s.Reason, RunID: s.RunID})
}
