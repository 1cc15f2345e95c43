package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/xbot-runtime/xbot/events"
)

// Prepare resolves a model's tool call. It returns the tool and the arguments
// to run it with, or — never both — a tool-error Result the model can act on:
// events.ToolErrUnknownTool naming the available tools, or
// events.ToolErrInvalidArguments locating the problem (the line and column of
// a JSON syntax error; the JSON pointer of each schema violation, followed by
// the schema). Empty arguments mean {}.
func (r *Registry) Prepare(name, arguments string) (Tool, json.RawMessage, *Result) {
	e, ok := r.entries[name]
	if !ok {
		available := strings.Join(r.names, ", ")
		if available == "" {
			available = "none"
		}
		res := Failed(events.ToolErrUnknownTool, fmt.Sprintf("unknown tool %q; available tools: %s", name, available))
		return nil, nil, &res
	}
	raw := []byte(arguments)
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = []byte("{}")
	}
	if msg := checkArguments(e, raw); msg != "" {
		res := Failed(events.ToolErrInvalidArguments, msg)
		return nil, nil, &res
	}
	return e.tool, json.RawMessage(raw), nil
}

// checkArguments returns "" when raw is valid JSON matching e's schema, and
// otherwise an explanation for the model.
func checkArguments(e entry, raw []byte) string {
	inst, msg := parseArguments(raw)
	if msg != "" {
		return fmt.Sprintf("arguments for tool %q are not valid JSON: %s", e.spec.Name, msg)
	}
	err := e.schema.Validate(inst)
	if err == nil {
		return ""
	}
	var verr *jsonschema.ValidationError
	if !errors.As(err, &verr) {
		return fmt.Sprintf("arguments for tool %q could not be validated: %v", e.spec.Name, err)
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "arguments for tool %q do not match its parameter schema:\n", e.spec.Name)
	for _, v := range schemaViolations(verr) {
		sb.WriteString("- " + v + "\n")
	}
	var compact bytes.Buffer
	if json.Compact(&compact, e.spec.Parameters) == nil {
		sb.WriteString("The arguments must be a JSON object matching this schema: " + compact.String())
	}
	return strings.TrimRight(sb.String(), "\n")
}

// parseArguments decodes one JSON value (numbers kept exact for the schema
// validator). On a syntax error it returns a message locating it.
func parseArguments(raw []byte) (any, string) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	err := d.Decode(&v)
	var serr *json.SyntaxError
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return nil, "the input ends too early (a closing brace, bracket or quote is missing)" + where(raw, len(raw))
	case errors.As(err, &serr):
		// Offset counts the bytes read including the offending one.
		return nil, serr.Error() + where(raw, max(0, int(serr.Offset)-1))
	case err != nil:
		return nil, err.Error()
	}
	end := int(d.InputOffset())
	if rest := bytes.TrimLeft(raw[end:], " \t\r\n"); len(rest) > 0 {
		return nil, "unexpected text after the JSON value" + where(raw, len(raw)-len(rest))
	}
	return v, ""
}

// where locates byte offset at in raw by line, column and the text around it
// (up to 20 bytes either side, the position marked with ⟨here⟩).
func where(raw []byte, at int) string {
	const span = 20
	at = min(at, len(raw))
	line := 1 + bytes.Count(raw[:at], []byte("\n"))
	col := 1 + utf8.RuneCount(raw[bytes.LastIndexByte(raw[:at], '\n')+1:at])
	lo, hi := max(0, at-span), min(len(raw), at+span)
	for lo > 0 && !utf8.RuneStart(raw[lo]) {
		lo--
	}
	for hi < len(raw) && !utf8.RuneStart(raw[hi]) {
		hi++
	}
	return fmt.Sprintf(" at line %d, column %d (byte offset %d), near %q",
		line, col, at, string(raw[lo:at])+"⟨here⟩"+string(raw[at:hi]))
}
