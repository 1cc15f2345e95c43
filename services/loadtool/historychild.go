package loadtool

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/infra/kafka"
	"github.com/xbot-runtime/xbot/infra/logging"
	"github.com/xbot-runtime/xbot/services/engine/profile"
	"github.com/xbot-runtime/xbot/services/stack"
)

// Roles of a measured process.
const (
	childExecutor = "executor"
	childAPI      = "api"
)

// childSpec is what the history tool tells a measured process, as the
// first line of its stdin (never in its arguments or environment: it holds
// the command signing key).
type childSpec struct {
	Role       string            `json:"role"`
	Kafka      kafka.Config      `json:"kafka"`
	CommandKey string            `json:"commandKey"`
	Profiles   []profile.Profile `json:"profiles"`
	// Partitions is the commands topic's: an executor reports "assigned"
	// once it owns that many.
	Partitions int               `json:"partitions"`
	ExecutorID string            `json:"executorId,omitempty"`
	PGDSN      string            `json:"pgDsn,omitempty"`
	Tokens     map[string]string `json:"tokens,omitempty"`
	WaitMax    time.Duration     `json:"waitMax,omitempty"`
}

// childMessage is one line a measured process writes on its stdout:
// "assigned" (the executor owns every partition), "listening" (the API
// serves at Addr), "stats" (the answer to a "stats" line on its stdin).
type childMessage struct {
	Event string    `json:"event"`
	Addr  string    `json:"addr,omitempty"`
	Mem   *MemStats `json:"mem,omitempty"`
}

// MemStats are a process's memory figures, in bytes: the live heap right
// after garbage collection (runtime.MemStats.HeapAlloc), what the Go
// runtime holds from the OS, and the resident set now and at its peak
// (/proc/self/status VmRSS and VmHWM).
type MemStats struct {
	HeapAlloc uint64 `json:"heapAllocBytes"`
	Sys       uint64 `json:"sysBytes"`
	RSS       uint64 `json:"rssBytes"`
	PeakRSS   uint64 `json:"peakRssBytes"`
}

// RunHistoryChild is a process the history mode of `xbot bench` measures
// (`xbot bench --history-child`): it reads its spec from in, starts an
// executor or an API on the system the spec names, reports on out when it
// is ready, answers each "stats" line of in with its MemStats, and stops
// when in ends or ctx is done.
func RunHistoryChild(ctx context.Context, in io.Reader, out io.Writer) error {
	lines := make(chan string)
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	go func() {
		defer close(lines)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	var spec childSpec
	if err := json.Unmarshal([]byte(<-lines), &spec); err != nil {
		return fmt.Errorf("history child: spec: %w", err)
	}
	st, err := spec.start(ctx)
	if err != nil {
		return err
	}
	defer st.Stop(context.Background())
	var mu sync.Mutex
	enc := json.NewEncoder(out)
	say := func(m childMessage) error {
		mu.Lock()
		defer mu.Unlock()
		return enc.Encode(m)
	}
	if err := spec.announce(ctx, st, say); err != nil {
		return err
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case l, ok := <-lines:
			if !ok {
				return nil
			}
			if strings.TrimSpace(l) == "stats" {
				m := memNow()
				if err := say(childMessage{Event: "stats", Mem: &m}); err != nil {
					return err
				}
			}
		}
	}
}

// start runs the spec's component alone, as `xbot executor` or `xbot api`
// would.
func (s childSpec) start(ctx context.Context) (*stack.Stack, error) {
	keys, err := commands.ParseKeyRing(s.CommandKey)
	if err != nil {
		return nil, fmt.Errorf("history child: %w", err)
	}
	cat, err := profile.NewCatalog(s.Profiles...)
	if err != nil {
		return nil, fmt.Errorf("history child: %w", err)
	}
	log, err := logging.New(logging.Config{Level: "warn", Format: logging.FormatConsole})
	if err != nil {
		return nil, err
	}
	opts := stack.Options{Kafka: s.Kafka, Profiles: cat, Logger: log.Named(s.Role), CommandKeys: keys,
		ExecutorID: s.ExecutorID, PGDSN: s.PGDSN, Tokens: s.Tokens, APIAddr: "127.0.0.1:0", WaitMax: s.WaitMax,
		Version: "history-child"}
	switch s.Role {
	case childExecutor:
		opts.Components = []stack.Component{stack.Executor}
	case childAPI:
		opts.Components = []stack.Component{stack.API}
	default:
		return nil, fmt.Errorf("history child: role %q: want %s or %s", s.Role, childExecutor, childAPI)
	}
	return stack.Start(ctx, opts)
}

// announce says when the component is ready: the executor once it owns
// every partition (polled every millisecond), the API at once.
func (s childSpec) announce(ctx context.Context, st *stack.Stack, say func(childMessage) error) error {
	if s.Role == childAPI {
		return say(childMessage{Event: "listening", Addr: st.Addr()})
	}
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for len(st.Executor.Partitions()) < s.Partitions {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
	return say(childMessage{Event: "assigned"})
}

// memNow collects garbage, then reads the heap and the resident set. It
// collects twice: objects in a sync.Pool outlive the first collection.
func memNow() MemStats {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	st := procStatus("VmRSS", "VmHWM") // one read: the peak is at least the RSS read with it
	rss, peak := st["VmRSS"], st["VmHWM"]
	return MemStats{HeapAlloc: ms.HeapAlloc, Sys: ms.Sys, RSS: rss, PeakRSS: peak}
}

// procStatus reads "kB" fields of /proc/self/status in one read, in bytes
// (absent when the system has none). The kernel computes VmHWM as at least
// the VmRSS it prints with it; two reads could see the RSS above the peak.
func procStatus(fields ...string) map[string]uint64 {
	out := map[string]uint64{}
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return out
	}
	for l := range strings.SplitSeq(string(raw), "\n") {
		name, rest, ok := strings.Cut(l, ":")
		if !ok || !slices.Contains(fields, name) {
			continue
		}
		if kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64); err == nil {
			out[name] = kb << 10
		}
	}
	return out
}

// errChildExited says a measured process ended before it answered.
var errChildExited = errors.New("the measured process exited")
