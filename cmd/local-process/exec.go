package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/xbot-runtime/xbot/services/engine/compute"
)

type execArgs struct {
	SandboxID string            `json:"sandbox_id"`
	Run       scope             `json:"run"`
	Cmd       string            `json:"cmd"`
	Cwd       string            `json:"cwd"`
	Envs      map[string]string `json:"envs"`
	Timeout   float64           `json:"timeout"`
	StdinB64  string            `json:"stdin_b64"`
	Combined  bool              `json:"combined"`
}

func (p *plugin) boxFor(id string, sc scope) (compute.Sandbox, error) {
	return p.boxEnv(id, sc, nil)
}

func (p *plugin) boxEnv(id string, sc scope, envs map[string]string) (compute.Sandbox, error) {
	sb, err := p.ready()
	if err != nil {
		return nil, err
	}
	return sb.box(context.Background(), id, sc, envs)
}

func (a execArgs) request() (compute.ExecRequest, error) {
	req := compute.ExecRequest{Command: a.Cmd, Cwd: a.Cwd, Timeout: time.Duration(a.Timeout * float64(time.Second))}
	if a.StdinB64 != "" {
		in, err := base64.StdEncoding.DecodeString(a.StdinB64)
		if err != nil {
			return req, &rpcError{Code: -32602, Message: "stdin_b64 is not base64"}
		}
		req.Stdin = bytes.NewReader(in)
	}
	return req, nil
}

// execRun runs a command to its end; $/cancel of the request kills it.
func execRun(p *plugin, m incoming) (any, error) {
	in, err := decode[execArgs](m)
	if err != nil {
		return nil, err
	}
	b, err := p.boxEnv(in.SandboxID, in.Run, in.Envs)
	if err != nil {
		return nil, err
	}
	req, err := in.request()
	if err != nil {
		return nil, err
	}
	var stdout, stderr bytes.Buffer
	req.Stdout, req.Stderr = &stdout, &stderr
	if in.Combined {
		req.Stderr = &stdout
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer p.onCancel(m.ID, cancel)()
	res, err := b.Exec(ctx, req)
	cancel()
	out := map[string]any{"exit_code": res.ExitCode, "timed_out": res.TimedOut,
		"stdout": text(stdout.Bytes()), "stderr": text(stderr.Bytes()),
		"stdout_b64": base64.StdEncoding.EncodeToString(stdout.Bytes()),
		"stderr_b64": base64.StdEncoding.EncodeToString(stderr.Bytes())}
	if err != nil {
		var le *compute.LimitError
		if !asLimit(err, &le) {
			return nil, errorOf(err)
		}
		out["error"] = errorOf(err)
	}
	return out, nil
}

func text(b []byte) string { return strings.ToValidUTF8(string(b), string(utf8.RuneError)) }

// running is a started process.
type running struct {
	kill func()
}

var (
	procs   sync.Map // process_id → *running
	procSeq atomic.Int64
)

// execStart answers with the process id, then streams the output as
// exec.output and ends with exactly one exec.exit. $/cancel of the request
// or process.kill kills the command's process group.
func execStart(p *plugin, m incoming) (any, error) {
	in, err := decode[execArgs](m)
	if err != nil {
		return nil, err
	}
	b, err := p.boxEnv(in.SandboxID, in.Run, in.Envs)
	if err != nil {
		return nil, err
	}
	req, err := in.request()
	if err != nil {
		return nil, err
	}
	id := fmt.Sprintf("p%d", procSeq.Add(1))
	ctx, cancel := context.WithCancel(context.Background())
	procs.Store(id, &running{kill: cancel})
	done := p.onCancel(m.ID, cancel)
	stdout := &notes{o: p.o, id: id, stream: "stdout"}
	req.Stdout, req.Stderr = stdout, &notes{o: p.o, id: id, stream: "stderr"}
	if in.Combined {
		req.Stderr = stdout // one pipe keeps the streams' order
	}
	p.o.result(m.ID, map[string]string{"process_id": id}) // before any of its output
	go func() {
		defer done()
		defer procs.Delete(id)
		res, err := b.Exec(ctx, req)
		exit := map[string]any{"process_id": id, "exit_code": res.ExitCode, "timed_out": res.TimedOut}
		if err != nil && ctx.Err() == nil { // a killed command just ends
			exit["error"] = errorOf(err)
		}
		p.o.notify("exec.exit", exit)
	}()
	return noAnswer, nil
}

// notes turns a command's output into exec.output notifications of at
// most 64 KiB each.
type notes struct {
	o      *out
	id     string
	stream string
}

func (n *notes) Write(b []byte) (int, error) {
	for i := 0; i < len(b); i += 64 << 10 {
		chunk := b[i:min(len(b), i+64<<10)]
		n.o.notify("exec.output", map[string]string{"process_id": n.id, "stream": n.stream,
			"data_b64": base64.StdEncoding.EncodeToString(chunk)})
	}
	return len(b), nil
}

func processList(_ *plugin, _ incoming) (any, error) {
	list := []map[string]any{}
	procs.Range(func(k, _ any) bool {
		list = append(list, map[string]any{"pid": k})
		return true
	})
	return map[string]any{"processes": list}, nil
}

type pidArgs struct {
	SandboxID string          `json:"sandbox_id"`
	PID       json.RawMessage `json:"pid"`
	Signal    string          `json:"signal"`
}

func lookup(raw json.RawMessage) *running {
	var id string
	if json.Unmarshal(raw, &id) != nil {
		return nil
	}
	r, _ := procs.Load(id)
	run, _ := r.(*running)
	return run
}

func processKill(_ *plugin, m incoming) (any, error) {
	in, err := decode[pidArgs](m)
	if err != nil {
		return nil, err
	}
	r := lookup(in.PID)
	if r != nil {
		r.kill()
	}
	return map[string]bool{"killed": r != nil}, nil
}

// processSignal delivers SIGKILL only: the local provider kills a
// command's whole group and has no other signal to give.
func processSignal(_ *plugin, m incoming) (any, error) {
	in, err := decode[pidArgs](m)
	if err != nil {
		return nil, err
	}
	if in.Signal != "SIGKILL" && in.Signal != syscall.SIGKILL.String() {
		return nil, &rpcError{Code: -32001, Message: "only SIGKILL is supported", Data: &errorRef{Kind: "feature_not_supported"}}
	}
	if r := lookup(in.PID); r != nil {
		r.kill()
	}
	return nil, nil
}
