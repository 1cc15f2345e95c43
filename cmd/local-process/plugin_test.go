package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/infra/devstack/eventually"
)

// serve feeds lines to a plugin and returns what it wrote once it has
// answered want messages.
func serve(t *testing.T, want int, lines ...string) []map[string]any {
	t.Helper()
	tb, err := loadTable()
	if err != nil {
		t.Fatal(err)
	}
	var buf syncBuffer
	p := &plugin{t: tb, o: newOut(&buf), cancels: map[string]func(){}}
	if err := readLines(strings.NewReader(strings.Join(lines, "\n")+"\n"), p.o, p.handle); err == nil {
		t.Fatal("readLines ended without the input's end")
	}
	p.wg.Wait() // requests are answered on goroutines of their own
	eventually.Succeeds(t, 30*time.Second, "the plugin's answers", func() error {
		if n := strings.Count(buf.String(), "\n"); n < want {
			return fmt.Errorf("%d answers", n)
		}
		return nil
	})
	p.stop()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("the plugin wrote %q", l)
		}
		out = append(out, m)
	}
	return out
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func code(m map[string]any) float64 {
	e, _ := m["error"].(map[string]any)
	c, _ := e["code"].(float64)
	return c
}

// TestProtocolEdges: what the plugin answers to what EPP/1 says a plugin
// must handle — unknown methods, missing or mistyped parameters, unknown
// fields (ignored), a line over 8 MiB (refused, the next one served).
func TestProtocolEdges(t *testing.T) {
	data := t.TempDir()
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocol":"epp/1","host":{"name":"x","version":"1"},` +
		`"config":{"sandbox_limits":"rlimit"},"data_dir":"` + data + `","unknown_field":{"ignored":true}}}`
	got := serve(t, 6,
		init,
		`{"jsonrpc":"2.0","id":2,"method":"no.such.method","params":{}}`,
		`{"jsonrpc":"2.0","id":3,"method":"sandbox.get","params":{}}`,
		`{"jsonrpc":"2.0","id":4,"method":"sandbox.kill","params":{"sandbox_id":7}}`,
		`{"jsonrpc":"2.0","id":5,"method":"files.move","params":{"sandbox_id":"lp-0000000000000000","run":{},"source":"a","destination":"b"}}`,
		`{"jsonrpc":"2.0","id":6,"method":"sandbox.list","params":{"extra":1}}`+strings.Repeat(" ", 8<<20),
		`{"jsonrpc":"2.0","id":7,"method":"sandbox.list","params":{"extra":1}}`,
	)
	byID := map[float64]map[string]any{}
	for _, m := range got {
		id, _ := m["id"].(float64)
		byID[id] = m
	}
	if r, _ := byID[1]["result"].(map[string]any); r["protocol"] != "epp/1" {
		t.Errorf("initialize: %v", byID[1])
	}
	for id, want := range map[float64]float64{2: -32601, 3: -32602, 4: -32602, 5: -32601, 0: -32600} {
		if code(byID[id]) != want {
			t.Errorf("request %v: %v, want error %v", id, byID[id], want)
		}
	}
	if _, ok := byID[7]["result"]; !ok {
		t.Errorf("sandbox.list with an unknown field after an over-long line: %v", byID[7])
	}
}

// TestFixtureCopy: the table this plugin was written from is the one xbot
// publishes.
func TestFixtureCopy(t *testing.T) {
	published, err := os.ReadFile("../../docs/epp-methods.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(published, methodsJSON) {
		t.Error("cmd/local-process/epp-methods.json differs from docs/epp-methods.json")
	}
}

// TestOverlongAnswerIsAnError: an answer over 8 MiB is not written; the
// request is answered with an error instead, so the host does not wait.
func TestOverlongAnswerIsAnError(t *testing.T) {
	var buf syncBuffer
	newOut(&buf).result(json.RawMessage("7"), map[string]string{"stdout": strings.Repeat("x", maxLine)})
	var answer struct {
		ID    int       `json:"id"`
		Error *rpcError `json:"error"`
	}
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if json.Unmarshal([]byte(l), &answer) == nil && answer.ID == 7 {
			break
		}
	}
	if answer.ID != 7 || answer.Error == nil || answer.Error.Code != -32000 {
		t.Errorf("answer to 7: %+v, want an error", answer)
	}
}
