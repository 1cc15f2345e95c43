package imgateway

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"regexp"
	"slices"
	"time"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/projections/im"
	"github.com/xbot-runtime/xbot/services/api/client"
	"github.com/xbot-runtime/xbot/services/imgateway/wire"
)

// keyPattern is the API's rule for an Idempotency-Key.
var keyPattern = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,160}$`)

// handle turns one client frame into the API calls it stands for: a
// decision per approval button, then the message to the session. A
// read-only connection's frames are answered with an error frame and go
// nowhere.
func (c *conn) handle(data []byte) {
	m := wire.ParseInbound(data, c.ep.Owner, time.Now())
	if !c.who.CanCommand() {
		c.sayError(m.ID, readOnlyText)
		return
	}
	sid, err := wire.SessionID(wire.Conversation{Endpoint: c.ep.Name, Type: m.Type, ID: m.ID})
	if err != nil {
		c.sayError(m.ID, "This conversation id is too long to be a session of xbot.")
		return
	}
	approvals := 0
	for _, a := range m.Actions {
		if c.decide(m.ID, a) {
			approvals++
		}
	}
	if m.Text == "" || (m.TextIsPayload && approvals > 0) {
		return
	}
	key := m.MessageID
	if key == "" && m.TextIsPayload && keyPattern.MatchString(m.Actions[0].ID) {
		key = m.Actions[0].ID
	}
	if key == "" {
		key = derivedKey(sid, data)
	}
	c.send(sid, m, key)
}

// decide sends the approval decision an action's payload names, keyed by
// the action's id so a second press of the button is a duplicate. It
// reports false for an action that is no approval button.
func (c *conn) decide(convID string, a wire.Action) bool {
	ap, ok := im.ParsePayload(a.Payload)
	if !ok {
		return false
	}
	if ap.ApprovalID != "" {
		if ap, ok = c.resolve(convID, ap); !ok {
			return true
		}
	}
	key := a.ID
	if !keyPattern.MatchString(key) {
		key = derivedKey(ap.RunID, []byte(a.Payload))
	}
	res, err := c.api.DecideApproval(c.ctx, ap.RunID,
		client.ApprovalDecisionRequest{ItemID: ap.ItemID, Decision: ap.Decision, Scope: ap.Scope},
		client.CommandOptions{IdempotencyKey: key, Wait: client.WaitFor(c.gw.cfg.Wait)})
	c.report(convID, "approval decision", res.Outcome, res.Code, res.Detail, err)
	return true
}

// resolve finds the run and item of a short payload's approval id: from
// the request this endpoint delivered, else from the API
// (GET /v1/approvals?approvalId=) as the client's tenant sees it. Either
// way the decision goes through the API with the client's token, which
// checks it.
func (c *conn) resolve(convID string, ap im.Approval) (im.Approval, bool) {
	if known, ok := c.ep.approval(ap.ApprovalID); ok {
		ap.RunID, ap.ItemID, ap.ApprovalID = known.RunID, known.ItemID, ""
		return ap, true
	}
	page, err := c.api.ListApprovals(c.ctx, client.ApprovalQuery{ApprovalID: ap.ApprovalID})
	if err != nil || len(page.Approvals) == 0 {
		c.report(convID, "approval lookup", "", "", "", err)
		if err == nil {
			c.sayError(convID, "approval "+ap.ApprovalID+" not found (yet): press the button again in a moment")
		}
		return ap, false
	}
	ap.RunID, ap.ItemID, ap.ApprovalID = page.Approvals[0].RunID, page.Approvals[0].ItemID, ""
	return ap, true
}

// send sends the message to the session sid.
func (c *conn) send(sid string, m wire.Message, key string) {
	req := client.SessionMessageRequest{Content: m.Text, AgentID: c.gw.cfg.AgentID, Options: m.Options,
		SandboxOwnerID: c.sandboxOwner(m.Type, sid)}
	res, err := c.api.SendSessionMessage(c.ctx, sid, req,
		client.CommandOptions{IdempotencyKey: key, Wait: client.WaitFor(c.gw.cfg.Wait)})
	c.report(m.ID, "session message", res.Outcome, res.Code, res.Detail, err)
}

// sandboxOwner is the sandbox owner of a conversation's runs (seed 004
// §10.1): the user in a private chat (the token's actor, the API's
// default: ""), the group in a group or channel chat (the conversation's
// session id), when the token may act for another owner; without act_as a
// group's runs use the actor's sandbox.
func (c *conn) sandboxOwner(typ, sid string) string {
	if typ == wire.TypePrivate || !slices.Contains(c.who.Scopes, "act_as") {
		return ""
	}
	return sid
}

// report tells the client of a command the API refused; accepted,
// applied, duplicate and pending outcomes say nothing (the replies do).
func (c *conn) report(convID, what, outcome, code, detail string, err error) {
	var p *client.Problem
	var rej *client.RejectedError
	switch {
	case errors.As(err, &rej):
		c.sayError(convID, what+" rejected: "+rej.Code+" "+rej.Detail)
	case errors.As(err, &p):
		c.log.Info(what+" refused", zap.Int("status", p.Status), zap.String("code", p.Code))
		c.sayError(convID, what+" refused: "+p.Code+": "+p.Detail)
	case err != nil:
		c.log.Warn(what+" failed", zap.Error(err))
		c.sayError(convID, what+" failed: the API did not answer")
	case outcome == "rejected" || outcome == "no_effect":
		c.sayError(convID, what+" "+outcome+": "+code+" "+detail)
	}
}

// derivedKey is the Idempotency-Key of a frame without a usable messageId:
// the same frame in the same conversation always yields the same key, so a
// client's retry is one message, not two.
func derivedKey(scope string, frame []byte) string {
	h := sha256.New()
	h.Write([]byte(scope))
	h.Write([]byte{0})
	h.Write(frame)
	return "im-" + hex.EncodeToString(h.Sum(nil))[:40]
}
