// Command local-process is the reference EPP/1 provider plugin: it keeps
// each sandbox as a directory on this machine and runs commands there with
// no isolation (development and tests). It is written as a third party
// writes a plugin — from docs/providers.md and docs/epp-methods.json alone,
// speaking only EPP/1 on its stdin and stdout — and leaves the sandbox
// semantics (layout, path checks, limits) to xbot's public local provider,
// and the check of what it is sent against the published table to package
// epp/schema (which the host's tests use too), rather than writing them
// twice.
//
// Install it with its manifest (xbot-provider.toml) beside the binary:
//
//	go build -o plugin/local-process ./cmd/local-process
//	cp cmd/local-process/xbot-provider.toml plugin/
//	xbot provider install ./plugin
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

func main() {
	t, err := loadTable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "local-process: method table:", err)
		os.Exit(2)
	}
	p := &plugin{t: t, o: newOut(os.Stdout), cancels: map[string]func(){}}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM)
	go func() {
		<-sig
		p.stop()
		os.Exit(0)
	}()
	err = readLines(os.Stdin, p.o, p.handle)
	p.stop() // stdin closed: the host is done (or gone)
	if !errors.Is(err, io.EOF) {
		fmt.Fprintln(os.Stderr, "local-process: stdin:", err)
	}
}

// plugin is the state of this process: one run's sandbox session.
type plugin struct {
	t *table
	o *out

	mu      sync.Mutex
	sb      *sandboxes        // set by initialize
	cancels map[string]func() // $/cancel: by request id
	wg      sync.WaitGroup
}

// handle dispatches one line: requests run concurrently, notifications at
// once.
func (p *plugin) handle(line []byte) {
	var m incoming
	if err := json.Unmarshal(line, &m); err != nil || m.JSONRPC != "2.0" || m.Method == "" {
		p.o.send(map[string]any{"jsonrpc": "2.0", "id": nil, "error": rpcError{Code: -32700, Message: "not a JSON-RPC 2.0 request"}})
		return
	}
	if len(m.ID) == 0 {
		if m.Method == "$/cancel" {
			var c struct {
				ID json.RawMessage `json:"id"`
			}
			if json.Unmarshal(m.Params, &c) == nil {
				p.cancel(string(c.ID))
			}
		}
		return // other notifications: none the plugin needs
	}
	h, ok := handlers[m.Method]
	if !ok {
		p.o.fail(m.ID, &rpcError{Code: -32601, Message: "local-process does not implement " + m.Method})
		return
	}
	if err := p.t.check(m.Method, m.Params); err != nil {
		p.o.fail(m.ID, err)
		return
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		result, err := h(p, m)
		if err != nil {
			p.o.fail(m.ID, err)
			return
		}
		if result != noAnswer {
			p.o.result(m.ID, result)
		}
	}()
}

// noAnswer: the handler answered itself.
var noAnswer = &struct{ none bool }{}

// onCancel registers what $/cancel of request id does, until done is called.
func (p *plugin) onCancel(id json.RawMessage, cancel func()) (done func()) {
	key := string(id)
	p.mu.Lock()
	p.cancels[key] = cancel
	p.mu.Unlock()
	return func() {
		p.mu.Lock()
		delete(p.cancels, key)
		p.mu.Unlock()
	}
}

func (p *plugin) cancel(id string) {
	p.mu.Lock()
	c := p.cancels[id]
	p.mu.Unlock()
	if c != nil {
		c()
	}
}

// stop kills every running command and closes the sandboxes' handles.
func (p *plugin) stop() {
	p.mu.Lock()
	sb := p.sb
	p.mu.Unlock()
	if sb != nil {
		sb.close()
	}
}
