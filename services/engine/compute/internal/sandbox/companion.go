package sandbox

import (
	"context"
	"fmt"
	"os/exec"
	"sync/atomic"
	"syscall"
	"time"
)

// A Companion is a process a box keeps beside its commands while it is
// open, for them to use: a networked bwrap box's network namespace, whose
// pasta so starts once a run instead of once a command. It starts held,
// placed in a subgroup of the box's group and limited as a command is, so
// what it uses counts against the box's limits. It is none of the box's
// commands: Kill leaves it running, Close asks it to end (Stop) and
// Destroy kills it.
type Companion struct {
	// Cmd is its process; its extra files begin at the descriptor the start
	// function was given. Exec sets its session, as a command's.
	Cmd *exec.Cmd
	// Ready waits, until ctx ends, for the started process (pid) to serve
	// commands, and takes what they need of it.
	Ready func(ctx context.Context, pid int) error
	// Stop asks the process to end; the box kills it companionGrace later.
	Stop func()
	// State is what the launcher keeps of it for its commands.
	State any
	// Release frees what Ready took and anything else of the process's
	// this one holds; called once, after the process ended.
	Release func()
}

// CompanionFunc gives use the box's companion for key, started by start
// when the box has none running for key; one it has for another key is
// stopped and replaced. use runs under the box's companion lock, so the
// companion stays as it is until use returns.
type CompanionFunc func(key string, start func(firstFD int) (*Companion, error), use func(*Companion) error) error

// companionReady bounds how long a companion may take to serve commands.
const companionReady = 10 * time.Second

// companionGrace is how long a companion asked to end has before it is
// killed: enough for a networked box's namespace to pass on what its last
// command sent (bwrap's drain, 3 s at most).
const companionGrace = 5 * time.Second

// companionRun is a started companion.
type companionRun struct {
	key    string
	c      *Companion
	pgid   int
	exited atomic.Bool   // its process ended
	done   chan struct{} // closed once it ended and its share of the limits is given back
}

// companion implements CompanionFunc for b's commands (Launch.Companion).
func (b *Box) companion(key string, start func(firstFD int) (*Companion, error), use func(*Companion) error) error {
	b.compMu.Lock()
	defer b.compMu.Unlock()
	if r := b.comp; r != nil && (r.key != key || r.exited.Load()) {
		b.comp = nil
		r.stop()
	}
	if b.comp == nil {
		r, err := b.startCompanion(key, start)
		if err != nil {
			return err
		}
		b.comp = r
	}
	return use(b.comp.c)
}

// startCompanion starts, places and waits for a companion; b.compMu is
// held.
func (b *Box) startCompanion(key string, start func(firstFD int) (*Companion, error)) (*companionRun, error) {
	c, err := start(b.limits.firstFD())
	if err != nil {
		return nil, err
	}
	pl, err := b.limits.prepare(c.Cmd)
	if err != nil {
		closeExtraFiles(c.Cmd)
		c.Release()
		return nil, err
	}
	r := &companionRun{key: key, c: c, done: make(chan struct{})}
	err = b.startProcess(c.Cmd, pl, func(pgid int) { r.pgid, b.compPgid = pgid, pgid })
	if c.Cmd.Process == nil {
		pl.abort()
		_ = pl.finish(0) // it never ran
		c.Release()
		return nil, fmt.Errorf("start the sandbox's companion: %w", err)
	}
	go b.awaitCompanion(r, pl)
	if err != nil { // started, but not placed: startProcess killed it
		return nil, fmt.Errorf("start the sandbox's companion: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), companionReady)
	defer cancel()
	if err := c.Ready(ctx, c.Cmd.Process.Pid); err != nil {
		killGroup(r.pgid)
		return nil, err
	}
	return r, nil
}

// awaitCompanion waits for r's process, then gives back its share of the
// limits and what it holds.
func (b *Box) awaitCompanion(r *companionRun, pl *placement) {
	_ = r.c.Cmd.Wait()
	r.exited.Store(true)
	killGroup(r.pgid)
	ws, _ := r.c.Cmd.ProcessState.Sys().(syscall.WaitStatus)
	_ = pl.finish(ws) // a limit it hit shows in the commands it served
	b.mu.Lock()
	if b.compPgid == r.pgid {
		b.compPgid = 0
	}
	b.mu.Unlock()
	b.compMu.Lock()
	if b.comp == r {
		b.comp = nil
	}
	b.compMu.Unlock()
	r.c.Release()
	close(r.done)
}

// stop asks r to end and kills it if it has not after companionGrace.
func (r *companionRun) stop() {
	r.c.Stop()
	go func() {
		t := time.NewTimer(companionGrace)
		defer t.Stop()
		select {
		case <-r.done:
		case <-t.C:
			killGroup(r.pgid)
		}
	}()
}

// stopCompanion asks the box's companion, if any, to end.
func (b *Box) stopCompanion() {
	b.compMu.Lock()
	r := b.comp
	b.comp = nil
	b.compMu.Unlock()
	if r != nil {
		r.stop()
	}
}
