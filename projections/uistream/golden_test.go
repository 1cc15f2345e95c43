package uistream_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/events/eventstest"
	"github.com/xbot-runtime/xbot/projections/uistream"
)

// annotated renders a run's stream like WriteRun, with an SSE comment line
// before each event's chunks naming the event. Comments are valid SSE that
// clients ignore, so the golden files are servable as they are.
func annotated(t testing.TB, evs []events.Envelope) []byte {
	t.Helper()
	var out bytes.Buffer
	for i, e := range evs {
		label := fmt.Sprintf(": %d %s", e.Seq, e.Type)
		if e.ItemID != "" {
			label += " " + e.ItemID
		}
		out.WriteString(label + "\n")
		var one bytes.Buffer
		// Write up to this event and keep what this event added.
		if err := uistream.WriteRun(&one, evs[:i+1], uistream.After(e.Seq-1)); err != nil {
			t.Fatal(err)
		}
		out.Write(bytes.TrimSuffix(one.Bytes(), []byte(doneFrame)))
	}
	var whole bytes.Buffer
	if err := uistream.WriteRun(&whole, evs, uistream.Position{}); err != nil {
		t.Fatal(err)
	}
	if bytes.HasSuffix(whole.Bytes(), []byte(doneFrame)) {
		out.WriteString(doneFrame)
	}
	return out.Bytes()
}

const doneFrame = "data: [DONE]\n\n"

// stripComments removes the comment lines annotated added.
func stripComments(b []byte) []byte {
	var out []string
	for _, l := range strings.SplitAfter(string(b), "\n") {
		if !strings.HasPrefix(l, ": ") {
			out = append(out, l)
		}
	}
	return []byte(strings.Join(out, ""))
}

func TestGoldenStreams(t *testing.T) {
	t.Parallel()
	for _, name := range slices.Sorted(maps.Keys(goldenCases)) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			evs := goldenCases[name](t)
			got := annotated(t, evs)
			var whole bytes.Buffer
			if err := uistream.WriteRun(&whole, evs, uistream.Position{}); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(stripComments(got), whole.Bytes()) {
				t.Fatalf("event-by-event rendering differs from the whole run's:\n%s\n---\n%s", got, whole.Bytes())
			}
			checkChunks(t, whole.Bytes())
			eventstest.Golden(t, filepath.Join("testdata", name+".sse"), got)
		})
	}
}

func TestGoldenCasesCoverTheCatalog(t *testing.T) {
	t.Parallel()
	seen := map[events.Type]bool{}
	for _, build := range goldenCases {
		for _, e := range build(t) {
			seen[e.Type] = true
		}
	}
	for _, typ := range events.Catalog() {
		if !seen[typ] {
			t.Errorf("no golden case has a %s event", typ)
		}
	}
}

// allowedKeys are the fields the AI SDK's schema (ai@6 uiMessageChunkSchema)
// declares for each chunk type we send. The SDK's objects are loose, but a
// field it does not declare is an error in our mapping.
var allowedKeys = map[string][]string{
	"start":                 {"messageId", "messageMetadata"},
	"finish":                {"finishReason", "messageMetadata"},
	"abort":                 {"reason"},
	"error":                 {"errorText"},
	"message-metadata":      {"messageMetadata"},
	"start-step":            {},
	"finish-step":           {},
	"text-start":            {"id", "providerMetadata"},
	"text-delta":            {"id", "delta", "providerMetadata"},
	"text-end":              {"id", "providerMetadata"},
	"reasoning-start":       {"id", "providerMetadata"},
	"reasoning-delta":       {"id", "delta", "providerMetadata"},
	"reasoning-end":         {"id", "providerMetadata"},
	"tool-input-start":      {"toolCallId", "toolName", "dynamic", "providerExecuted", "providerMetadata", "title"},
	"tool-input-available":  {"toolCallId", "toolName", "input", "dynamic", "providerExecuted", "providerMetadata", "title"},
	"tool-output-available": {"toolCallId", "output", "dynamic", "providerExecuted", "providerMetadata", "preliminary"},
	"tool-output-error":     {"toolCallId", "errorText", "dynamic", "providerExecuted", "providerMetadata"},
	"tool-output-denied":    {"toolCallId"},
	"tool-approval-request": {"approvalId", "toolCallId", "approvalDescriptor"},
	"data-*":                {"id", "data", "transient"},
}

// required are fields a chunk type must carry.
var required = map[string][]string{
	"start": {"messageId", "messageMetadata"}, "error": {"errorText"}, "text-delta": {"id", "delta"},
	"tool-input-available": {"toolCallId", "toolName", "input"}, "tool-output-available": {"toolCallId", "output"},
	"tool-output-error": {"toolCallId", "errorText"}, "tool-approval-request": {"approvalId", "toolCallId"},
	"data-*": {"data"},
}

// checkChunks checks every chunk of an SSE stream against allowedKeys.
func checkChunks(t testing.TB, sse []byte) {
	t.Helper()
	for _, l := range strings.Split(string(sse), "\n") {
		data, ok := strings.CutPrefix(l, "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var c map[string]json.RawMessage
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			t.Fatalf("chunk %s: %v", data, err)
		}
		var typ string
		_ = json.Unmarshal(c["type"], &typ)
		key := typ
		if strings.HasPrefix(typ, "data-") {
			key = "data-*"
		}
		allowed, known := allowedKeys[key]
		if !known {
			t.Errorf("chunk type %q is not one we mean to send: %s", typ, data)
			continue
		}
		for k := range c {
			if k != "type" && !slices.Contains(allowed, k) {
				t.Errorf("chunk %s has field %q the SDK does not declare", data, k)
			}
		}
		for _, k := range required[key] {
			if _, ok := c[k]; !ok {
				t.Errorf("chunk %s lacks %q", data, k)
			}
		}
	}
}
