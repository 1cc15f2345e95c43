package main_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/infra/devstack"
	"github.com/xbot-runtime/xbot/infra/devstack/eventually"
	"github.com/xbot-runtime/xbot/infra/devstack/kafkatest"
	"github.com/xbot-runtime/xbot/infra/devstack/pgtest"
	"github.com/xbot-runtime/xbot/services/api/client"
	"github.com/xbot-runtime/xbot/services/engine/compute/computetest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Run(kafkatest.Wrap(m))) }

// build compiles the xbot binary once per test.
func build(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "xbot")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// proc is a running xbot subcommand whose output is collected.
type proc struct {
	cmd *exec.Cmd
	out *safeBuffer
}

func start(t *testing.T, bin string, env []string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Dir = t.TempDir() // no stray ./.env
	buf := &safeBuffer{}
	cmd.Stdout, cmd.Stderr = buf, buf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, out: buf}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
		if t.Failed() {
			t.Logf("xbot %s output:\n%s", args[0], buf.String())
		}
	})
	return p
}

// stop sends SIGTERM and waits for a clean exit.
func (p *proc) stop(t *testing.T) {
	t.Helper()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v\n%s", err, p.out.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("no exit within 30 s of SIGTERM")
	}
}

func (p *proc) waitFor(t *testing.T, re *regexp.Regexp, within time.Duration) []string {
	t.Helper()
	var m []string
	eventually.Succeeds(t, within, fmt.Sprintf("output %q", re), func() error {
		if m = re.FindStringSubmatch(p.out.String()); m != nil {
			return nil
		}
		return fmt.Errorf("not yet in:\n%s", p.out.String())
	})
	return m
}

func TestDevRunsEverythingAndStopsCleanly(t *testing.T) {
	bin := build(t)
	kport, _ := devstack.FreePort()
	aport, _ := devstack.FreePort()
	data := t.TempDir()
	dev := start(t, bin, nil, "dev", "--data-dir", data,
		"--dev-kafka-addr", fmt.Sprintf("127.0.0.1:%d", kport), "--api-addr", fmt.Sprintf("127.0.0.1:%d", aport),
		"--metrics-addr", "off", "--im-addr", "127.0.0.1:0")
	m := dev.waitFor(t, regexp.MustCompile(`xbot dev ready: api=(\S+) kafka=(\S+) token=(\S+) im=(\S+)`), 60*time.Second)
	api, token := m[1], m[3]
	runID := createAndComplete(t, api, token)
	chatOnce(t, m[4], token)
	pgPids := pidsUnder(t, filepath.Join(data, "postgres"))
	if len(pgPids) == 0 {
		t.Fatalf("no postgres process found for the data dir")
	}
	dev.stop(t)
	if left := pidsUnder(t, filepath.Join(data, "postgres")); len(left) > 0 {
		t.Fatalf("postgres processes left behind: %v", left)
	}
	assertPrivateTree(t, data)
	// A restart on the same data dir resumes: same token, the run is still there.
	dev2 := start(t, bin, nil, "dev", "--data-dir", data,
		"--dev-kafka-addr", fmt.Sprintf("127.0.0.1:%d", kport), "--api-addr", fmt.Sprintf("127.0.0.1:%d", aport),
		"--metrics-addr", "off", "--im-addr", "127.0.0.1:0")
	m2 := dev2.waitFor(t, regexp.MustCompile(`xbot dev ready: api=(\S+) kafka=(\S+) token=(\S+)`), 60*time.Second)
	if m2[3] != token {
		t.Fatalf("token changed across a restart with --data-dir")
	}
	if run, err := apiAt(t, api, token).GetRun(context.Background(), runID); err != nil || run.Status != "completed" {
		t.Fatalf("after restart: %+v %v", run, err)
	}
	createAndComplete(t, api, token)
	dev2.stop(t)
}

