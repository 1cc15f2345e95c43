package systemtest_test

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/devstack"
	"github.com/xbot-runtime/xbot/services/engine/compute"
	"github.com/xbot-runtime/xbot/services/engine/compute/bwrap"
	"github.com/xbot-runtime/xbot/services/engine/compute/computetest"
	"github.com/xbot-runtime/xbot/services/engine/model"
	"github.com/xbot-runtime/xbot/services/engine/policy"
	"github.com/xbot-runtime/xbot/services/engine/profile"
	"github.com/xbot-runtime/xbot/services/stack"
)

// The end-to-end tests of the sandbox boundary: a scripted agent whose tool
// calls try what a hostile model would, through the whole stack with the
// bwrap provider. The agents drop the built-in policy rules (which would
// ask for approval first): the sandbox must hold whatever the policy lets
// through.

// noPolicy allows every tool call.
var noPolicy = policy.Config{NoDefaults: true}

// bwrapAgentEnv starts a stack on e with the agents and the bwrap
// provider, then edit; it returns the provider's base directory too.
// Without bwrap it skips, except on CI.
func bwrapAgentEnv(t *testing.T, e *env, edit func(*stack.Options), agents ...profile.Profile) (*stack.Stack, string) {
	t.Helper()
	e.withAgents(agents...)
	dir := computetest.Dir(t)
	comp, err := bwrap.New(bwrap.Config{Dir: dir, Logger: zap.NewNop()})
	if errors.Is(err, compute.ErrUnavailable) {
		if _, ci := os.LookupEnv("CI"); !ci {
			t.Skipf("bwrap unavailable (set CI to make this a failure): %v", err)
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	reqs := &requests{got: map[string][]model.Request{}}
	st := e.startWith("all", func(o *stack.Options) {
		o.Compute, o.Models = comp, reqs.resolver
		edit(o)
	})
	return st, dir
}

// shellOutput runs agent's one shell call to completion and returns what
// the command printed.
func shellOutput(t *testing.T, st *stack.Stack, agent, key string) string {
	t.Helper()
	runID := runUntil(t, st, agent, "probe", key, "completed", 60*time.Second)
	for _, p := range payloads[events.ItemCompletedPayload](t, st, runID) {
		if p.ItemType != events.ItemCommandExecution {
			continue
		}
		if exec := dataOf[events.ToolResultData](t, p.Data).Exec; exec != nil {
			return exec.Stdout + exec.Stderr
		}
	}
	t.Fatalf("run %s has no command_execution", runID)
	return ""
}

// TestSandboxToolIsNotHostRoot: a tool's attempts to rewrite a kernel
// setting (core_pattern, its own value) fail, and what it creates belongs
// on the host to a user other than root.
func TestSandboxToolIsNotHostRoot(t *testing.T) {
	t.Parallel()
	cmd := `v=$(cat /proc/sys/kernel/core_pattern); (printf '%s\n' "$v" > /proc/sys/kernel/core_pattern) 2>/dev/null && echo KERNEL-WRITABLE; ` +
		`(sysctl -q -w "kernel.core_pattern=$v") 2>/dev/null && echo SYSCTL-WRITABLE; touch uid-probe; echo probed`
	agent := profile.Profile{ID: "prober", Model: profile.ModelScripted, Tools: allTools, Policy: noPolicy, Script: []profile.Turn{
		{ToolCalls: call1("shell", fmt.Sprintf(`{"command":%q}`, cmd))}, {Text: "done"}}}
	e := newEnv(t)
	st, dir := bwrapAgentEnv(t, e, func(*stack.Options) {}, agent)
	out := shellOutput(t, st, "prober", "root-1")
	if strings.Contains(out, "WRITABLE") || !strings.Contains(out, "probed") {
		t.Errorf("the tool could write a kernel setting: %q", out)
	}
	var owners []uint32
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Name() == "uid-probe" {
			if fi, err := os.Lstat(p); err == nil {
				owners = append(owners, fi.Sys().(*syscall.Stat_t).Uid)
			}
		}
		return nil
	})
	if len(owners) != 1 || owners[0] == 0 {
		t.Errorf("the tool's file belongs to host uids %v, want one that is not 0", owners)
	}
	e.invariants(st)
}

// TestSandboxNetworkReachesOnlyTheAllowList: a networked agent's tool
// reaches neither the xbot API, Kafka nor Postgres of this stack (all on
// the host's loopback), nor the host's own address, while the address its
// profile allows works.
func TestSandboxNetworkReachesOnlyTheAllowList(t *testing.T) {
	t.Parallel()
	hostIP := nonLoopbackIP(t)
	ln, err := net.Listen("tcp4", net.JoinHostPort(hostIP, "0"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for c, err := ln.Accept(); err == nil; c, err = ln.Accept() {
			_ = c.Close()
		}
	}()
	e := newEnv(t)
	dsn, err := url.Parse(e.dsn)
	if err != nil {
		t.Fatal(err)
	}
	api := freeLoopbackAddr(t)
	targets := map[string]string{"api": api, "kafka": e.kcfg.Brokers[0], "postgres": dsn.Host, "allowed": ln.Addr().String()}
	agent := profile.Profile{ID: "netprober", Model: profile.ModelScripted, Tools: allTools, Policy: noPolicy,
		Sandbox: profile.Sandbox{Network: true, AllowHosts: []string{hostIP}}, Script: []profile.Turn{
			{ToolCalls: call1("shell", fmt.Sprintf(`{"command":%q}`, probeCommand(targets)))}, {Text: "done"}}}
	st, _ := bwrapAgentEnv(t, e, func(o *stack.Options) { o.APIAddr = api }, agent)
	out := shellOutput(t, st, "netprober", "net-1")
	for name := range targets {
		want := "BLOCKED:" + name
		if name == "allowed" {
			want = "REACHED:" + name
		}
		if !strings.Contains(out, want) {
			t.Errorf("want %s; the tool printed:\n%s", want, out)
		}
	}
	e.invariants(st)
}

// probeCommand tries a TCP connection to every target and prints
// REACHED:<name> or BLOCKED:<name>.
func probeCommand(targets map[string]string) string {
	var cmd strings.Builder
	for name, addr := range targets {
		host, port, _ := net.SplitHostPort(addr)
		fmt.Fprintf(&cmd, "if timeout 5 bash -c 'exec 3<>/dev/tcp/%s/%s' 2>/dev/null; then echo REACHED:%s; else echo BLOCKED:%s; fi; ",
			host, port, name, name)
	}
	return cmd.String()
}

// freeLoopbackAddr is a 127.0.0.1 address whose port was free when asked,
// below the kernel's ephemeral range (devstack.FreePort): no outgoing
// connection can take it before a server binds it, or while one restarts on
// it. For an address a test must know before its server starts.
func freeLoopbackAddr(t *testing.T) string {
	t.Helper()
	port, err := devstack.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
}

// nonLoopbackIP is an IPv4 address of this host other than loopback.
func nonLoopbackIP(t *testing.T) string {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() {
			return n.IP.String()
		}
	}
	t.Fatal("this test needs a non-loopback IPv4 address on this host")
	return ""
}
