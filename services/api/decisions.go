package api

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/xbot-runtime/xbot/commands"
)

type approvalDecisionBody struct {
	ItemID   string `json:"itemId" minLength:"1" maxLength:"160" doc:"The item awaiting approval (itemId of GET /v1/approvals?status=pending)."`
	Decision string `json:"decision" enum:"allow,deny"`
	Scope    string `json:"scope" enum:"item,run,platform_session" doc:"How far an allow reaches: item: this call only; run: this tool under this policy rule for the rest of the run; platform_session: also for every later run of the platform session. A deny only ever concerns the item."`
	Reason   string `json:"reason,omitempty" maxLength:"1024" doc:"Why, for the audit trail."`
	// TTLSeconds is validated by commands.Validate (scope and decision).
	TTLSeconds int64 `json:"ttlSeconds,omitempty" minimum:"1" maximum:"2592000" doc:"Only with decision allow and scope platform_session: the grant lapses this many seconds after the decision is recorded (at most 30 days); a later call asks again, its runtime.item.awaiting_approval saying askReason grant_expired. Absent: until revoked (DELETE /v1/sessions/{platformSessionId}/grants/{grantId})."`
}

type approvalDecisionInput struct {
	RunID string `path:"runId" maxLength:"160" pattern:"^[A-Za-z0-9._:-]{1,160}$" doc:"The run's id (run_…)."`
	CommandParams
	Body approvalDecisionBody
}

// decisionDescription follows the governance flow of the executor.
const decisionDescription = "Queues a SubmitApprovalDecision command on one item awaiting approval. It is applied " +
	"at once while the run is paused awaiting_approval and the item awaits; the run's other awaiting items stay " +
	"pending. The log records runtime.approval.decision_submitted (with the actor and the approvalId), then: on " +
	"deny, the item fails with errorCode denied_by_user; on allow with scope run or platform_session, " +
	"runtime.permission_grant.applied records a grant (grantId, tool, policy rule) that also resolves the run's " +
	"other items awaiting the same tool and rule. The run resumes (runtime.run.resumed) only when no item awaits " +
	"any more, and the allowed calls then run. Outcome: applied; a decision on an item that does not await " +
	"approval (unknown, or already decided) is rejected with code approval_not_pending; the same " +
	"Idempotency-Key again is a duplicate. A run paused longer than its pause TTL expires instead: its awaiting " +
	"items fail with errorCode expired."

func (a *API) registerSubmitApprovalDecision() {
	register(a, huma.Operation{
		OperationID: "submitApprovalDecision", Method: http.MethodPost, Path: "/v1/runs/{runId}/approval-decisions",
		Summary: "Decide an approval", Description: decisionDescription,
		Tags: []string{"Approvals"}, DefaultStatus: http.StatusAccepted, Errors: runCommandErrors,
	}, func(ctx context.Context, in *approvalDecisionInput) (*commandOutput, error) {
		b := in.Body
		p := commands.SubmitApprovalDecisionPayload{ItemID: b.ItemID, Decision: b.Decision, Scope: b.Scope, Reason: b.Reason,
			TTLSeconds: b.TTLSeconds}
		return a.runCommand(ctx, commands.SubmitApprovalDecision, in.RunID, in.CommandParams, p)
	})
}

type compactionBody struct {
	Reason string `json:"reason,omitempty" maxLength:"1024" doc:"Why the context is compacted."`
}

type compactionInput struct {
	RunID string `path:"runId" maxLength:"160" pattern:"^[A-Za-z0-9._:-]{1,160}$" doc:"The run's id (run_…)."`
	CommandParams
	Body *compactionBody `required:"false"`
}

func (a *API) registerRequestCompaction() {
	register(a, huma.Operation{
		OperationID: "requestCompaction", Method: http.MethodPost, Path: "/v1/runs/{runId}/compact",
		Summary: "Compact a run's context",
		Description: "Queues a RequestCompaction command on a running or paused run (otherwise rejected, " +
			"invalid_state). Outcome: accepted; at the run's next before_model_request its context is compacted: " +
			"runtime.context.compacted (triggerReason manual_compact, carrying this command's commandId, the " +
			"summary, the retained items and the token stats) then runtime.command.applied. The log keeps the " +
			"whole history; only what the model sees is summarised.",
		Tags: []string{"Runs"}, DefaultStatus: http.StatusAccepted, Errors: runCommandErrors,
	}, func(ctx context.Context, in *compactionInput) (*commandOutput, error) {
		p := commands.RequestCompactionPayload{}
		if in.Body != nil {
			p.Reason = in.Body.Reason
		}
		return a.runCommand(ctx, commands.RequestCompaction, in.RunID, in.CommandParams, p)
	})
}
