package imgateway

import (
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/xbot-runtime/xbot/services/imgateway/wire"
)

func TestOutboundMediaOfEachKindAndADroppedOne(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("hi"), 0o600); err != nil {
		t.Fatal(err)
	}
	media := func(typ string, ref map[string]any) wire.Segment {
		return wire.Segment{Type: typ, Data: map[string]any{"media": ref}}
	}
	in := []wire.Segment{
		wire.TextSegment("look"),
		media("image", map[string]any{"url": "https://example.com/a.png"}),
		media("audio", map[string]any{"base64": "aGk="}),
		media("file", map[string]any{"path": "a.txt"}),
		media("video", map[string]any{"path": "/etc/passwd"}),
		{Type: "image", Data: map[string]any{"file": "no media ref"}},
	}
	core, logs := observer.New(zap.InfoLevel)
	out := outbound(in, dir, zap.New(core))
	want := []string{"", "https://example.com/a.png", "base64://aGk=", "base64://aGk="}
	if len(out) != len(want) {
		t.Fatalf("%d segments out, want %d: %+v", len(out), len(want), out)
	}
	for i, w := range want {
		if got, _ := out[i].Data["file"].(string); got != w {
			t.Errorf("segment %d: file %q, want %q", i, got, w)
		}
	}
	if n := logs.FilterMessage("sandbox_outbound_media_dropped").Len(); n != 2 {
		t.Errorf("%d drops logged, want 2", n)
	}
}

func TestMountPaths(t *testing.T) {
	t.Parallel()
	got := mounts([]Endpoint{{ID: "a", Owner: "o"}, {ID: "b", Owner: "o"}, {ID: "b", Owner: "p"}, {ID: "a", Owner: "o"}})
	want := []struct{ name, path string }{{"a", "/sandbox"}, {"b", "/sandbox/b"}, {"b-2", "/sandbox/b-2"}, {"a-2", "/sandbox/a-2"}}
	for i, w := range want {
		if got[i].Name != w.name || got[i].Path != w.path {
			t.Errorf("endpoint %d: %s at %s, want %s at %s", i, got[i].Name, got[i].Path, w.name, w.path)
		}
	}
}
