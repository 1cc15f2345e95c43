package epp_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/xbot-runtime/xbot/infra/devstack/eventually"
	"github.com/xbot-runtime/xbot/services/engine/compute"
	"github.com/xbot-runtime/xbot/services/engine/compute/computetest"
	"github.com/xbot-runtime/xbot/services/engine/compute/epp"
)

// secretToken is the test plugin's secret setting.
const secretToken = "s3cr3t-token-value"

var spec = compute.Spec{Key: compute.Key{TenantID: "t", WorkspaceID: "w", AgentID: "a", OwnerID: "o"}, SessionID: "s", RunID: "r"}

// helperConfig starts this test binary as a test plugin in modes (see
// helperPlugin); marker, when set, is its last argument.
func helperConfig(t *testing.T, modes, marker string) epp.Config {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"./" + filepath.Base(exe), "-epp-helper", modes}
	if marker != "" {
		args = append(args, marker)
	}
	return epp.Config{ID: "fake", Dir: filepath.Dir(exe), Command: args, DataDir: t.TempDir(),
		Features: []string{"sandbox.lifecycle", "exec.run", "files.rw"}, Settings: map[string]string{"token": secretToken, "region": "r1"},
		Secrets: []string{"token"}, Logger: zaptest.NewLogger(t)}
}

func open(t *testing.T, p *epp.Provider, s compute.Spec) compute.Sandbox {
	t.Helper()
	sb, err := p.Open(t.Context(), s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sb.Close() })
	return sb
}

// calls is what the test plugin logged: one "method params" per line.
func calls(t *testing.T, cfg epp.Config) []string {
	t.Helper()
	data, _ := os.ReadFile(filepath.Join(cfg.DataDir, "calls.log"))
	return strings.Split(strings.TrimSpace(string(data)), "\n")
}

func count(lines []string, method string) int {
	n := 0
	for _, l := range lines {
		if strings.HasPrefix(l, method+" ") {
			n++
		}
	}
	return n
}

// tracer records the messages a provider writes and reads.
type tracer struct {
	mu   sync.Mutex
	all  []epp.TraceEvent
	sent []json.RawMessage
}

func (tr *tracer) trace(e epp.TraceEvent) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.all = append(tr.all, e)
	if e.Sent {
		tr.sent = append(tr.sent, e.Message)
	}
}

