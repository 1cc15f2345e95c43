package mcptest

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Name and Version are what the server says of itself.
const (
	Name    = "xbot-test-server"
	Version = "1.4.2"
)

// Tools are the server's tools, in the order it lists them.
var Tools = []string{"echo", "wait", "crash", "image", "structured", "fail", "headers", "count"}

type echoIn struct {
	Text string `json:"text" jsonschema:"the text to echo"`
}

type fileIn struct {
	File string `json:"file" jsonschema:"a file the tool appends a line to"`
}

type waitIn struct {
	File string `json:"file" jsonschema:"a file the tool appends a line to"`
	Gate string `json:"gate,omitempty" jsonschema:"a file whose appearance ends the wait"`
}

type imageIn struct {
	Bytes int `json:"bytes" jsonschema:"how many bytes of image data"`
}

type structuredOut struct {
	Answer int    `json:"answer"`
	Unit   string `json:"unit"`
}

// NewServer returns the test server. log receives each call's tool name.
func NewServer() *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: Name, Version: Version}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "echo", Description: "Echoes text.",
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}}, echo)
	sdk.AddTool(s, &sdk.Tool{Name: "wait", Description: "Appends 'started' to file, then waits until the call is cancelled " +
		"(and appends 'cancelled') or the gate file exists (and appends 'released')."}, wait)
	sdk.AddTool(s, &sdk.Tool{Name: "crash", Description: "Ends the server's process mid-call (stdio only)."}, crash)
	sdk.AddTool(s, &sdk.Tool{Name: "image", Description: "Returns a PNG image of the given size."}, image)
	sdk.AddTool(s, &sdk.Tool{Name: "structured", Description: "Returns structured content."}, structured)
	sdk.AddTool(s, &sdk.Tool{Name: "fail", Description: "Reports an error as its result."}, fail)
	sdk.AddTool(s, &sdk.Tool{Name: "headers", Description: "Returns the HTTP headers of the call."}, headers)
	sdk.AddTool(s, &sdk.Tool{Name: "count", Description: "Appends 'ran' to file."}, count)
	return s
}

func echo(_ context.Context, _ *sdk.CallToolRequest, in echoIn) (*sdk.CallToolResult, any, error) {
	return text(in.Text), nil, nil
}

// gatePoll is how often wait looks for its gate file.
const gatePoll = 20 * time.Millisecond

func wait(ctx context.Context, _ *sdk.CallToolRequest, in waitIn) (*sdk.CallToolResult, any, error) {
	appendLine(in.File, "started")
	tick := time.NewTicker(gatePoll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			appendLine(in.File, "cancelled")
			return nil, nil, ctx.Err()
		case <-tick.C:
			if _, err := os.Stat(in.Gate); in.Gate != "" && err == nil {
				appendLine(in.File, "released")
				return text("released"), nil, nil
			}
		}
	}
}

func crash(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
	fmt.Fprintln(os.Stderr, "crashing on purpose")
	os.Exit(3)
	return nil, nil, nil
}

func image(_ context.Context, _ *sdk.CallToolRequest, in imageIn) (*sdk.CallToolResult, any, error) {
	data := make([]byte, in.Bytes)
	_, _ = rand.Read(data)
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "an image:"},
		&sdk.ImageContent{MIMEType: "image/png", Data: data}}}, nil, nil
}

func structured(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, structuredOut, error) {
	return nil, structuredOut{Answer: 42, Unit: "none"}, nil
}

func fail(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
	return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "the widget is broken"}}}, nil, nil
}

func headers(_ context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
	var lines []string
	if req.Extra != nil {
		for name, vs := range req.Extra.Header {
			lines = append(lines, name+": "+strings.Join(vs, ", "))
		}
	}
	sort.Strings(lines)
	return text(strings.Join(lines, "\n")), nil, nil
}

func count(_ context.Context, _ *sdk.CallToolRequest, in fileIn) (*sdk.CallToolResult, any, error) {
	appendLine(in.File, "ran")
	return text("counted"), nil, nil
}

func text(s string) *sdk.CallToolResult {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}
}

var fileMu sync.Mutex

func appendLine(path, line string) {
	if path == "" {
		return
	}
	fileMu.Lock()
	defer fileMu.Unlock()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o666) // #nosec G302 G304 -- a test's file
	if err != nil {
		return
	}
	_, _ = fmt.Fprintln(f, line)
	_ = f.Close()
}

// HeaderLog records the headers of every request an HTTP server got.
type HeaderLog struct {
	mu   sync.Mutex
	seen []http.Header
}

// All returns every request's headers.
func (h *HeaderLog) All() []http.Header {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]http.Header(nil), h.seen...)
}

func (h *HeaderLog) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		h.seen = append(h.seen, r.Header.Clone())
		h.mu.Unlock()
		next.ServeHTTP(w, r)
	})
}

// ServeHTTP serves NewServer over streamable HTTP on a free loopback port
// until the test ends; it returns the endpoint's URL and its header log.
func ServeHTTP(t testing.TB) (string, *HeaderLog) {
	t.Helper()
	log := &HeaderLog{}
	srv := NewServer()
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	ts := httptest.NewServer(log.wrap(h))
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp", log
}

// ServeSSE serves NewServer over the HTTP+SSE transport.
func ServeSSE(t testing.TB) (string, *HeaderLog) {
	t.Helper()
	log := &HeaderLog{}
	srv := NewServer()
	h := sdk.NewSSEHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	ts := httptest.NewServer(log.wrap(h))
	t.Cleanup(ts.Close)
	return ts.URL + "/sse", log
}

// StdioArg is the argument that makes a test binary serve stdio
// (ServeStdioIfAsked).
const StdioArg = "xbot-mcp-test-server"

// ServeStdioIfAsked serves NewServer on stdin and stdout and exits when
// the process was started with StdioArg as its first argument; call it
// first in TestMain. Otherwise it returns.
func ServeStdioIfAsked() {
	if len(os.Args) < 2 || os.Args[1] != StdioArg {
		return
	}
	if err := NewServer().Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}
