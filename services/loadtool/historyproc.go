package loadtool

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"
)

// child is a measured process the history tool started.
type child struct {
	cmd   *exec.Cmd
	in    io.WriteCloser
	msgs  chan stamped
	exit  chan error // the process's exit, once
	began time.Time
}

// stamped is a message and when the tool received it.
type stamped struct {
	childMessage
	at time.Time
}

// childStopWait bounds how long a child may take to stop once its stdin
// closed, before it is killed.
const childStopWait = 30 * time.Second

// startChild starts command, hands it spec and reads its messages. began is
// taken just before the process starts: the figures count from it.
func startChild(command []string, spec childSpec) (*child, error) {
	raw, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(command[0], command[1:]...) //nolint:gosec,noctx // our own binary; stopped through its stdin
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	c := &child{cmd: cmd, in: in, msgs: make(chan stamped, 16), exit: make(chan error, 1), began: time.Now()}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the measured %s: %w", spec.Role, err)
	}
	go c.read(out)
	if _, err := in.Write(append(raw, '\n')); err != nil {
		c.kill()
		return nil, fmt.Errorf("hand the measured %s its spec: %w", spec.Role, err)
	}
	return c, nil
}

// read forwards the child's messages, then its exit.
func (c *child) read(out io.Reader) {
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		var m childMessage
		if json.Unmarshal(sc.Bytes(), &m) == nil {
			c.msgs <- stamped{childMessage: m, at: time.Now()}
		}
	}
	close(c.msgs)
	c.exit <- c.cmd.Wait()
}

// await returns the child's next message of event.
func (c *child) await(ctx context.Context, event string) (stamped, error) {
	for {
		select {
		case <-ctx.Done():
			return stamped{}, fmt.Errorf("waiting for %q of process %d: %w", event, c.cmd.Process.Pid, ctx.Err())
		case m, ok := <-c.msgs:
			if !ok {
				return stamped{}, fmt.Errorf("waiting for %q of process %d: %w", event, c.cmd.Process.Pid, errChildExited)
			}
			if m.Event == event {
				return m, nil
			}
		}
	}
}

// stats asks the child for its memory figures.
func (c *child) stats(ctx context.Context) (MemStats, error) {
	if _, err := io.WriteString(c.in, "stats\n"); err != nil {
		return MemStats{}, fmt.Errorf("ask process %d for stats: %w", c.cmd.Process.Pid, err)
	}
	m, err := c.await(ctx, "stats")
	if err != nil || m.Mem == nil {
		return MemStats{}, fmt.Errorf("stats of process %d: %w", c.cmd.Process.Pid, err)
	}
	return *m.Mem, nil
}

// stop closes the child's stdin, which stops it the way SIGTERM stops
// `xbot executor` (its partitions are revoked and the group rebalances), and
// waits for it; a child that does not stop within childStopWait is killed.
func (c *child) stop() error {
	_ = c.in.Close()
	go func() {
		for m := range c.msgs { // drain, so read reaches Wait
			_ = m
		}
	}()
	select {
	case err := <-c.exit:
		return err
	case <-time.After(childStopWait):
		c.kill()
		return fmt.Errorf("process %d did not stop within %s; killed", c.cmd.Process.Pid, childStopWait)
	}
}

func (c *child) kill() {
	_ = c.cmd.Process.Kill()
}
