package openai

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
)

// maxLine bounds one SSE line, and the data of one event (its data lines
// together). A server that sends a whole response in one chunk stays far
// below it; a runaway stream does not exhaust memory.
const maxLine = 16 << 20

// errEventTooLarge: one event's data passed maxLine.
var errEventTooLarge = fmt.Errorf("event stream event longer than %d bytes", maxLine)

// sseEvent is one dispatched server-sent event.
type sseEvent struct {
	event string // "" for the default "message" type
	data  string
}

// sseReader parses text/event-stream as the WHATWG HTML spec describes:
// fields "data" (repeated lines joined with "\n") and "event"; comment lines
// (": ping", ": OPENROUTER PROCESSING") and other fields are ignored; a blank
// line dispatches. Two deviations for real servers: llama.cpp's legacy
// "error: {...}" line is read as an "error" event, and data pending at end of
// stream is dispatched rather than dropped. Lines end in LF or CRLF.
type sseReader struct {
	r     *bufio.Reader
	data  strings.Builder
	event string
	has   bool // a data field was seen since the last dispatch
}

func newSSEReader(r io.Reader) *sseReader {
	return &sseReader{r: bufio.NewReaderSize(r, 64<<10)}
}

// next returns the next event, or the read error (io.EOF at a clean end).
func (s *sseReader) next() (sseEvent, error) {
	for {
		line, err := s.readLine()
		if err != nil {
			if errors.Is(err, io.EOF) && s.has {
				return s.dispatch(), nil
			}
			return sseEvent{}, err
		}
		if line == "" {
			if s.has {
				return s.dispatch(), nil
			}
			s.event = ""
			continue
		}
		s.field(line)
		if s.data.Len() > maxLine {
			return sseEvent{}, errEventTooLarge
		}
	}
}

func (s *sseReader) field(line string) {
	if strings.HasPrefix(line, ":") {
		return // comment / keep-alive
	}
	name, value, _ := strings.Cut(line, ":")
	value = strings.TrimPrefix(value, " ")
	switch name {
	case "data":
		if s.has {
			s.data.WriteByte('\n')
		}
		s.data.WriteString(value)
		s.has = true
	case "event":
		s.event = value
	case "error": // llama.cpp before it adopted data: {"error": ...}
		s.event = "error"
		s.data.Reset()
		s.data.WriteString(value)
		s.has = true
	}
}

func (s *sseReader) dispatch() sseEvent {
	ev := sseEvent{event: s.event, data: s.data.String()}
	s.data.Reset()
	s.event, s.has = "", false
	return ev
}

// readLine returns one line without its terminator. A final line without a
// terminator is returned with a nil error; the next call returns io.EOF.
func (s *sseReader) readLine() (string, error) {
	var buf []byte
	for {
		part, err := s.r.ReadSlice('\n')
		buf = append(buf, part...)
		if len(buf) > maxLine {
			return "", fmt.Errorf("event stream line longer than %d bytes", maxLine)
		}
		switch {
		case err == nil:
			return string(bytes.TrimSuffix(buf[:len(buf)-1], []byte("\r"))), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(buf) > 0:
			return string(bytes.TrimSuffix(buf, []byte("\r"))), nil
		default:
			return "", err
		}
	}
}
