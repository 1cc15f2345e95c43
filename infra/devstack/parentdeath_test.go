package devstack_test

import (
	"context"
	"os"
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
	cmd := startHelper(t, "TestServerDiesWithCaller", helperDirEnv, dir)
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
