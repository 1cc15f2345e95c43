package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
)

type handler func(p *plugin, m incoming) (any, error)

// handlers are the methods this plugin implements; every other method of
// the table is answered -32601.
var handlers = map[string]handler{
	"initialize":          initialize,
	"shutdown":            shutdown,
	"sandbox.create":      sandboxCreate,
	"sandbox.get":         sandboxGet,
	"sandbox.connect":     sandboxGet,
	"sandbox.list":        sandboxList,
	"sandbox.kill":        sandboxKill,
	"exec.run":            execRun,
	"exec.start":          execStart,
	"process.list":        processList,
	"process.kill":        processKill,
	"process.send_signal": processSignal,
	"files.read":          filesRead,
	"files.write":         filesWrite,
	"files.stat":          filesStat,
	"files.list":          filesList,
}

func decode[T any](m incoming) (T, error) {
	var v T
	if err := json.Unmarshal(m.Params, &v); err != nil {
		return v, &rpcError{Code: -32602, Message: "params: " + err.Error()}
	}
	return v, nil
}

func mkdirs(dir string) error { return os.MkdirAll(dir, 0o700) }

func initialize(p *plugin, m incoming) (any, error) {
	in, err := decode[struct {
		Protocol string            `json:"protocol"`
		Config   map[string]string `json:"config"`
		DataDir  string            `json:"data_dir"`
	}](m)
	if err != nil {
		return nil, err
	}
	if in.Protocol != "epp/1" {
		return nil, &rpcError{Code: -32001, Message: "local-process speaks epp/1 only", Data: &errorRef{Kind: "invalid_argument"}}
	}
	root := in.Config["root"]
	if root == "" {
		root = filepath.Join(in.DataDir, "sandboxes")
	}
	sb, err := newSandboxes(root, in.Config["sandbox_limits"])
	if err != nil {
		return nil, &rpcError{Code: -32000, Message: "sandboxes: " + err.Error(), Data: &errorRef{Kind: "unavailable"}}
	}
	p.mu.Lock()
	p.sb = sb
	p.mu.Unlock()
	return map[string]any{"protocol": "epp/1", "name": "local-process", "version": "0.1.0",
		"features":  []string{"sandbox.lifecycle", "exec.run", "exec.stream", "files.rw", "mounts.read_only"},
		"isolation": "none", "limits_mechanism": sb.local.Mechanism()}, nil
}

// ready returns the sandboxes once initialize ran.
func (p *plugin) ready() (*sandboxes, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.sb == nil {
		return nil, &rpcError{Code: -32600, Message: "initialize first"}
	}
	return p.sb, nil
}

func shutdown(p *plugin, _ incoming) (any, error) {
	p.stop()
	return nil, nil
}

type idArgs struct {
	SandboxID string `json:"sandbox_id"`
}

func sandboxCreate(p *plugin, m incoming) (any, error) {
	sb, err := p.ready()
	if err != nil {
		return nil, err
	}
	in, err := decode[struct {
		Template string            `json:"template"`
		Metadata map[string]string `json:"metadata"`
	}](m)
	if err != nil {
		return nil, err
	}
	rec, err := sb.rec.create(in.Template, in.Metadata)
	if err != nil {
		return nil, err
	}
	return map[string]any{"sandbox": rec}, nil
}

func sandboxGet(p *plugin, m incoming) (any, error) {
	sb, err := p.ready()
	if err != nil {
		return nil, err
	}
	in, err := decode[idArgs](m)
	if err != nil {
		return nil, err
	}
	rec, err := sb.rec.get(in.SandboxID)
	if err != nil {
		return nil, err
	}
	return map[string]any{"sandbox": rec}, nil
}

// listPage is how many records one sandbox.list answers.
const listPage = 100

func sandboxList(p *plugin, m incoming) (any, error) {
	sb, err := p.ready()
	if err != nil {
		return nil, err
	}
	in, err := decode[struct {
		Metadata map[string]string `json:"metadata"`
		Cursor   string            `json:"cursor"`
	}](m)
	if err != nil {
		return nil, err
	}
	all, err := sb.rec.list(in.Metadata)
	if err != nil {
		return nil, err
	}
	page := []record{}
	for _, r := range all {
		if r.SandboxID > in.Cursor && len(page) < listPage {
			page = append(page, r)
		}
	}
	out := map[string]any{"sandboxes": page}
	if len(page) == listPage && page[len(page)-1].SandboxID != all[len(all)-1].SandboxID {
		out["next"] = page[len(page)-1].SandboxID
	}
	return out, nil
}

func sandboxKill(p *plugin, m incoming) (any, error) {
	sb, err := p.ready()
	if err != nil {
		return nil, err
	}
	in, err := decode[idArgs](m)
	if err != nil {
		return nil, err
	}
	killed, err := sb.kill(context.Background(), in.SandboxID)
	if err != nil {
		return nil, err
	}
	return map[string]bool{"killed": killed}, nil
}
