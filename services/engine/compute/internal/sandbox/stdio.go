package sandbox

import (
	"io"
	"os"
	"os/exec"
	"sync"
	"time"

	"github.com/xbot-runtime/xbot/services/engine/compute"
)

// drainTimeout bounds how long Exec waits for output once the command's
// process group is gone: only a process that left the group (setsid, which
// the local provider cannot prevent) can still hold the pipes, and 500 ms
// keeps Exec well inside its 2-second promise.
const drainTimeout = 500 * time.Millisecond

// stdio connects a command's standard streams through pipes owned here
// rather than by os/exec, so that Wait returns as soon as the process exits
// whatever its children still hold, and draining is bounded by drainTimeout.
type stdio struct {
	child   []*os.File // ends given to the process; closed once it started
	parent  []*os.File // ends read or written here
	copying sync.WaitGroup
}

// attach sets cmd's Stdin, Stdout and Stderr from req.
func attach(cmd *exec.Cmd, req compute.ExecRequest) (*stdio, error) {
	s := &stdio{}
	var err error
	if cmd.Stdin, err = s.input(req.Stdin); err != nil {
		s.finish()
		return nil, err
	}
	if cmd.Stdout, err = s.output(req.Stdout); err != nil {
		s.finish()
		return nil, err
	}
	if sameWriter(req.Stdout, req.Stderr) {
		cmd.Stderr = cmd.Stdout // one pipe keeps the two streams in order
		return s, nil
	}
	if cmd.Stderr, err = s.output(req.Stderr); err != nil {
		s.finish()
		return nil, err
	}
	return s, nil
}

// input returns the process's stdin (a nil interface for none: os/exec
// then gives /dev/null). The copying goroutine is not waited
// for: it ends when r does or at its next write after finish.
func (s *stdio) input(r io.Reader) (io.Reader, error) {
	if r == nil {
		return nil, nil
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	s.child, s.parent = append(s.child, pr), append(s.parent, pw)
	go func() {
		_, _ = io.Copy(pw, r)
		_ = pw.Close()
	}()
	return pr, nil
}

func (s *stdio) output(w io.Writer) (io.Writer, error) {
	if w == nil {
		return nil, nil
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	s.child, s.parent = append(s.child, pw), append(s.parent, pr)
	s.copying.Add(1)
	go func() {
		defer s.copying.Done()
		_, _ = io.Copy(&sink{w: w}, pr)
	}()
	return pw, nil
}

// started closes the child's ends in this process (after Start, or after
// Start failed).
func (s *stdio) started() {
	for _, f := range s.child {
		_ = f.Close()
	}
}

// finish waits up to drainTimeout for the output to be copied, then closes
// every pipe, which ends any copy still running.
func (s *stdio) finish() {
	s.started()
	done := make(chan struct{})
	go func() {
		s.copying.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(drainTimeout):
	}
	for _, f := range s.parent {
		_ = f.Close()
	}
}

// sink keeps draining the pipe after the caller's writer failed, so a
// broken writer cannot block the command on a full pipe.
type sink struct {
	w      io.Writer
	failed bool
}

func (s *sink) Write(p []byte) (int, error) {
	if !s.failed {
		if _, err := s.w.Write(p); err != nil {
			s.failed = true
		}
	}
	return len(p), nil
}

// sameWriter reports whether a and b are the same comparable writer.
func sameWriter(a, b io.Writer) (same bool) {
	defer func() {
		if recover() != nil {
			same = false // uncomparable dynamic type
		}
	}()
	return a != nil && a == b
}
