package devstack_test

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/infra/devstack"
	"github.com/xbot-runtime/xbot/infra/devstack/eventually"
)

// helperDirEnv makes the test binary act as a caller that starts a server
// and then waits to be killed.
const helperDirEnv = "DEVSTACK_TEST_HELPER_DIR"

func TestServerDiesWithCaller(t *testing.T) {
	if dir := os.Getenv(helperDirEnv); dir != "" {
		runHelper(dir)
		return
	}
	t.Parallel()
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestServerDiesWithCaller$")
	cmd.Env = append(os.Environ(), helperDirEnv+"="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if !strings.HasPrefix(line, "ready") {
		_ = cmd.Process.Kill()
		t.Fatalf("helper did not start a server: %q, %v", line, err)
	}
	if serverProcesses(t, dir) == "" {
		t.Fatal("no server process while the helper runs")
	}
	if err := cmd.Process.Kill(); err != nil { // SIGKILL: no cleanup code runs
		t.Fatal(err)
	}
	_ = cmd.Wait()
	eventually.Holds(t, 30*time.Second, "server of a killed caller to exit", func() bool {
		return serverProcesses(t, dir) == ""
	})
}

// runHelper starts a server on dir, reports it and blocks until killed.
func runHelper(dir string) {
	if _, err := devstack.StartPostgres(context.Background(), devstack.PostgresConfig{Dir: dir}); err != nil {
		os.Stdout.WriteString("error: " + err.Error() + "\n")
		os.Exit(1)
	}
	os.Stdout.WriteString("ready\n")
	select {}
}
