package client_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/xbot-runtime/xbot/services/api/client"
)

// bodyTransport answers every request with a 200 event stream of body,
// without a network: the benchmark counts what the client itself allocates.
type bodyTransport string

func (b bodyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"text/event-stream"}},
		Body: io.NopCloser(strings.NewReader(string(b))), Request: r}, nil
}

// BenchmarkFollowRun follows a run's stream of 24 typical chunks: the
// bytes an op allocates are about what a client keeps per open stream.
func BenchmarkFollowRun(b *testing.B) {
	var body strings.Builder
	for i := range 24 {
		fmt.Fprintf(&body, "id: %d\ndata: {\"type\":\"text-delta\",\"id\":\"itm_01M95W0T81VW160DCKC35H4PXE\",\"delta\":\"chunk %d \"}\n\n", i+1, i)
	}
	body.WriteString("data: [DONE]\n\n")
	c, err := client.New(client.Config{BaseURL: "http://xbot.invalid", HTTP: &http.Client{Transport: bodyTransport(body.String())}})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		if err := c.FollowRun(context.Background(), "run_1", "", func(client.StreamEvent) error { n++; return nil }); err != nil || n != 24 {
			b.Fatalf("%d events: %v", n, err)
		}
	}
}
