package mcp

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/services/engine/compute"
	"github.com/xbot-runtime/xbot/services/engine/profile"
)

// process is a stdio server running inside the run's sandbox: one Exec,
// in a goroutine of its own, whose standard streams are pipes to the MCP
// client.
type process struct {
	toServer   *io.PipeWriter // the client writes requests here
	fromServer *io.PipeReader // the client reads responses here
	cancel     context.CancelFunc
	done       chan struct{} // closed when the process has ended
	stderr     *tail
	name       string

	mu       sync.Mutex
	exit     string // how it ended, once done
	execErr  error  // Exec's error, once done (nil: the process exited)
	stopping bool   // kill was called: its end is expected
}

// exitWait bounds how long a broken connection waits to learn how the
// process ended: Exec returns within 2 s of the process's end.
const exitWait = 3 * time.Second

// startProcess runs srv's command in sb. The process lives until kill,
// until it exits, or until the sandbox is closed.
func startProcess(srv profile.MCPServer, sb compute.Sandbox, log *zap.Logger) *process {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	p := &process{toServer: inW, fromServer: outR, cancel: cancel, done: make(chan struct{}),
		stderr: &tail{max: stderrTail}, name: srv.Name}
	go func() {
		defer close(p.done)
		res, err := sb.Exec(ctx, compute.ExecRequest{Command: execLine(srv.Command), Stdin: inR,
			Stdout: outW, Stderr: p.stderr})
		exit := fmt.Sprintf("exit status %d", res.ExitCode)
		if err != nil {
			exit = err.Error()
		}
		p.mu.Lock()
		p.exit, p.execErr = exit, err
		expected := p.stopping
		p.mu.Unlock()
		_ = outW.CloseWithError(io.EOF) // the client's reader ends: its pending calls fail
		_ = inR.Close()
		if !expected {
			log.Info("MCP server process ended", zap.String("mcp_server", srv.Name), zap.String("exit", exit))
		}
	}()
	return p
}

// stderrTail bounds the stderr of a server kept to explain its end.
const stderrTail = 2 << 10

func (p *process) transport() sdk.Transport {
	return &sdk.IOTransport{Reader: p.fromServer, Writer: p.toServer}
}

// exitGrace is how long a server may take to exit once its stdin closed.
const exitGrace = time.Second

// kill closes the server's stdin (a well-behaved server exits), ends its
// process group after exitGrace, and waits for Exec to return.
func (p *process) kill() {
	p.mu.Lock()
	p.stopping = true
	p.mu.Unlock()
	_ = p.toServer.Close()
	select {
	case <-p.done:
	case <-time.After(exitGrace):
	}
	p.cancel()
	<-p.done
}

func (p *process) ended() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// failure is Exec's error once the process ended (a lost sandbox, a limit),
// nil while it runs or when it exited by itself.
func (p *process) failure() error {
	if !p.ended() {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.execErr
}

// why says how the process ended and what it last wrote to stderr, waiting
// up to exitWait for it to end; "" when it is still running.
func (p *process) why() string {
	select {
	case <-p.done:
	case <-time.After(exitWait):
		return ""
	}
	p.mu.Lock()
	exit := p.exit
	p.mu.Unlock()
	if s := strings.TrimSpace(p.stderr.String()); s != "" {
		return exit + "; stderr ends: " + s
	}
	return exit
}

// execLine is the shell command that replaces the shell with argv.
func execLine(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return "exec " + strings.Join(q, " ")
}

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(b), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.ToValidUTF8(string(t.buf), "")
}
