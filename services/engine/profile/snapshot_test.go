package profile_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/services/engine/model"
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
		var f events.SnapshotFrozenPayload
		if err := json.Unmarshal(frozenLog(t, p, nil, grants...)[1].Payload, &f); err != nil {
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

	got, err := profile.SnapshotOf(frozenLog(t, base, nil, grant))
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

// TestTheSnapshotCacheDecodesEachSnapshotOnce: runs that froze the same
// snapshot read one decoded value, runs of another snapshot their own; what
// a run appends to a shared slice never reaches another run's.
func TestTheSnapshotCacheDecodesEachSnapshotOnce(t *testing.T) {
	t.Parallel()
	logOf := func(p profile.Profile, grants ...events.PermissionGrant) []events.Envelope {
		return frozenLog(t, p, []model.ToolSpec{{Name: "shell"}, {Name: "read_file"}}, grants...)
	}
	grant := events.PermissionGrant{GrantID: events.NewID("grt"), Scope: events.ScopePlatformSession, ToolName: "shell", RuleID: "r"}
	var c profile.SnapshotCache
	first, err := c.Of(logOf(profile.Demo()))
	if err != nil {
		t.Fatal(err)
	}
	again, err := c.Of(logOf(profile.Demo()))
	if err != nil {
		t.Fatal(err)
	}
	if &first.Tools[0] != &again.Tools[0] {
		t.Error("the same snapshot was decoded twice")
	}
	granted, err := c.Of(logOf(profile.Demo(), grant))
	if err != nil {
		t.Fatal(err)
	}
	if len(granted.Grants) != 1 || len(first.Grants) != 0 || &granted.Tools[0] == &first.Tools[0] {
		t.Errorf("another snapshot's grants %v read as %v", granted.Grants, first.Grants)
	}
	mine := append(first.Tools, model.ToolSpec{Name: "mine"})
	if _, err := c.Of(logOf(profile.Demo())); err != nil || len(again.Tools) != 2 || &mine[0] == &again.Tools[0] {
		t.Errorf("an append to a run's tools reached the cache: %v, %d tools", err, len(again.Tools))
	}
	if want, err := profile.SnapshotOf(logOf(profile.Demo())); err != nil || !reflect.DeepEqual(want, first) {
		t.Errorf("cached %+v\nwant %+v (%v)", first, want, err)
	}
	if _, err := c.Of(logOf(profile.Demo())[:1]); !errors.Is(err, profile.ErrNoSnapshot) {
		t.Errorf("a log without a snapshot: %v, want ErrNoSnapshot", err)
	}
}

// frozenLog is the log of a run that froze p's snapshot (with tools and
// grants): its acceptance, then the snapshot.
func frozenLog(t *testing.T, p profile.Profile, tools []model.ToolSpec, grants ...events.PermissionGrant) []events.Envelope {
	t.Helper()
	s, err := profile.NewSnapshot(p, tools, grants)
	if err != nil {
		t.Fatal(err)
	}
	f, err := s.Freeze()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	return []events.Envelope{{RunID: "run_x", Seq: 1, Type: events.RunAccepted, Payload: []byte(`{}`)},
		{RunID: "run_x", Seq: 2, Type: events.CapabilitySnapshotFrozen, Payload: raw}}
}
