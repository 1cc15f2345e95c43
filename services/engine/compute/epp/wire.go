package epp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// message is one JSON-RPC 2.0 object on a line: a request (id and method),
// a notification (method, no id) or a response (id and result or error).
// Unknown fields are ignored.
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *wireError      `json:"error,omitempty"`
}

// wireError is a JSON-RPC error object; data is EPP's ErrorData.
type wireError struct {
	Code    int        `json:"code"`
	Message string     `json:"message"`
	Data    *errorData `json:"data,omitempty"`
}

type errorData struct {
	Kind       string          `json:"kind,omitempty"`
	Suggestion string          `json:"suggestion,omitempty"`
	Retryable  bool            `json:"retryable,omitempty"`
	Details    json.RawMessage `json:"details,omitempty"`
}

// limitDetails are the details of kind limit_exceeded.
type limitDetails struct {
	Resource  string `json:"resource"`
	Limit     int64  `json:"limit"`
	Mechanism string `json:"mechanism"`
}

// outgoing is what the host writes: a request or a notification.
type outgoing struct {
	JSONRPC string `json:"jsonrpc"`
	ID      *int64 `json:"id,omitempty"`
	Method  string `json:"method"`
	Params  any    `json:"params"`
}

// encode returns the line of a request (id != nil) or notification; one
// that would exceed MaxMessageBytes is refused.
func encode(id *int64, method string, params any) ([]byte, error) {
	if params == nil {
		params = struct{}{}
	}
	line, err := json.Marshal(outgoing{JSONRPC: "2.0", ID: id, Method: method, Params: params})
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", method, err)
	}
	if len(line) > MaxMessageBytes {
		return nil, fmt.Errorf("%s: the request is %d bytes, over EPP/1's %d: %w", method, len(line), MaxMessageBytes, ErrInvalid)
	}
	return append(line, '\n'), nil
}

// errLineTooLong is a line over MaxMessageBytes.
var errLineTooLong = fmt.Errorf("a line longer than %d bytes: %w", MaxMessageBytes, ErrProtocol)

// lineReader splits a plugin's stdout into lines of at most max bytes.
type lineReader struct {
	r   *bufio.Reader
	max int
}

func newLineReader(r io.Reader, limit int) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 64<<10), max: limit}
}

// next returns the next non-empty line without its newline (and a
// trailing CR). It fails with errLineTooLong as soon as a line exceeds max,
// without reading the rest of it, and with a protocol error for text that
// is not UTF-8.
func (l *lineReader) next() ([]byte, error) {
	for {
		var line []byte
		for {
			chunk, err := l.r.ReadSlice('\n')
			if len(line)+len(chunk) > l.max+1 { // +1: the newline itself
				return nil, errLineTooLong
			}
			line = append(line, chunk...)
			if errors.Is(err, bufio.ErrBufferFull) {
				continue
			}
			if err != nil {
				if errors.Is(err, io.EOF) && len(bytes.TrimSpace(line)) > 0 {
					return nil, fmt.Errorf("a last line without a newline: %w", ErrProtocol)
				}
				return nil, err
			}
			break
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if !utf8.Valid(line) {
			return nil, fmt.Errorf("a line that is not UTF-8: %w", ErrProtocol)
		}
		return line, nil
	}
}

// decode parses one line as a JSON-RPC 2.0 message.
func decode(line []byte) (message, error) {
	var m message
	if err := json.Unmarshal(line, &m); err != nil {
		return m, fmt.Errorf("a line that is not a JSON object: %w", ErrProtocol)
	}
	if m.JSONRPC != "2.0" {
		return m, fmt.Errorf(`a message without "jsonrpc": "2.0": %w`, ErrProtocol)
	}
	isResponse := m.Method == "" && len(m.ID) > 0 && (len(m.Result) > 0 || m.Error != nil)
	if m.Method == "" && !isResponse {
		return m, fmt.Errorf("a message that is neither a response nor a notification: %w", ErrProtocol)
	}
	return m, nil
}
