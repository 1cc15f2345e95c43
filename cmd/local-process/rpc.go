package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"sync"
)

// maxLine is EPP/1's max_message_bytes.
const maxLine = 8 << 20

// incoming is a request or notification from the host.
type incoming struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params,omitempty"`
}

// rpcError is a JSON-RPC error object with EPP's data.
type rpcError struct {
	Code    int       `json:"code"`
	Message string    `json:"message"`
	Data    *errorRef `json:"data,omitempty"`
}

type errorRef struct {
	Kind      string `json:"kind,omitempty"`
	Retryable bool   `json:"retryable,omitempty"`
	Details   any    `json:"details,omitempty"`
}

func (e *rpcError) Error() string { return e.Message }

// out writes whole lines to stdout, one at a time.
type out struct {
	mu sync.Mutex
	w  *bufio.Writer
}

func newOut(w io.Writer) *out { return &out{w: bufio.NewWriterSize(w, 64<<10)} }

// send writes v as one line; one that cannot be encoded or is over
// maxLine is not written (false), a log notification instead.
func (o *out) send(v any) bool {
	line, err := json.Marshal(v)
	ok := err == nil && len(line) <= maxLine
	if !ok {
		line, _ = json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "log",
			"params": map[string]string{"level": "error", "message": "dropped an unencodable message"}})
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	_, _ = o.w.Write(append(line, '\n'))
	_ = o.w.Flush()
	return ok
}

// result answers request id; an answer that does not fit a line is an
// error answer instead, so that the host never waits for one.
func (o *out) result(id json.RawMessage, result any) {
	if result == nil {
		result = struct{}{}
	}
	if !o.send(map[string]any{"jsonrpc": "2.0", "id": id, "result": result}) {
		o.fail(id, &rpcError{Code: -32000, Message: "the answer would be over EPP/1's 8 MiB line"})
	}
}

func (o *out) fail(id json.RawMessage, err error) {
	var re *rpcError
	if !errors.As(err, &re) {
		re = errorOf(err)
	}
	o.send(map[string]any{"jsonrpc": "2.0", "id": id, "error": re})
}

func (o *out) notify(method string, params any) {
	o.send(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
}

// readLines calls handle with each line of r; a line over maxLine is
// answered with invalid_request and skipped.
func readLines(r io.Reader, o *out, handle func([]byte)) error {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		var line []byte
		tooLong := false
		for {
			chunk, err := br.ReadSlice('\n')
			if !tooLong {
				line = append(line, chunk...)
				tooLong = len(line) > maxLine+1
			}
			if errors.Is(err, bufio.ErrBufferFull) {
				continue
			}
			if err != nil {
				return err
			}
			break
		}
		if tooLong {
			o.send(map[string]any{"jsonrpc": "2.0", "id": nil, "error": rpcError{Code: -32600, Message: "line too long"}})
			continue
		}
		if line = bytes.TrimSpace(line); len(line) > 0 {
			handle(line)
		}
	}
}
