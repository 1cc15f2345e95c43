package profile_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/services/engine/policy"
	"github.com/xbot-runtime/xbot/services/engine/profile"
)

// TestSnapshotHashFollowsTheContent: the same profile and grants always give
// the same hash; any change to what the run may use gives another; and the
// snapshot reads back from the event that froze it.
func TestSnapshotHashFollowsTheContent(t *testing.T) {
	t.Parallel()
	grant := events.PermissionGrant{GrantID: events.NewID("grt"), Scope: events.ScopePlatformSession, ToolName: "shell", RuleID: "r"}
	freeze := func(p profile.Profile, grants ...events.PermissionGrant) events.SnapshotFrozenPayload {
		t.Helper()
		s, err := profile.NewSnapshot(p, nil, grants)
		if err != nil {
			t.Fatal(err)
		}
		f, err := s.Freeze()
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	base := profile.Demo()
	h := freeze(base).Hash
	if again := freeze(base).Hash; again != h {
		t.Fatalf("the same profile froze to %s and %s", h, again)
	}
	prompt := base
	prompt.SystemPrompt = "another prompt"
	rules := base
	rules.Policy = policy.Config{Rules: []policy.Rule{{ID: "x", Tool: "shell", Action: policy.Deny}}}
	ttl := base
	ttl.PauseTTL = 1
	for name, other := range map[string]string{
		"system prompt": freeze(prompt).Hash, "policy": freeze(rules).Hash, "pause ttl": freeze(ttl).Hash,
		"grants": freeze(base, grant).Hash,
	} {
		if other == h {
			t.Errorf("changing the %s kept the hash %s", name, h)
		}
	}

	f := freeze(base, grant)
	raw, _ := json.Marshal(f)
	env := events.Envelope{RunID: "run_x", Seq: 2, Type: events.CapabilitySnapshotFrozen, Payload: raw}
	got, err := profile.SnapshotOf([]events.Envelope{env})
	if err != nil {
		t.Fatal(err)
	}
	if got.Profile.SystemPrompt != base.SystemPrompt || len(got.Grants) != 1 || got.PauseTTLMs != profile.DefaultPauseTTL.Milliseconds() ||
		got.Profile.Policy.Builtins != policy.BuiltinsHash() {
		t.Errorf("snapshot read back %+v", got)
	}
	if _, err := profile.SnapshotOf(nil); !errors.Is(err, profile.ErrNoSnapshot) {
		t.Errorf("a log without a snapshot: %v, want ErrNoSnapshot", err)
	}
}
