package main_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/contracttests"
	"github.com/xbot-runtime/xbot/infra/devstack"
)

// devWithConformanceAgents starts xbot dev with the agents the conformance
// suites need and two tenants' tokens; it returns the API's URL.
func devWithConformanceAgents(t *testing.T, bin string) string {
	t.Helper()
	agents := filepath.Join(t.TempDir(), "agents.yaml")
	if err := os.WriteFile(agents, []byte(contracttests.ConformanceAgentsYAML), 0o600); err != nil {
		t.Fatal(err)
	}
	kport, _ := devstack.FreePort()
	aport, _ := devstack.FreePort()
	dev := start(t, bin, []string{"XBOT_API_TOKENS=conf-a=tenant-a,conf-b=tenant-b", "XBOT_AGENTS_FILE=" + agents},
		"dev", "--data-dir", t.TempDir(), "--dev-kafka-addr", fmt.Sprintf("127.0.0.1:%d", kport),
		"--api-addr", fmt.Sprintf("127.0.0.1:%d", aport), "--metrics-addr", "off", "--im-addr", "127.0.0.1:0")
	m := dev.waitFor(t, regexp.MustCompile(`xbot dev ready: api=(\S+)`), 90*time.Second)
	t.Cleanup(func() { dev.stop(t) })
	return m[1]
}

// TestConformanceAgainstXbotDev runs xbot conformance, as an operator
// would, against xbot dev (embedded Kafka): both suites pass, every check
// is printed with its result, and none is left not applicable.
func TestConformanceAgainstXbotDev(t *testing.T) {
	bin := build(t)
	api := devWithConformanceAgents(t, bin)
	t.Run("README's Go client program", func(t *testing.T) { readmeProgram(t, api, "conf-a") })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "conformance", "--api", api, "--token", "conf-a", "--other-token", "conf-b")
	out, err := cmd.CombinedOutput()
	t.Logf("xbot conformance:\n%s", out)
	if err != nil {
		t.Fatalf("xbot conformance failed: %v", err)
	}
	target := contracttests.Target{BaseURL: api, Token: "conf-a"}
	for _, s := range []contracttests.Suite{contracttests.APISuite(target), contracttests.RuntimeClientSuite(target)} {
		for _, c := range s.Checks {
			line := regexp.MustCompile(`(?m)^(\S+) +` + regexp.QuoteMeta(s.Name+"/"+c.Name) + ` \(`).FindSubmatch(out)
			if line == nil || string(line[1]) != "PASS" {
				t.Errorf("check %s/%s: %q, want a PASS line", s.Name, c.Name, line)
			}
		}
	}
	if !strings.Contains(string(out), " 0 failed, 0 not applicable") {
		t.Errorf("the summary does not say 0 failed, 0 not applicable")
	}
}

// TestConformanceExitsNonZeroOnAFailure: against an API that is not
// there, every check fails and so does the command.
func TestConformanceExitsNonZeroOnAFailure(t *testing.T) {
	bin := build(t)
	port, _ := devstack.FreePort()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "conformance", "--api", fmt.Sprintf("http://127.0.0.1:%d", port),
		"--token", "nobody", "--suite", "api", "--check-timeout", "20s").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "FAIL api/AgentsConfigured") {
		t.Fatalf("xbot conformance against nothing: %v\n%s", err, out)
	}
}

// readmeProgram compiles the first Go code block of the README's "Go
// client" section, in a module of its own that uses this checkout, and runs
// it against the API: it prints the run's id and its final status.
func readmeProgram(t *testing.T, api, token string) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "\n## Go client\n")
	src := regexp.MustCompile("(?s)```go\n(.*?)```").FindStringSubmatch(section)
	if !ok || src == nil || !strings.HasPrefix(src[1], "package main\n") {
		t.Fatal(`the README has no "Go client" section whose first Go block is a package main program`)
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	goVersion := regexp.MustCompile(`(?m)^go (\S+)$`).FindSubmatch(mod)[1]
	dir := t.TempDir()
	for name, text := range map[string]string{"main.go": src[1], "go.mod": fmt.Sprintf("module readmeexample\n\ngo %s\n", goVersion),
		"go.work": fmt.Sprintf("go %s\n\nuse (\n\t.\n\t%s\n)\n", goVersion, root)} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	prog := filepath.Join(dir, "example")
	buildCmd := exec.CommandContext(ctx, "go", "build", "-o", prog, ".")
	buildCmd.Dir, buildCmd.Env = dir, append(os.Environ(), "GOWORK="+filepath.Join(dir, "go.work"))
	if out, err := buildCmd.CombinedOutput(); err != nil {
		t.Fatalf("the README's program does not compile: %v\n%s", err, out)
	}
	run := exec.CommandContext(ctx, prog)
	run.Env = append(os.Environ(), "XBOT_URL="+api, "XBOT_TOKEN="+token)
	out, err := run.CombinedOutput()
	if err != nil || !regexp.MustCompile(`^run_\S+ completed\n$`).Match(out) {
		t.Fatalf("the README's program printed %q (%v), want the run's id and completed", out, err)
	}
}
