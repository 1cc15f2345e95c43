package api

import (
	"sync"
	"time"

	"github.com/xbot-runtime/xbot/commands"
)

// Bounds of what the API remembers of the commands it sent. A command's
// outcome is on the log milliseconds after it is sent and in the read model
// soon after; these only bound memory when an executor is stopped or behind.
const (
	// maxFlights caps the commands remembered: 65,536 at ~300 bytes each is
	// ~20 MB, minutes of commands at hundreds per second.
	maxFlights = 1 << 16
	// flightMemory is how long a command is remembered after it was sent,
	// far beyond the read model's lag.
	flightMemory = 10 * time.Minute
)

// flight is a command this API instance sent, and its first outcome once the
// tail of the events topic showed it.
type flight struct {
	env    commands.Envelope
	sentAt time.Time
	// anyRun: the outcome may be on another run of the tenant than
	// env.RunID (a session message, which the executor routes to the
	// session's head).
	anyRun bool
	done   chan struct{} // closed when outcome is set
	// outcome is set once, before done is closed, and so is intent, what a
	// session message became (the read model's row does not keep it).
	outcome CommandRecord
	intent  string
}

// flights remembers the commands this instance sent, oldest first, within
// maxFlights and flightMemory. It is safe for concurrent use.
type flights struct {
	mu    sync.Mutex
	byID  map[string]*flight
	byRun map[string]int // how many commands without an outcome each run has
	// anyRun is how many commands without an outcome may have it on any run.
	anyRun int
	// bySession is the latest create or session message remembered per
	// session, creates per run.
	bySession map[sessionOf]*flight
	creates   map[string]*flight
	fifo      []*flight
	head      int
	max       int
	ttl       time.Duration
	now       func() time.Time
}

type sessionOf struct{ tenant, session string }

func newFlights() *flights {
	return &flights{byID: map[string]*flight{}, byRun: map[string]int{}, bySession: map[sessionOf]*flight{},
		creates: map[string]*flight{}, max: maxFlights, ttl: flightMemory, now: time.Now}
}

// start remembers env before it is sent, so that its outcome cannot reach
// the tail first.
func (fs *flights) start(env commands.Envelope) *flight {
	return fs.begin(&flight{env: env, sentAt: fs.now(), done: make(chan struct{})})
}

// startRouted is start for a command whose outcome the executor may record
// on another run than env.RunID: a session message.
func (fs *flights) startRouted(env commands.Envelope) *flight {
	return fs.begin(&flight{env: env, sentAt: fs.now(), anyRun: true, done: make(chan struct{})})
}

func (fs *flights) begin(f *flight) *flight {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.add(f)
	return f
}

// add remembers f; fs.mu is held.
func (fs *flights) add(f *flight) {
	env := f.env
	fs.expire(f.sentAt)
	for len(fs.byID) >= fs.max {
		fs.drop()
	}
	if old, ok := fs.byID[env.CommandID]; ok { // ids are random; a repeat replaces
		fs.remove(old)
	}
	fs.byID[env.CommandID] = f
	fs.byRun[env.RunID]++
	if f.anyRun {
		fs.anyRun++
	}
	if env.Type == commands.CreateRun {
		fs.creates[env.RunID] = f
	}
	if (env.Type == commands.CreateRun || f.anyRun) && env.PlatformSessionID != "" {
		// A session message names a run of its session too: the session's
		// later messages may name it before the read model shows it.
		fs.bySession[sessionOf{env.TenantID, env.PlatformSessionID}] = f
	}
	fs.fifo = append(fs.fifo, f)
}

// observe remembers env, a command the commands topic showed, unless a
// command with its id is remembered already.
func (fs *flights) observe(env commands.Envelope) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if _, known := fs.byID[env.CommandID]; !known {
		fs.add(&flight{env: env, sentAt: fs.now(), anyRun: routed(env), done: make(chan struct{})})
	}
}

