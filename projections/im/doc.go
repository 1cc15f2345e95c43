// Package im is the IM view of the event log: it flattens a
// run's events into chat messages for IM workers, and its Projector
// publishes them on xbot.im.outbox.v1 keyed by conversation.
//
// What becomes a message (everything else becomes none: notably
// runtime.item.failed, so a call blocked by policy, denied or expired shows
// nothing of its own; the model's reply or the decision or expiry notice
// tells the conversation):
//
//	runtime.item.completed assistant_message, with text → assistant_message (the whole reply; deltas are never sent)
//	runtime.item.started clarification_request         → clarification_request (the question)
//	runtime.item.completed command_execution,
//	  file_change, tool_call                           → tool_result: the tool's name and its output (shortened to 400 bytes)
//	runtime.item.awaiting_approval                     → awaiting_approval: the tool, its arguments (shortened) and why the
//	                                                     policy asks (request: approvalId, toolName, ruleId, reason); actions
//	                                                     Allow, Allow for this run, Allow for this conversation (runs with a
//	                                                     session), Deny. Several may be open at once, each decided on its own
//	runtime.approval.decision_submitted                → status (decision, scope, who decided; grantId when another call's grant decided it)
//	runtime.run.completed                              → status: "Done." (the completion notice)
//	runtime.run.failed                                 → status (errorCode)
//	runtime.run.cancelled                              → status (reason)
//	runtime.run.expired                                → status (what it waited for, the pause TTL in the text)
//	runtime.run.paused awaiting_external_tool_result,
//	  awaiting_checkpoint_restore                      → status (pauseReason); the other pauses were announced by their question or approval request
//	runtime.command.applied with createdRunId          → status: a follow-up started the conversation's next run
//
// Guarantees:
//
//   - Flatten is pure and deterministic: a message depends on its event
//     alone, and its id is MessageID(runId, seq). Flattening records one by
//     one in any chunking, after any restart or in a rebuild, yields the same
//     messages with the same ids, so IM workers dedupe by id.
//   - The conversation is the run's platformSessionId, or its runId when it
//     has none; every message of a conversation has the same Kafka key.
//   - A malformed payload is poison (runner.PoisonError), never guessed at;
//     an event type newer than this build becomes no message.
//   - Nothing is kept between events, so the Projector has no state to
//     rebuild: it keeps no checkpoints (the consumer group's offsets are its
//     position) and Reset has nothing to empty; a rebuild republishes every
//     message under its old id.
//   - The Projector publishes at least once and, within a run, in log
//     order. Two runs of one session (a run and its follow-up) may live on
//     different partitions of the events topic, which are projected
//     independently, so their messages may reach the outbox in either order;
//     order across runs by createdAt.
//
// Mapping onto an IM channel's message frame: Text is one text segment; each
// Action is one action segment {id, payload}. When the button is pressed the
// channel echoes the payload back; ParsePayload turns it into the
// SubmitApprovalDecision to send (use the action id as its idempotencyKey).
package im
