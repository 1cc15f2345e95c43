package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/infra/devstack"
	"github.com/xbot-runtime/xbot/infra/devstack/eventually"
	"github.com/xbot-runtime/xbot/infra/devstack/kafkatest"
	"github.com/xbot-runtime/xbot/infra/devstack/pgtest"
	"github.com/xbot-runtime/xbot/services/api/client"
	"github.com/xbot-runtime/xbot/services/engine/compute/computetest"
	"github.com/xbot-runtime/xbot/services/engine/mcp/mcptest"
)

// splitSecret is the MCP secret only the executor process is given.
const splitSecret = "split-mcp-secret-4f1d0a9e"

// run runs an xbot command to its end and returns its standard output
// (what it logs goes to standard error, shown when it fails).
func run(t *testing.T, bin string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Dir = t.TempDir() // no stray ./.env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("xbot %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr.String())
	}
	return string(out)
}

// TestSplitModeSkillsAndMCPServers runs the skill commands, then an API
// and an executor process that share the skill store and agents.yaml: the
// API lists the skill as the executor resolves it, the executor (the only
// process holding the MCP secret) lists and calls the remote MCP server.
func TestSplitModeSkillsAndMCPServers(t *testing.T) {
	bin := build(t)
	base := computetest.Dir(t)
	if err := os.Chmod(base, 0o711); err != nil { // #nosec G302 -- the sandbox user passes through to the store
		t.Fatal(err)
	}
	skills := []string{"XBOT_SKILLS_DIR=" + filepath.Join(base, "skills"), "XBOT_METRICS_ADDR=off"}
	src := t.TempDir()
	md := "---\nname: demo\ndescription: How demos are run.\nversion: 1.0.0\n---\nRun it twice.\n"
	if err := os.WriteFile(filepath.Join(src, "SKILL.md"), []byte(md), 0o600); err != nil {
		t.Fatal(err)
	}
	if out := run(t, bin, skills, "skill", "add", src); !strings.Contains(out, "added demo@1.0.0 (sha256:") {
		t.Fatalf("skill add: %s", out)
	}
	if out := run(t, bin, skills, "skill", "add", src); !strings.Contains(out, "already stored") {
		t.Fatalf("skill add again: %s", out)
	}
	var listed []struct{ ID, Digest string }
	if err := json.Unmarshal([]byte(run(t, bin, skills, "skill", "list", "--json")), &listed); err != nil || len(listed) != 1 || listed[0].ID != "demo@1.0.0" {
		t.Fatalf("skill list: %+v %v", listed, err)
	}
	url, headers := mcptest.ServeHTTP(t)
	env := splitEnv(t, url, skills)
	if err := start(t, bin, env, "migrate").cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	exe := start(t, bin, append(env, "XBOT_EXECUTOR_ID=ex1", "XBOT_MCP_SECRETS=TOKEN="+splitSecret), "executor")
	proj := start(t, bin, env, "projector", "postgres")
	api := start(t, bin, env, "api")
	c := apiAt(t, "http://"+envValue(env, "XBOT_API_ADDR"), "split-token")
	eventually.Succeeds(t, 30*time.Second, "split stack healthy", func() error { return c.Healthy(context.Background()) })
	agent, err := c.GetAgent(context.Background(), "tooled")
	if err != nil || len(agent.Skills) != 1 || agent.Skills[0].ID != "demo@1.0.0" || agent.Skills[0].Digest != listed[0].Digest {
		t.Fatalf("the API process's manifest: %+v %v", agent.Skills, err)
	}
	runID := splitRun(t, c)
	snap, err := c.GetRunSnapshot(context.Background(), runID)
	if err != nil || !strings.Contains(string(snap.Snapshot), `"id":"demo@1.0.0"`) || !strings.Contains(string(snap.Snapshot), `"remote__echo"`) {
		t.Fatalf("the run's snapshot: %v %s", err, snap.Snapshot)
	}
	if h := headers.All(); len(h) == 0 || h[0].Get("Authorization") != "Bearer "+splitSecret {
		t.Errorf("the executor called the MCP server without its secret header (%d requests)", len(h))
	}
	for _, p := range []*proc{api, proj, exe} {
		p.stop(t)
		if strings.Contains(p.out.String(), splitSecret) {
			t.Errorf("a process logged the MCP secret:\n%s", p.out.String())
		}
	}
}

// splitEnv is the environment of the split processes: a fresh Kafka and
// database, an agent with the skill and the remote MCP server at url.
func splitEnv(t *testing.T, url string, skills []string) []string {
	t.Helper()
	kc := kafkatest.NewCluster(t, 4).Config()
	port, err := devstack.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	agents := filepath.Join(t.TempDir(), "agents.yaml")
	yaml := fmt.Sprintf(`agents:
  - id: tooled
    model: scripted
    tools: [read_file]
    skills: [{name: demo, version: "^1"}]
    mcpServers:
      - {name: remote, url: %q, headers: {Authorization: "Bearer ${TOKEN}"}}
    script:
      - toolCalls:
          - {name: remote__echo, arguments: '{"text":"echoed in split mode"}'}
          - {name: read_file, arguments: '{"path":"/skills/demo@1.0.0/SKILL.md"}'}
      - text: done
`, url)
	if err := os.WriteFile(agents, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return append([]string{"XBOT_KAFKA_BROKERS=" + strings.Join(kc.Brokers, ","), "XBOT_PG_DSN=" + pgtest.NewDatabase(t),
		"XBOT_KAFKA_TOPIC_PREFIX=" + kc.TopicPrefix, "XBOT_KAFKA_GROUP_PREFIX=" + kc.GroupPrefix,
		"XBOT_API_TOKENS=split-token=acme", fmt.Sprintf("XBOT_API_ADDR=127.0.0.1:%d", port), "XBOT_KAFKA_PARTITIONS=4",
		"XBOT_COMMAND_SIGNING_KEY=" + commands.FormatKey(commands.GenerateKeyRing().Current()),
		"XBOT_COMPUTE_DIR=" + computetest.Dir(t), "XBOT_AGENTS_FILE=" + agents}, skills...)
}

func envValue(env []string, name string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			return v
		}
	}
	return ""
}

// splitRun runs the tooled agent to completion and checks what its tools
// returned.
func splitRun(t *testing.T, c *client.Client) string {
	t.Helper()
	res, err := c.CreateRun(context.Background(), client.CreateRunRequest{AgentID: "tooled",
		Input: client.UserInput{Content: "go"}}, client.CommandOptions{})
	if err != nil {
		t.Fatal(err)
	}
	eventually.Succeeds(t, 60*time.Second, "the split run completed", func() error {
		run, err := c.GetRun(context.Background(), res.RunID)
		if err == nil && run.Status != "completed" {
			err = fmt.Errorf("status %s (%s)", run.Status, run.ErrorCode)
		}
		return err
	})
	evs, err := c.AllEvents(context.Background(), res.RunID)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(evs)
	for _, want := range []string{"echoed in split mode", "Run it twice."} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("the run's events lack %q", want)
		}
	}
	return res.RunID
}