// forget drops f (its send failed: the client retries).
func (fs *flights) forget(f *flight) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.byID[f.env.CommandID] == f {
		fs.remove(f)
	}
}

// get returns the remembered command commandID of tenant.
func (fs *flights) get(tenantID, commandID string) (*flight, bool) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	f, ok := fs.byID[commandID]
	if !ok || f.env.TenantID != tenantID || fs.now().Sub(f.sentAt) > fs.ttl {
		return nil, false
	}
	return f, true
}

// sessionRun returns the run of the latest create (or session message) this
// instance sent in session sessionID of tenant, while it remembers it.
func (fs *flights) sessionRun(tenantID, sessionID string) (string, bool) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	f, ok := fs.bySession[sessionOf{tenantID, sessionID}]
	if !ok || fs.now().Sub(f.sentAt) > fs.ttl {
		return "", false
	}
	return f.env.RunID, true
}

// createOf returns the latest create of run runID this instance sent for
// tenant, while it remembers it.
func (fs *flights) createOf(tenantID, runID string) (*flight, bool) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	f, ok := fs.creates[runID]
	if !ok || f.env.TenantID != tenantID || fs.now().Sub(f.sentAt) > fs.ttl {
		return nil, false
	}
	return f, true
}

// hasRun reports whether a remembered command without an outcome is for
// runID: only those runs' records are decoded.
func (fs *flights) hasRun(runID string) bool {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.byRun[runID] > 0 || fs.anyRun > 0
}

// resolve records f's first outcome; later ones are ignored.
func (fs *flights) resolve(commandID string, match func(*flight) (CommandRecord, string, bool)) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	f, ok := fs.byID[commandID]
	if !ok || f.resolved() {
		return
	}
	if rec, intent, ok := match(f); ok {
		f.outcome, f.intent = rec, intent
		close(f.done)
		fs.unpend(f)
	}
}

func (f *flight) resolved() bool {
	select {
	case <-f.done:
		return true
	default:
		return false
	}
}

// intentOf returns what a session message became, once the tail showed
// its outcome ("" before, or for any other command).
func (f *flight) intentOf() string {
	if !f.resolved() {
		return ""
	}
	return f.intent
}

// result returns f's outcome once the tail showed it.
func (f *flight) result() (CommandRecord, bool) {
	if !f.resolved() {
		return CommandRecord{}, false
	}
	return f.outcome, true
}

func (fs *flights) expire(now time.Time) {
	for fs.head < len(fs.fifo) && now.Sub(fs.fifo[fs.head].sentAt) > fs.ttl {
		fs.drop()
	}
}

// drop forgets the oldest remembered command.
func (fs *flights) drop() {
	f := fs.fifo[fs.head]
	fs.fifo[fs.head] = nil
	fs.head++
	if fs.byID[f.env.CommandID] == f {
		fs.remove(f)
	}
	if fs.head > len(fs.fifo)/2 {
		n := copy(fs.fifo, fs.fifo[fs.head:])
		clear(fs.fifo[n:])
		fs.fifo, fs.head = fs.fifo[:n], 0
	}
}

// remove deletes f from the indexes (the fifo drops it in its turn).
func (fs *flights) remove(f *flight) {
	delete(fs.byID, f.env.CommandID)
	if k := (sessionOf{f.env.TenantID, f.env.PlatformSessionID}); fs.bySession[k] == f {
		delete(fs.bySession, k)
	}
	if fs.creates[f.env.RunID] == f {
		delete(fs.creates, f.env.RunID)
	}
	if !f.resolved() {
		fs.unpend(f)
	}
}

// unpend takes f out of its run's count of commands without an outcome.
func (fs *flights) unpend(f *flight) {
	if fs.byRun[f.env.RunID]--; fs.byRun[f.env.RunID] <= 0 {
		delete(fs.byRun, f.env.RunID)
	}
	if f.anyRun {
		fs.anyRun--
	}
}
