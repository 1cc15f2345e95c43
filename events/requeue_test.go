package events_test

import (
	"errors"
	"testing"

	"github.com/xbot-runtime/xbot/events"
)

// TestRequeuedRunResumesNotStarts: a paused run resumed while another run
// holds its sandbox key waits queued (paused → queued → running). It
// resumes, never starts again nor freezes a second snapshot; its open items
// may still close while it waits; it cannot queue while an item awaits
// approval; leaving the queue clears its position.
func TestRequeuedRunResumesNotStarts(t *testing.T) {
	t.Parallel()
	paused := stateIn(t, events.StatusPaused) // itm_open, started
	fold := func(st events.RunState, typ events.Type, item string, p any) (events.RunState, error) {
		return events.Fold(st, env(t, st.LastSeq+1, typ, item, "cmd_x", p))
	}
	queued, err := fold(paused, events.RunQueued, "", events.RunQueuedPayload{Position: 2})
	if err != nil || queued.Status != events.StatusQueued || !queued.Requeued || queued.QueuePosition != 2 {
		t.Fatalf("paused → queued: %v %+v", err, queued)
	}
	moved, err := fold(queued, events.RunQueued, "", events.RunQueuedPayload{Position: 1})
	if err != nil || !moved.Requeued || moved.QueuePosition != 1 {
		t.Fatalf("moving up: %v %+v", err, moved)
	}
	var ite *events.IllegalTransitionError
	for _, typ := range []events.Type{events.RunStarted, events.CapabilitySnapshotFrozen} {
		if _, err := fold(moved, typ, "", validPayload(typ)); !errors.As(err, &ite) {
			t.Errorf("%s of a requeued run: got %v, want IllegalTransitionError", typ, err)
		}
	}
	if _, err := fold(moved, events.ItemFailed, "itm_open", events.ItemFailedPayload{ItemType: events.ItemToolCall,
		ErrorCode: events.ToolErrCancelled}); err != nil {
		t.Errorf("an open item of a requeued run cannot close: %v", err)
	}
	running, err := fold(moved, events.RunResumed, "", events.RunResumedPayload{})
	if err != nil || running.Status != events.StatusRunning || running.Requeued || running.QueuePosition != 0 {
		t.Fatalf("queued → running: %v %+v", err, running)
	}
	var pe *events.PayloadError
	if _, err := fold(paused, events.RunQueued, "", events.RunQueuedPayload{}); !errors.As(err, &pe) {
		t.Errorf("position 0: got %v, want PayloadError", err)
	}
	fresh := stateIn(t, events.StatusQueued)
	if _, err := fold(fresh, events.RunResumed, "", events.RunResumedPayload{}); !errors.As(err, &ite) {
		t.Errorf("resuming a run that never ran: got %v, want IllegalTransitionError", err)
	}
}

// TestRunAwaitingApprovalCannotQueue: a run queues from a pause only once
// nobody is asked anything any more.
func TestRunAwaitingApprovalCannotQueue(t *testing.T) {
	t.Parallel()
	st := stateIn(t, events.StatusRunning)
	st, err := events.Fold(st, env(t, st.LastSeq+1, events.ItemAwaitingApproval, "itm_open", "",
		events.ItemAwaitingApprovalPayload{ItemType: events.ItemToolCall}))
	if err == nil {
		st, err = events.Fold(st, env(t, st.LastSeq+1, events.RunPaused, "", "", validPayload(events.RunPaused)))
	}
	if err != nil {
		t.Fatal(err)
	}
	var ite *events.IllegalTransitionError
	if _, err := events.Fold(st, env(t, st.LastSeq+1, events.RunQueued, "", "", events.RunQueuedPayload{Position: 1})); !errors.As(err, &ite) {
		t.Errorf("queued while awaiting approval: got %v, want IllegalTransitionError", err)
	}
}