type wireMsg struct {
	ID     *int64          `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// sentOf returns the requests and notifications of method the host wrote.
func (tr *tracer) sentOf(method string) []wireMsg {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	var out []wireMsg
	for _, raw := range tr.sent {
		var m wireMsg
		if json.Unmarshal(raw, &m) == nil && m.Method == method {
			out = append(out, m)
		}
	}
	return out
}

func TestHandshake(t *testing.T) {
	t.Parallel()
	cfg := helperConfig(t, "base", "")
	if _, err := epp.New(t.Context(), cfg); err != nil {
		t.Fatal(err)
	}
	var report struct {
		Argv       []string `json:"argv"`
		Initialize struct {
			Protocol string            `json:"protocol"`
			Host     map[string]string `json:"host"`
			Config   map[string]string `json:"config"`
			DataDir  string            `json:"data_dir"`
		} `json:"initialize"`
	}
	readReport(t, cfg, &report)
	in := report.Initialize
	if in.Protocol != "epp/1" || in.Host["name"] != "xbot" || in.DataDir != cfg.DataDir ||
		in.Config["token"] != secretToken || in.Config["region"] != "r1" {
		t.Errorf("initialize params %+v", in)
	}
	if strings.Contains(strings.Join(report.Argv, " "), secretToken) {
		t.Error("a setting reached the plugin's argv")
	}
	if got := calls(t, cfg); len(got) != 2 || count(got, "initialize") != 1 || count(got, "shutdown") != 1 {
		t.Errorf("New's calls: %q, want initialize then shutdown", got)
	}
}

func readReport(t *testing.T, cfg epp.Config, v any) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(cfg.DataDir, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatal(err)
	}
}

func TestProtocolVersionMismatch(t *testing.T) {
	t.Parallel()
	marker := "proto-" + t.Name()
	_, err := epp.New(t.Context(), helperConfig(t, "proto2", marker))
	if !errors.Is(err, epp.ErrProtocol) || !strings.Contains(err.Error(), "epp/2") {
		t.Fatalf("New with a plugin speaking epp/2: %v, want ErrProtocol naming epp/2", err)
	}
	waitGone(t, marker)
}

func TestStartupTimeout(t *testing.T) {
	t.Parallel()
	cfg := helperConfig(t, "slowstart", "slow-"+t.Name())
	cfg.StartupTimeout = 300 * time.Millisecond
	_, err := epp.New(t.Context(), cfg)
	if !errors.Is(err, epp.ErrTimeout) {
		t.Fatalf("New with a plugin that never answers initialize: %v, want ErrTimeout", err)
	}
	waitGone(t, "slow-"+t.Name())
}

// waitGone waits (bounded) until no process carries marker.
func waitGone(t *testing.T, marker string) {
	t.Helper()
	eventually.Succeeds(t, 10*time.Second, "the plugin's processes gone", func() error {
		if ps := computetest.Processes(marker); len(ps) > 0 {
			return errors.New(ps[0].String())
		}
		return nil
	})
}

func TestUnknownMethod(t *testing.T) {
	t.Parallel()
	cfg := helperConfig(t, "noconnect", "")
	p := newReference(t, cfg)
	// sandbox.connect is optional: -32601 makes the host use sandbox.get.
	s := spec
	s.SandboxID = "fake-1"
	sb := open(t, p, s)
	if got := calls(t, cfg); count(got, "sandbox.connect") != 1 || count(got, "sandbox.get") != 1 {
		t.Errorf("calls %q: want connect answered -32601, then get", got)
	}
	// files.list is required of files.rw; a plugin that answers -32601 does not support it.
	_, err := sb.ListFiles(t.Context(), ".", 1)
	var pe *epp.Error
	if !errors.Is(err, epp.ErrFeatureNotSupported) || !errors.As(err, &pe) || pe.Code != epp.CodeMethodNotFound {
		t.Errorf("ListFiles from a plugin without files.list: %v, want -32601 as ErrFeatureNotSupported", err)
	}
}

func TestFeatureGate(t *testing.T) {
	t.Parallel()
	tr := &tracer{}
	cfg := referenceConfig(t)
	cfg.Features = []string{"sandbox.lifecycle", "exec.run"}
	cfg.Trace = tr.trace
	sb := open(t, newReference(t, cfg), spec)
	_, _, err := sb.ReadFile(t.Context(), "f.txt", 0)
	var fe *epp.FeatureError
	if !errors.Is(err, epp.ErrFeatureNotSupported) || !errors.As(err, &fe) || fe.Feature != "files.rw" {
		t.Errorf("ReadFile without files.rw: %v, want a FeatureError for files.rw", err)
	}
	if n := len(tr.sentOf("files.read")); n != 0 {
		t.Errorf("the host sent %d files.read for a feature the plugin does not declare", n)
	}
	// Without exec.stream the host runs commands with exec.run.
	var out strings.Builder
	if res, err := sb.Exec(t.Context(), compute.ExecRequest{Command: "echo via-run", Stdout: &out}); err != nil || res.ExitCode != 0 || out.String() != "via-run\n" {
		t.Errorf("Exec = %+v, %v, %q", res, err, out.String())
	}
	if len(tr.sentOf("exec.start")) != 0 || len(tr.sentOf("exec.run")) != 1 {
		t.Error("without exec.stream the host must use exec.run only")
	}
	// Read-only mounts (skills) need mounts.read_only: no sandbox is made.
	mounted := spec
	mounted.RunID = "r-mounts"
	mounted.ReadOnlyMounts = []compute.ReadOnlyMount{{Source: t.TempDir(), Target: "/skills/demo@1.0.0"}}
	if _, err := newReference(t, cfg).Open(t.Context(), mounted); !errors.As(err, &fe) || fe.Feature != "mounts.read_only" {
		t.Errorf("Open with a mount without mounts.read_only: %v, want a FeatureError for it", err)
	}
	cfg = referenceConfig(t)
	cfg.Features = []string{"files.rw", "exec.run"}
	if _, err := epp.New(t.Context(), cfg); !errors.Is(err, epp.ErrFeatureNotSupported) {
		t.Errorf("New without sandbox.lifecycle: %v, want ErrFeatureNotSupported", err)
	}
}

func TestLostSandbox(t *testing.T) {
	t.Parallel()
	s := spec
	s.SandboxID = "gone"
	_, err := newReference(t, helperConfig(t, "base", "")).Open(t.Context(), s)
	if !errors.Is(err, compute.ErrSandboxLost) || !errors.Is(err, epp.ErrSandboxNotFound) {
		t.Fatalf("Open of a recorded sandbox that is gone: %v, want ErrSandboxLost", err)
	}
}

func TestRetriesOnlyIdempotentRetryable(t *testing.T) {
	t.Parallel()
	cfg := helperConfig(t, "retry", "")
	s := spec
	s.SandboxID = "fake-1"
	sb := open(t, newReference(t, cfg), s)
	_, err := sb.Exec(t.Context(), compute.ExecRequest{Command: "true"})
	var pe *epp.Error
	if !errors.As(err, &pe) || !pe.Retryable {
		t.Fatalf("Exec: %v, want the plugin's retryable error", err)
	}
	got := calls(t, cfg)
	if count(got, "sandbox.connect") != 3 || count(got, "exec.run") != 1 {
		t.Errorf("calls %q: want sandbox.connect tried 3 times (idempotent, retryable), exec.run once", got)
	}
}
