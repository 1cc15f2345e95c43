package loadtool

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/events"
)

// takeoverWait bounds one takeover, from the process's start to its
// answers: far above the old executor's rebuild of a million events.
const takeoverWait = 10 * time.Minute

// takeovers measures Reps takeovers, each by a fresh executor process, and
// returns the last of them still running: the owner the latencies are
// measured against.
func (hs *history) takeovers(ctx context.Context, fig *HistorySize) (*child, error) {
	var last *child
	for r := range hs.h.Reps {
		if last != nil {
			if err := last.stop(); err != nil {
				return nil, err
			}
		}
		ex, err := hs.takeover(ctx, r, fig)
		if err != nil {
			return nil, err
		}
		last = ex
	}
	return last, nil
}

// takeover starts a fresh executor process while no executor runs, after
// queueing a cancel of an ended run on every partition. The process is
// "assigned" once it owns every partition, and "ready" once every cancel has
// its outcome (no_effect, as for any ended run) on the events topic.
func (hs *history) takeover(ctx context.Context, r int, fig *HistorySize) (*child, error) {
	ctx, cancel := context.WithTimeout(ctx, takeoverWait)
	defer cancel()
	probes, err := hs.probes()
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(probes))
	for i, p := range probes {
		ids[i] = p.CommandID
	}
	hs.b.w.expect(ids...)
	if err := hs.b.send(ctx, probes...); err != nil {
		return nil, err
	}
	ex, err := startChild(hs.child, hs.spec(childExecutor, fmt.Sprintf("history-takeover-%d", r)))
	if err != nil {
		return nil, err
	}
	assigned, err := ex.await(ctx, "assigned")
	if err == nil {
		err = hs.ready(ctx, ex, assigned, ids, fig)
	}
	if err != nil {
		ex.kill()
		return nil, fmt.Errorf("takeover %d: %w", r+1, err)
	}
	return ex, nil
}

// ready waits for the probes' outcomes and records the takeover's figures.
func (hs *history) ready(ctx context.Context, ex *child, assigned stamped, ids []string, fig *HistorySize) error {
	outs, err := hs.b.w.outcomesAt(ctx, ids)
	if err != nil {
		return fmt.Errorf("waiting for the probes' outcomes: %w", err)
	}
	var last time.Time
	for i, o := range outs {
		if o.typ != events.CommandNoEffect {
			return fmt.Errorf("cancel %s of an ended run: outcome %s, want %s", ids[i], o.typ, events.CommandNoEffect)
		}
		if o.at.After(last) {
			last = o.at
		}
	}
	mem, err := ex.stats(ctx)
	if err != nil {
		return err
	}
	fig.TakeoverAssignedMs.add(ms(assigned.at.Sub(ex.began)))
	fig.TakeoverReadyMs.add(ms(last.Sub(ex.began)))
	fig.ExecutorHeapMB.add(mb(mem.HeapAlloc))
	fig.ExecutorRSSMB.add(mb(mem.RSS))
	fig.ExecutorPeakRSSMB.add(mb(mem.PeakRSS))
	return nil
}

// probes are one cancel per partition, each of the latest run that ended
// there, so that every partition has to answer.
func (hs *history) probes() ([]commands.Envelope, error) {
	ended := hs.b.w.lastEnded()
	parts := make([]int32, 0, len(ended))
	for p := range ended {
		parts = append(parts, p)
	}
	slices.Sort(parts)
	if len(parts) < hs.b.Partitions() {
		return nil, fmt.Errorf("runs ended on %d of %d partitions: the history is too small to probe every one", len(parts),
			hs.b.Partitions())
	}
	out := make([]commands.Envelope, 0, len(parts))
	for _, p := range parts {
		env, err := commands.New(commands.CancelRun, commands.Header{RunID: ended[p], TenantID: tenant,
			Actor: events.Actor{Type: "user", ID: "history"}}, commands.CancelRunPayload{Reason: "takeover probe"})
		if err != nil {
			return nil, err
		}
		out = append(out, env)
	}
	return out, nil
}

// spec describes a measured process of role on this system.
func (hs *history) spec(role, executorID string) childSpec {
	o := hs.started
	return childSpec{Role: role, Kafka: o.Kafka, CommandKey: commands.FormatKey(hs.sys.Stack.CommandKeys().Current()),
		Profiles: historyProfiles(), Partitions: hs.b.Partitions(), ExecutorID: executorID, PGDSN: o.PGDSN,
		Tokens: map[string]string{hs.token: tenant}, WaitMax: o.WaitMax}
}
