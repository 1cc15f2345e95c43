package main_test

import (
	"fmt"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/infra/devstack"
	"github.com/xbot-runtime/xbot/infra/devstack/kafkatest"
)

// `xbot dev --kafka apache` runs the whole system on a local Apache Kafka
// broker: its ready line names the broker, it serves a run end to end, and
// after SIGINT (Ctrl-C) no broker process of its data dir is left.
// Opt-in: a JVM takes seconds, so it runs only with XBOT_TEST_KAFKA=apache.
func TestDevOnApacheKafka(t *testing.T) {
	if !kafkatest.OnApache(t) {
		t.Skipf("set %s=%s: xbot dev --kafka apache starts a JVM", kafkatest.BrokerEnv, kafkatest.Apache)
	}
	bin := build(t)
	kport, _ := devstack.FreePort()
	aport, _ := devstack.FreePort()
	data := t.TempDir()
	dev := start(t, bin, nil, "dev", "--kafka", "apache", "--data-dir", data,
		"--dev-kafka-addr", fmt.Sprintf("127.0.0.1:%d", kport), "--api-addr", fmt.Sprintf("127.0.0.1:%d", aport), "--metrics-addr", "off", "--im-addr", "127.0.0.1:0")
	// Minutes, not seconds: a JVM beside other test binaries on 2 cores.
	m := dev.waitFor(t, regexp.MustCompile(`xbot dev ready: api=(\S+) kafka=(\S+) token=(\S+)`), 3*time.Minute)
	if want := fmt.Sprintf("127.0.0.1:%d", kport); m[2] != want {
		t.Errorf("ready line names kafka=%s, want the Apache Kafka broker at %s", m[2], want)
	}
	brokerDir := filepath.Join(data, "kafka-apache")
	if pids := pidsUnder(t, brokerDir); len(pids) == 0 {
		t.Fatalf("no broker process runs in %s", brokerDir)
	}
	createAndComplete(t, m[1], m[3])
	dev.signal(t, syscall.SIGINT)
	if left := pidsUnder(t, brokerDir); len(left) > 0 {
		t.Fatalf("broker processes left after SIGINT: %v", left)
	}
}

// signal sends sig and waits for a clean exit.
func (p *proc) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	_ = p.cmd.Process.Signal(sig)
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit after %s: %v\n%s", sig, err, p.out.String())
		}
	case <-time.After(time.Minute): // the broker's controlled shutdown takes seconds
		t.Fatalf("no exit within a minute of %s", sig)
	}
}
