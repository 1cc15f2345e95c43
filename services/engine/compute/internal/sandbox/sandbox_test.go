package sandbox_test

import (
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xbot-runtime/xbot/services/engine/compute"
	"github.com/xbot-runtime/xbot/services/engine/compute/internal/sandbox"
)

func TestKeyDir(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		key  compute.Key
		want string // "" = refused
	}{
		{compute.Key{TenantID: "t", WorkspaceID: "w", AgentID: "a", OwnerID: "o"}, "/base/t/w/a/o"},
		{compute.Key{TenantID: "..", WorkspaceID: ".", AgentID: ".hidden", OwnerID: "a..b"}, "/base/%2E./%2E/%2Ehidden/a..b"},
		{compute.Key{TenantID: "a/b", WorkspaceID: "a%2Fb", AgentID: "x\x00y", OwnerID: "é"}, "/base/a%2Fb/a%252Fb/x%00y/%C3%A9"},
		{compute.Key{TenantID: "", WorkspaceID: "w", AgentID: "a", OwnerID: "o"}, ""},
		{compute.Key{TenantID: "t", WorkspaceID: "w", AgentID: "a", OwnerID: strings.Repeat("/", 100)}, ""},
	} {
		got, err := sandbox.KeyDir("/base", tc.key)
		if (err != nil) != (tc.want == "") || got != tc.want {
			t.Errorf("KeyDir(%+v) = %q, %v; want %q", tc.key, got, err, tc.want)
		}
	}
}

// FuzzKeyDir: every accepted ID becomes exactly one component below base,
// never "." or "..", and unescaping gives the ID back (so distinct IDs never
// share a directory).
func FuzzKeyDir(f *testing.F) {
	for _, s := range []string{"t", "..", "a/b", "%2F", ".x", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		dir, err := sandbox.KeyDir("/base", compute.Key{TenantID: id, WorkspaceID: "w", AgentID: "a", OwnerID: "o"})
		if err != nil {
			return
		}
		rel, err := filepath.Rel("/base", dir)
		parts := strings.Split(rel, "/")
		if err != nil || len(parts) != 4 || parts[0] == "." || parts[0] == ".." {
			t.Fatalf("KeyDir(%q) = %s", id, dir)
		}
		if back, err := url.PathUnescape(parts[0]); err != nil || back != id {
			t.Fatalf("KeyDir(%q) component %q unescapes to %q, %v", id, parts[0], back, err)
		}
	})
}

// TestASessionNamedUnderscoreHasItsOwnContext: the runs without a session
// keep their directories in sessions/_; a session named "_" must not share
// them (nor its context) with those runs.
func TestASessionNamedUnderscoreHasItsOwnContext(t *testing.T) {
	t.Parallel()
	key := compute.Key{TenantID: "t", WorkspaceID: "w", AgentID: "a", OwnerID: "o"}
	context := func(session string) string {
		t.Helper()
		p, err := sandbox.CheckSpec(compute.Spec{Key: key, SessionID: session, RunID: "r"})
		if err != nil {
			t.Fatal(err)
		}
		return p.Context
	}
	none, underscore, escaped := context(""), context("_"), context("%5F")
	if none != "/sessions/_/context" || underscore == none || underscore == escaped {
		t.Errorf("contexts: without a session %s, of session \"_\" %s, of session \"%%5F\" %s; want three different ones",
			none, underscore, escaped)
	}
}
