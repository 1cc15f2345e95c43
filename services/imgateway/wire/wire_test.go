package wire_test

import (
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/services/imgateway/wire"
)

var now = time.UnixMilli(1700000000000)

func TestParseInbound(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, frame string
		want        wire.Message
	}{
		{"seed example", `{"type":"group","id":"test-group","content":[{"type":"text","data":{"text":"/hello"}}],"messageId":"client-msg-001","timestamp":1700000000001}`,
			wire.Message{Type: "group", ID: "test-group", Text: "/hello", MessageID: "client-msg-001", Timestamp: 1700000000001}},
		{"defaults", `{"content":"hi"}`, wire.Message{Type: "private", ID: "owner", Text: "hi", Timestamp: now.UnixMilli()}},
		{"not JSON", `hello there`, wire.Message{Type: "private", ID: "owner", Text: "hello there", Timestamp: now.UnixMilli()}},
		{"JSON that is no object", `42`, wire.Message{Type: "private", ID: "owner", Text: "42", Timestamp: now.UnixMilli()}},
		{"direct", `{"type":"direct","id":"bob","text":"t"}`, wire.Message{Type: "private", ID: "bob", Text: "t", Timestamp: now.UnixMilli()}},
		{"guild", `{"type":"guild","id":"g","text":"t"}`, wire.Message{Type: "channel", ID: "g", Text: "t", Timestamp: now.UnixMilli()}},
		{"unknown type", `{"type":"weird","text":"t"}`, wire.Message{Type: "private", ID: "owner", Text: "t", Timestamp: now.UnixMilli()}},
		{"invalid messageId", `{"text":"t","messageId":"has space"}`, wire.Message{Type: "private", ID: "owner", Text: "t", Timestamp: now.UnixMilli()}},
		{"long messageId", `{"text":"t","messageId":"` + strings.Repeat("a", 161) + `"}`, wire.Message{Type: "private", ID: "owner", Text: "t", Timestamp: now.UnixMilli()}},
		{"text when content has none", `{"content":[{"type":"image","data":{}}],"text":"fallback"}`,
			wire.Message{Type: "private", ID: "owner", Text: "fallback", Timestamp: now.UnixMilli()}},
		{"action without text", `{"content":[{"type":"action","data":{"id":"a1"}}]}`,
			wire.Message{Type: "private", ID: "owner", Text: "a1", TextIsPayload: true, Actions: []wire.Action{{ID: "a1", Payload: "a1"}}, Timestamp: now.UnixMilli()}},
		{"action payload only", `{"content":[{"type":"text","data":{"text":"yes"}},{"type":"action","data":{"payload":"p"}}]}`,
			wire.Message{Type: "private", ID: "owner", Text: "yes", Actions: []wire.Action{{ID: "p", Payload: "p"}}, Timestamp: now.UnixMilli()}},
	}
	for _, c := range cases {
		got := wire.ParseInbound([]byte(c.frame), "owner", now)
		if !equal(got, c.want) {
			t.Errorf("%s: got %+v, want %+v", c.name, got, c.want)
		}
	}
}

func equal(a, b wire.Message) bool {
	if len(a.Actions) != len(b.Actions) || (a.Options == nil) != (b.Options == nil) {
		return false
	}
	for i := range a.Actions {
		if a.Actions[i] != b.Actions[i] {
			return false
		}
	}
	a.Actions, b.Actions, a.Options, b.Options = nil, nil, nil, nil
	return a.Type == b.Type && a.ID == b.ID && a.Text == b.Text && a.TextIsPayload == b.TextIsPayload &&
		a.MessageID == b.MessageID && a.Timestamp == b.Timestamp
}

