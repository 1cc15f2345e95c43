package epp_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/infra/devstack/eventually"
	"github.com/xbot-runtime/xbot/services/engine/compute"
	"github.com/xbot-runtime/xbot/services/engine/compute/computetest"
	"github.com/xbot-runtime/xbot/services/engine/compute/epp"
)

func TestCallTimeoutSendsCancel(t *testing.T) {
	t.Parallel()
	tr := &tracer{}
	cfg := helperConfig(t, "silent", "")
	cfg.CallTimeout, cfg.Trace = 300*time.Millisecond, tr.trace
	s := spec
	s.SandboxID = "fake-1"
	sb := openRetrying(t, newReference(t, cfg), s) // its sandbox.connect has 300 ms too
	if _, _, err := sb.ReadFile(t.Context(), "f", 0); !errors.Is(err, epp.ErrTimeout) {
		t.Fatalf("ReadFile from a plugin that never answers: %v, want ErrTimeout", err)
	}
	reads := tr.sentOf("files.read")
	if len(reads) != 1 || reads[0].ID == nil {
		t.Fatalf("files.read sent %d times", len(reads))
	}
	want := `$/cancel {"id":` + strings.TrimSpace(string(mustJSON(*reads[0].ID))) + `}`
	eventually.Succeeds(t, 10*time.Second, "the plugin got $/cancel of the files.read", func() error {
		if !slices.Contains(calls(t, cfg), want) {
			return errors.New("not yet")
		}
		return nil
	})
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

func TestCancelKillsExecStart(t *testing.T) {
	t.Parallel()
	tr := &tracer{}
	cfg := referenceConfig(t)
	cfg.Trace = tr.trace
	sb := open(t, newReference(t, cfg), spec)
	marker := sleepMarker()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := sb.Exec(ctx, compute.ExecRequest{Command: "sleep " + marker})
		done <- err
	}()
	eventually.Succeeds(t, 30*time.Second, "the command running", func() error {
		if len(computetest.Processes(marker)) == 0 {
			return errors.New("not yet")
		}
		return nil
	})
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Exec after cancel: %v", err)
	}
	starts, cancels := tr.sentOf("exec.start"), tr.sentOf("$/cancel")
	if len(starts) != 1 || len(cancels) != 1 || !strings.Contains(string(cancels[0].Params), string(mustJSON(*starts[0].ID))) {
		t.Errorf("exec.start %v, $/cancel %v: want one $/cancel naming the exec.start's id", starts, cancels)
	}
	waitGone(t, marker)
}

// TestKillReachesAStartNotAnsweredYet: Kill while a command's exec.start
// is not answered yet (its process may run already) cancels that request:
// the command is not missed.
func TestKillReachesAStartNotAnsweredYet(t *testing.T) {
	t.Parallel()
	tr := &tracer{}
	cfg := helperConfig(t, "startwait", "")
	cfg.Features, cfg.Trace = append(cfg.Features, "exec.stream"), tr.trace
	sb := open(t, newReference(t, cfg), spec)
	go func() { _, _ = sb.Exec(t.Context(), compute.ExecRequest{Command: "sleep 600"}) }()
	eventually.Holds(t, 30*time.Second, "exec.start sent", func() bool { return len(tr.sentOf("exec.start")) == 1 })
	if err := sb.Kill(); err != nil {
		t.Fatal(err)
	}
	start := tr.sentOf("exec.start")[0]
	want := string(mustJSON(map[string]int64{"id": *start.ID}))
	eventually.Succeeds(t, 30*time.Second, "$/cancel of the exec.start", func() error {
		for _, c := range tr.sentOf("$/cancel") {
			if string(c.Params) == want {
				return nil
			}
		}
		return errors.New("not sent")
	})
}
