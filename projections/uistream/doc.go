// Package uistream is the browser view of the event log: a pure, deterministic mapping from a run's events to the Vercel
// AI SDK's UI message stream chunks (ai@6, header
// x-vercel-ai-ui-message-stream: v1), its SSE framing with resumable ids,
// and the live fan-out of one API instance's event subscription to all of
// its stream clients.
//
// # Replies
//
// A run is one reply and one assistant message: messageId = response_id =
// the runId. The message opens with a start chunk (messageMetadata
// {response_id, input_ids, origin}) when the run starts and ends with finish
// (completed: finishReason from the last model response, "stop" by
// default), error + finish "error" (failed), finish "other" (expired: nobody
// answered in time, which is not an error) or abort (cancelled); the last of
// these carries messageMetadata.outcome and usage. A paused run closes the
// message with finish "tool-calls"; the next chunk of the reply reopens it
// with a start chunk carrying the same messageId (the SDK keeps adding to the
// same message). Chunks of events that happen while the run is paused (an
// approval decision, a clarification's answer) are held and sent when the
// message reopens. Several calls may await approval at once, each decided on
// its own: a SubmitApprovalDecision that leaves the run paused (another call
// still awaits) reopens the message for its decisions at its
// runtime.command.applied and closes it again with finish "tool-calls"; the
// one that resumes the run sends them with the run.resumed start.
//
// # Mapping
//
//	runtime.run.accepted              records input_ids (the input id: the create's Idempotency-Key, or the follow-up's or session message's whose input created the run)
//	runtime.run.started               start
//	runtime.run.paused                [data-interaction (question) per clarification_request waited on] finish-step? finish{tool-calls}
//	runtime.run.resumed               start (reopen) + held chunks
//	runtime.run.completed             [start] finish-step? finish{stop|length|content-filter, metadata}
//	runtime.run.failed                [start] finish-step? error{errorText} finish{error, metadata}
//	runtime.run.expired               [start] finish-step? finish{other, metadata outcome "expired"}
//	runtime.run.cancelled             [start] finish-step? message-metadata abort{reason?}
//	runtime.run.checkpoint_restored   nothing
//	runtime.command.applied           AppendUserInput (steer, clarification): message-metadata with the new input_ids
//	                                  SubmitApprovalDecision leaving the run paused: start + held chunks + finish{tool-calls}
//	runtime.command.{accepted,rejected,no_effect,duplicate}  nothing
//	runtime.item.started              assistant_message: start-step (unless its reasoning began the step)
//	                                  reasoning: finish-step? start-step
//	                                  tool items (command_execution, file_change, tool_call, mcp_tool_call,
//	                                  clarification_request): tool-input-start + tool-input-available
//	                                  {toolCallId = itemId, toolName, input = parsed arguments or the raw text, dynamic}
//	                                  user_message, plan, context_compaction: nothing
//	runtime.item.delta                assistant_message: [text-start{id = itemId}] text-delta
//	                                  reasoning: [reasoning-start] reasoning-delta
//	                                  tool items: data-tool-output {toolCallId, delta} (transient)
//	runtime.item.completed            assistant_message / reasoning: [missing text] text-end / reasoning-end
//	                                  tool items: tool-output-available {output: {output, exec?, fileChange?}}
//	                                  + data-file-changes when the tool changed a file
//	                                  + data-interaction (answered) for an answered question
//	                                  plan: data-plan
//	runtime.item.failed               assistant_message / reasoning: [text-end] + message-metadata retracting the part
//	                                  tool items: tool-output-error{errorText "code: message"} (blocked_by_policy:
//	                                  the rule's reason; expired; ...), tool-output-denied for denied_by_user
//	                                  (once: not after the decision's) + data-interaction (withdrawn/expired)
//	runtime.item.awaiting_approval    tool-approval-request {approvalId = toolCallId = itemId, approvalDescriptor
//	                                  {approvalId (apr_…), ruleId, reason}} + data-interaction (open, same fields)
//	runtime.approval.decision_submitted  data-interaction (answered: decision, scope, decisionReason, decidedBy,
//	                                  grantId when a grant given for another call covered it) + tool-output-denied on deny
//	runtime.context.compacted         data-compaction {artifactId, triggerReason, cutoffEventSeq, tokenStats, summary}
//	                                  (id = artifactId; not transient: a reloaded message still shows where the
//	                                  context was summarised)
//	runtime.permission_grant.applied, runtime.permission_grant.revoked, runtime.capability.snapshot_frozen: nothing
//
// # Status
//
// Every lifecycle event that changes what the run is doing ends its chunks
// with a transient data-status part {status, runId, reason?} (Status, the
// runtime client contract's StatusChanged), sent only when the status
// changes: waiting (reason "queued") at runtime.run.accepted, working at
// started and resumed, waiting (reason = the pauseReason) at paused, idle at
// the run's end. It is sent even while the message is closed (after a
// pause's finish, after the final finish or abort), and nothing else is. A
// session stream carries the parts of each run it streams, so the session's
// status is the last one received: idle after its latest run ended.
//
// Text and reasoning parts carry providerMetadata {"xbot": {"part_id":
// itemId}}; messageMetadata.retracted_part_ids lists the parts of model calls
// that failed (a repeated call after a crash shows its text anew). Chunk
// objects carry only fields the SDK's schema declares for their type.
//
// # Positions
//
// A run stream's SSE id is the seq of the event a chunk came from: "N" on
// the event's last chunk, "N.i" on its earlier ones (i from 0), so a client
// that resumes with Last-Event-ID (or ?afterSeq=N, meaning "N") gets
// exactly the chunks it has not seen, even when it left in the middle of
// one event's chunks. A session stream prefixes the run: "<runId>:N[.i]".
// A run stream ends with data: [DONE] once the reply has ended; a session
// stream stays open. Idle streams send ": keep-alive" comments.
//
// # Guarantees
//
//   - Mapping is deterministic: backfilled and live streams are the same
//     bytes, and resuming at any id continues exactly where it stopped.
//   - No delta arrives without its start: a client without a position gets
//     a run from seq 1, and a session from the start of its first reply that
//     has not ended.
//   - A stream subscribes to the Hub before it reads the read model, drops
//     live events it already mapped and fills a gap (an event ahead of the
//     next seq, or a hub that has seen more than the read model) from the
//     hub's retained records, or else by waiting for the read model, so
//     nothing is lost or repeated at the seam.
//   - The hub decodes a record only when a stream (or a waiter) needs its
//     run, and once for all of its readers (Record).
//   - A slow client is cut off by the hub (its stream ends; it resumes from
//     its last id) and never slows the others.
//   - A session's replies are streamed one after another in creation order;
//     a run created while an earlier one of the same session is still going
//     appears once that one ends.
package uistream