func TestAgentRunOptions(t *testing.T) {
	t.Parallel()
	m := wire.ParseInbound([]byte(`{"text":"t","agentRun":{"workingDirectory":"src","safetyMode":"danger-full-access","approvalMode":"auto","networkAccess":false}}`), "o", now)
	if o := m.Options; o == nil || o.WorkingDirectory != "src" || o.SafetyMode != events.SafetyDangerFullAccess ||
		o.ApprovalMode != events.ApprovalAuto || o.NetworkAccess == nil || !*o.NetworkAccess {
		t.Fatalf("options %+v", m.Options)
	}
	// Values the seed does not name take the defaults: nothing is asked for.
	m = wire.ParseInbound([]byte(`{"text":"t","agentRun":{"safetyMode":"yolo","approvalMode":"never"}}`), "o", now)
	if m.Options != nil {
		t.Fatalf("unknown values asked for %+v", m.Options)
	}
	m = wire.ParseInbound([]byte(`{"text":"t","agentRun":{"workingDirectory":"`+strings.Repeat("d", 4097)+`","safetyMode":"read-only"}}`), "o", now)
	if m.Options == nil || m.Options.WorkingDirectory != "" || m.Options.SafetyMode != events.SafetyReadOnly {
		t.Fatalf("over-long working directory: %+v", m.Options)
	}
}

func TestSessionIDRoundTrips(t *testing.T) {
	t.Parallel()
	convs := []wire.Conversation{
		{Endpoint: "sandbox-bot", Type: "private", ID: "sandbox-user"},
		{Endpoint: "bot.v2", Type: "group", ID: "a:b.c/d ü"},
		{Endpoint: "x", Type: "channel", ID: ".2e"},
	}
	seen := map[string]bool{}
	for _, c := range convs {
		sid, err := wire.SessionID(c)
		if err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		if seen[sid] {
			t.Fatalf("%+v: session id %s twice", c, sid)
		}
		seen[sid] = true
		back, ok := wire.ParseSessionID(sid)
		if !ok || back != c {
			t.Fatalf("%s parsed back as %+v %v, want %+v", sid, back, ok, c)
		}
	}
	if sid, _ := wire.SessionID(convs[0]); sid != "im:sandbox-bot:private:sandbox-user" {
		t.Errorf("plain ids stay readable: %s", sid)
	}
	if _, err := wire.SessionID(wire.Conversation{Endpoint: "e", Type: "private", ID: strings.Repeat("é", 40)}); !errors.Is(err, wire.ErrSessionIDTooLong) {
		t.Errorf("too long: %v", err)
	}
	for _, s := range []string{"run_123", "im:e:private", "im:e:weird:x", "im:e:private:.zz", "im:e:private:.2"} {
		if _, ok := wire.ParseSessionID(s); ok {
			t.Errorf("%s parsed as a conversation", s)
		}
	}
}

func TestMedia(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "pic.png"), []byte("PNG"), 0o600); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(outside, []byte("no"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	seg := func(typ string, media any) wire.Segment {
		return wire.Segment{Type: typ, Data: map[string]any{"media": media}}
	}
	ok := []struct {
		in   wire.Segment
		file string
	}{
		{seg("image", map[string]any{"url": "https://example.com/a.png"}), "https://example.com/a.png"},
		{seg("audio", map[string]any{"base64": "QUJD"}), "base64://QUJD"},
		{seg("file", map[string]any{"path": "pic.png"}), "base64://" + base64.StdEncoding.EncodeToString([]byte("PNG"))},
		{seg("video", map[string]any{"path": filepath.Join(dir, "pic.png")}), "base64://" + base64.StdEncoding.EncodeToString([]byte("PNG"))},
	}
	for _, c := range ok {
		out, err := wire.Media(c.in, dir)
		if err != nil || out.Data["file"] != c.file || out.Type != c.in.Type {
			t.Errorf("%+v: %+v %v, want file %s", c.in, out, err, c.file)
		}
	}
	dropped := []wire.Segment{
		{Type: "image", Data: map[string]any{"file": "x"}},
		seg("image", map[string]any{"id": "x"}),
		seg("image", map[string]any{"path": "../" + filepath.Base(filepath.Dir(outside)) + "/secret"}),
		seg("image", map[string]any{"path": outside}),
		seg("image", map[string]any{"path": "link"}),
		seg("image", map[string]any{"path": "missing.png"}),
	}
	for _, s := range dropped {
		if _, err := wire.Media(s, dir); !errors.Is(err, wire.ErrMediaDropped) {
			t.Errorf("%+v: %v, want dropped", s, err)
		}
	}
	if _, err := wire.Media(seg("image", map[string]any{"path": "pic.png"}), ""); !errors.Is(err, wire.ErrMediaDropped) {
		t.Errorf("a path without a media directory: %v", err)
	}
}