func TestSplitModeProcesses(t *testing.T) {
	bin := build(t)
	kc := kafkatest.NewCluster(t, 4).Config()
	aport, _ := devstack.FreePort()
	dsn := pgtest.NewDatabase(t)
	env := []string{"XBOT_KAFKA_BROKERS=" + strings.Join(kc.Brokers, ","), "XBOT_PG_DSN=" + dsn,
		"XBOT_KAFKA_TOPIC_PREFIX=" + kc.TopicPrefix, "XBOT_KAFKA_GROUP_PREFIX=" + kc.GroupPrefix,
		"XBOT_API_TOKENS=split-token=acme", fmt.Sprintf("XBOT_API_ADDR=127.0.0.1:%d", aport), "XBOT_KAFKA_PARTITIONS=4",
		"XBOT_COMMAND_SIGNING_KEY=" + commands.FormatKey(commands.GenerateKeyRing().Current()),
		"XBOT_COMPUTE_DIR=" + computetest.Dir(t), "XBOT_METRICS_ADDR=off"}
	mig := start(t, bin, env, "migrate")
	if err := mig.cmd.Wait(); err != nil {
		t.Fatalf("migrate: %v\n%s", err, mig.out.String())
	}
	// Every component serves its own /metrics.
	maddr := map[string]string{"ex1": metricsAddr(t), "ex2": metricsAddr(t), "proj": metricsAddr(t), "api": metricsAddr(t)}
	exe1 := start(t, bin, append(env, "XBOT_EXECUTOR_ID=ex1", "XBOT_METRICS_ADDR="+maddr["ex1"]), "executor")
	exe2 := start(t, bin, append(env, "XBOT_EXECUTOR_ID=ex2", "XBOT_METRICS_ADDR="+maddr["ex2"]), "executor")
	proj := start(t, bin, append(env, "XBOT_METRICS_ADDR="+maddr["proj"]), "projector", "postgres")
	api := start(t, bin, append(env, "XBOT_METRICS_ADDR="+maddr["api"]), "api")
	base := fmt.Sprintf("http://127.0.0.1:%d", aport)
	health := apiAt(t, base, "")
	eventually.Succeeds(t, 30*time.Second, "split stack healthy", func() error {
		return health.Healthy(context.Background())
	})
	for range 4 {
		createAndComplete(t, base, "split-token")
	}
	assertSplitMetrics(t, maddr)
	if !json.Valid([]byte(firstLine(api.out.String()))) {
		t.Fatalf("split mode must log JSON, got %q", firstLine(api.out.String()))
	}
	for _, p := range []*proc{api, proj, exe2, exe1} {
		p.stop(t)
	}
	// With the projector stopped, the view is rebuilt from the beginning.
	before := countEvents(t, dsn)
	replay := start(t, bin, env, "replay", "--projector", "postgres", "--from-beginning")
	if err := replay.cmd.Wait(); err != nil {
		t.Fatalf("replay: %v\n%s", err, replay.out.String())
	}
	if out := replay.out.String(); !strings.Contains(out, "100%") || !strings.Contains(out, "done in") {
		t.Errorf("replay output lacks its final progress line:\n%s", out)
	}
	if after := countEvents(t, dsn); after != before || before == 0 {
		t.Errorf("run_events: %d rows before the replay, %d after", before, after)
	}
}

func countEvents(t *testing.T, dsn string) int {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	var n int
	if err := pool.QueryRow(context.Background(), "SELECT count(*) FROM run_events").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func createAndComplete(t *testing.T, api, token string) string {
	t.Helper()
	c := apiAt(t, api, token)
	res, err := c.CreateRun(context.Background(), client.CreateRunRequest{AgentID: "demo",
		Input: client.UserInput{Content: "from a process test"}}, client.CommandOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	runID := res.RunID
	eventually.Succeeds(t, 5*time.Second, "run "+runID+" completed", func() error {
		run, err := c.GetRun(context.Background(), runID)
		if err == nil && run.Status != "completed" {
			err = fmt.Errorf("status %s", run.Status)
		}
		return err
	})
	return runID
}

// apiAt is a client of the API at base that sends token.
func apiAt(t *testing.T, base, token string) *client.Client {
	t.Helper()
	c, err := client.New(client.Config{BaseURL: base, Token: token})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// pidsUnder lists processes whose working directory is under dir (postgres
// runs in its data directory).
func pidsUnder(t *testing.T, dir string) []string {
	t.Helper()
	ents, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range ents {
		cwd, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd"))
		if err == nil && strings.HasPrefix(cwd, dir) {
			out = append(out, e.Name())
		}
	}
	return out
}

func firstLine(s string) string {
	sc := bufio.NewScanner(strings.NewReader(s))
	if sc.Scan() {
		return sc.Text()
	}
	return ""
}

// safeBuffer is a bytes.Buffer safe for a process writing while the test reads.
type safeBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *safeBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *safeBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// assertPrivateTree fails when anything under dir is open to other users:
// no entry may have a permission bit for others, and only dir itself may
// let a group (the postgres server's, when dev runs as root) pass through.
func assertPrivateTree(t *testing.T, dir string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		perm, open := info.Mode().Perm(), fs.FileMode(0o077)
		if path == dir {
			open = 0o066 // search only (no listing): the server and sandbox users pass through
		}
		if perm&open != 0 && info.Mode()&fs.ModeSocket == 0 {
			t.Errorf("%s: mode %o is open to other users", path, perm)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
