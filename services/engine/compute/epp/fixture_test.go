package epp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/infra/devstack/eventually"
	"github.com/xbot-runtime/xbot/services/engine/compute"
	"github.com/xbot-runtime/xbot/services/engine/compute/computetest"
	"github.com/xbot-runtime/xbot/services/engine/compute/epp"
	"github.com/xbot-runtime/xbot/services/engine/compute/epp/schema"
)

var update = flag.Bool("update", false, "rewrite docs/epp-methods.json from the host's method table")

const fixturePath = "../../../../docs/epp-methods.json"

// TestFixtureIsCurrent: the published table is the host's, and the
// reference plugin was written from the same copy.
func TestFixtureIsCurrent(t *testing.T) {
	if _, err := os.Stat(fixturePath); err != nil && os.Getenv(computetest.PluginEnv) != "" {
		t.Skip("run outside the repository (an unprivileged run of the test binary)")
	}
	if *update {
		for _, p := range []string{fixturePath, "../../../../cmd/local-process/epp-methods.json"} {
			if err := os.WriteFile(p, epp.Fixture(), 0o644); err != nil { // #nosec G306 -- a published document
				t.Fatal(err)
			}
		}
	}
	for _, p := range []string{fixturePath, "../../../../cmd/local-process/epp-methods.json"} {
		got, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, epp.Fixture()) {
			t.Errorf("%s differs from the host's method table; run go test ./services/engine/compute/epp -run TestFixtureIsCurrent -update", p)
		}
	}
}

// loadFixture reads docs/epp-methods.json on its own, not through the
// host's Go types (TestFixtureIsCurrent keeps the file equal to
// epp.Fixture, which the tests read, so that they also run outside the
// repository).
func loadFixture(t *testing.T) *schema.Table {
	t.Helper()
	tb, err := schema.Parse(epp.Fixture())
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

// TestHostSpeaksTheFixture drives every method the table says the host
// calls and checks each message against docs/epp-methods.json: what the
// host writes has only listed fields of the right types, all required ones,
// and what it accepted from the reference plugin holds what the table
// requires of results and notifications.
func TestHostSpeaksTheFixture(t *testing.T) {
	t.Parallel()
	tr := &tracer{}
	exercise(t, tr)
	tb := loadFixture(t)
	byName := map[string]int{}
	for i, m := range tb.Methods {
		byName[m.Name] = i
	}
	sentMethods := map[[2]int64]string{} // by session and id
	called := map[string]bool{}
	for _, e := range tr.all {
		if !e.Sent {
			continue
		}
		raw := e.Message
		var m struct {
			ID     *int64                     `json:"id"`
			Method string                     `json:"method"`
			Params map[string]json.RawMessage `json:"params"`
		}
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatalf("the host wrote %s: %v", raw, err)
		}
		i, ok := byName[m.Method]
		row := tb.Methods[i]
		if !ok || row.Direction != "host_to_plugin" || (row.Kind == "request") != (m.ID != nil) {
			t.Errorf("the host wrote %s, which the table does not list so", raw)
			continue
		}
		if err := tb.Check(row.Params, m.Params, m.Method, true); err != nil {
			t.Errorf("%v in %s", err, raw)
		}
		called[m.Method] = true
		if m.ID != nil {
			sentMethods[[2]int64{e.Session, *m.ID}] = m.Method
		}
	}
	for _, m := range tb.Methods {
		if m.HostCalls && m.Direction == "host_to_plugin" && !called[m.Name] {
			t.Errorf("the table says the host calls %s; it never did", m.Name)
		}
	}
	checkRead(t, tb, byName, tr, sentMethods)
}

// checkRead checks the results and notifications the host read.
func checkRead(t *testing.T, tb *schema.Table, byName map[string]int, tr *tracer, sent map[[2]int64]string) {
	t.Helper()
	for _, e := range tr.all {
		if e.Sent {
			continue
		}
		raw := e.Message
		var m struct {
			ID     *int64                     `json:"id"`
			Method string                     `json:"method"`
			Params map[string]json.RawMessage `json:"params"`
			Result map[string]json.RawMessage `json:"result"`
		}
		if json.Unmarshal(raw, &m) != nil {
			continue // the test plugins' malformed lines are not from the reference plugin
		}
		if m.Method != "" {
			if err := tb.Check(tb.Methods[byName[m.Method]].Params, m.Params, m.Method, false); err != nil {
				t.Errorf("%v in %s", err, raw)
			}
			continue
		}
		if method, ok := sent[[2]int64{e.Session, *m.ID}]; ok && m.Result != nil {
			if err := tb.Check(tb.Methods[byName[method]].Result, m.Result, method+" result", false); err != nil {
				t.Errorf("%v in %s", err, raw)
			}
		}
	}
}

// exercise calls every method the host calls, through the reference
// plugin and (for sandbox.get, whose caller is a plugin without
// sandbox.connect) the test plugin.
func exercise(t *testing.T, tr *tracer) {
	cfg := referenceConfig(t)
	cfg.Trace = tr.trace
	p := newReference(t, cfg)
	sb := open(t, p, spec)
	ctx := t.Context()
	mustDo(t, sb.WriteFile(ctx, "big.bin", bytes.Repeat([]byte("x"), 5<<20)))
	if data, _, err := sb.ReadFile(ctx, "big.bin", 0); err != nil || len(data) != 5<<20 {
		t.Fatalf("ReadFile of 5 MiB: %d bytes, %v", len(data), err)
	}
	_, err := sb.ListFiles(ctx, ".", 2)
	mustDo(t, err)
	_, err = sb.Exec(ctx, compute.ExecRequest{Command: "cat", Stdin: strings.NewReader("in"), Timeout: time.Minute})
	mustDo(t, err)
	killed(t, sb)
	cancelled(t, sb)
	again := spec
	again.SandboxID = compute.SandboxIDOf(sb)
	open(t, p, again) // sandbox.connect
	mustDo(t, p.Destroy(ctx, spec.Key))
	run := referenceConfig(t)
	run.Trace, run.Features = tr.trace, []string{"sandbox.lifecycle", "exec.run", "files.rw"}
	_, err = open(t, newReference(t, run), spec).Exec(ctx, compute.ExecRequest{Command: "true"})
	mustDo(t, err)
	get := helperConfig(t, "noconnect", "")
	get.Trace = tr.trace
	open(t, newReference(t, get), again)
}

func mustDo(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// killed runs a command and kills it with Kill (process.kill).
func killed(t *testing.T, sb compute.Sandbox) {
	marker := sleepMarker()
	done := make(chan error, 1)
	go func() {
		_, err := sb.Exec(t.Context(), compute.ExecRequest{Command: "sleep " + marker})
		done <- err
	}()
	running(t, marker)
	mustDo(t, sb.Kill())
	mustDo(t, <-done)
}

// cancelled runs a command and cancels it ($/cancel).
func cancelled(t *testing.T, sb compute.Sandbox) {
	marker := sleepMarker()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := sb.Exec(ctx, compute.ExecRequest{Command: "sleep " + marker})
		done <- err
	}()
	running(t, marker)
	cancel()
	<-done
	waitGone(t, marker)
}

func running(t *testing.T, marker string) {
	t.Helper()
	eventually.Succeeds(t, 30*time.Second, "the command running", func() error {
		if len(computetest.Processes(marker)) == 0 {
			return fmt.Errorf("no process %s", marker)
		}
		return nil
	})
}
