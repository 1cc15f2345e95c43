package profile

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/services/engine/model"
	"github.com/xbot-runtime/xbot/services/engine/policy"
)

// Snapshot is a run's capability snapshot: everything the run
// may use, resolved when it starts and frozen into
// runtime.capability.snapshot_frozen. The run uses only its snapshot, so a
// profile edited mid-run affects only later runs.
type Snapshot struct {
	AgentID string `json:"agentId"`
	// Profile is the agent profile as it was when the run started. Its
	// Policy names the built-in rule set it was frozen with (by hash), so a
	// later change of the built-in rules does not change a running run
	// either (see policy.Policy.Snapshot).
	Profile Profile `json:"profile"`
	// Tools are the tool specs (names, descriptions, parameter schemas) the
	// model is offered.
	Tools []model.ToolSpec `json:"tools"`
	// PauseTTLMs is how long the run may stay paused (events.SnapshotGovernance).
	PauseTTLMs int64 `json:"pauseTtlMs"`
	// Grants are the permission grants the run starts with: the
	// platform_session grants of its session (events.SnapshotGovernance).
	Grants []events.PermissionGrant `json:"grants,omitempty"`
	// Options are the run's effective per-run options: the profile's
	// defaults merged with what the run asked for (Profile.EffectiveOptions).
	// Zero in snapshots frozen before runs had options; RunOptions then
	// gives the frozen profile's defaults.
	Options events.RunOptions `json:"options"`
	// MCPServers are the agent's MCP servers as the run found them when it
	// started: what each said of itself and the tools it listed (also in
	// Tools, as <server>__<tool>), or why an optional one was left out.
	MCPServers []MCPServerSnapshot `json:"mcpServers,omitempty"`
	// Skills are the exact skill versions the run uses, mounted read-only
	// at /skills/{id} in its sandbox.
	Skills []SkillVersion `json:"skills,omitempty"`
}

// MCPTool finds the MCP tool offered to the model as name, with its server.
func (s Snapshot) MCPTool(name string) (MCPServerSnapshot, MCPTool, bool) {
	for _, srv := range s.MCPServers {
		for _, t := range srv.Tools {
			if t.Name == name {
				return srv, t, true
			}
		}
	}
	return MCPServerSnapshot{}, MCPTool{}, false
}

// ResolvesAtStart reports whether starting a run of p needs more than the
// profile: its MCP servers' tools and its skills' versions, which the
// engine resolves (with I/O) when the run starts.
func (p Profile) ResolvesAtStart() bool { return len(p.MCPServers) > 0 || len(p.Skills) > 0 }

// RunOptions are the run's effective options: Options, or the frozen
// profile's defaults when the snapshot predates them.
func (s Snapshot) RunOptions() events.RunOptions {
	if s.Options.SafetyMode != "" {
		return s.Options
	}
	o, _ := s.Profile.EffectiveOptions(nil) // asking for nothing is always allowed
	return o
}

// NewSnapshot resolves profile p, the tool specs offered and the inherited
// grants into a snapshot.
func NewSnapshot(p Profile, tools []model.ToolSpec, grants []events.PermissionGrant) (Snapshot, error) {
	pol, err := policy.Compile(p.Policy)
	if err != nil {
		return Snapshot{}, fmt.Errorf("profile %q: policy: %w", p.ID, err)
	}
	p.Policy = pol.Snapshot()
	p.PauseTTL = p.PauseTTLOrDefault()
	return Snapshot{AgentID: p.ID, Profile: p, Tools: tools, PauseTTLMs: p.PauseTTL.Milliseconds(), Grants: grants}, nil
}

// Freeze encodes the snapshot as the payload of
// runtime.capability.snapshot_frozen: the JSON and "sha256:" + its digest.
func (s Snapshot) Freeze() (events.SnapshotFrozenPayload, error) {
	raw, err := json.Marshal(s)
	if err != nil {
		return events.SnapshotFrozenPayload{}, fmt.Errorf("encode capability snapshot: %w", err)
	}
	sum := sha256.Sum256(raw)
	return events.SnapshotFrozenPayload{Hash: "sha256:" + hex.EncodeToString(sum[:]), Snapshot: raw}, nil
}

// ErrNoSnapshot means a run's log holds no capability snapshot (it started
// before snapshots existed).
var ErrNoSnapshot = errors.New("the run has no capability snapshot")

// SnapshotOf returns the capability snapshot frozen in a run's events.
func SnapshotOf(evs []events.Envelope) (Snapshot, error) {
	return (*SnapshotCache)(nil).Of(evs)
}

// SnapshotCache keeps capability snapshots decoded, by their JSON: the runs
// of one agent with the same options and grants share a snapshot, and
// decoding it at every run's start was a measurable cost. What it returns is
// shared by every run of the snapshot: read it, never change it (its slices
// are clipped, so that an append copies). The zero value is ready; a nil
// cache decodes every time.
type SnapshotCache struct {
	mu    sync.Mutex
	m     map[string]Snapshot
	bytes int
}

// maxCachedSnapshotBytes bounds the encoded size of the snapshots a cache
// keeps; it is emptied when a snapshot would take it past.
const maxCachedSnapshotBytes = 8 << 20

// Of returns the snapshot frozen in evs (a run's events), as SnapshotOf.
func (c *SnapshotCache) Of(evs []events.Envelope) (Snapshot, error) {
	for _, e := range evs {
		if e.Type != events.CapabilitySnapshotFrozen {
			continue
		}
		p, err := e.SharedPayload()
		if err != nil {
			return Snapshot{}, err
		}
		frozen := p.(*events.SnapshotFrozenPayload)
		if s, ok := c.get(frozen.Snapshot); ok {
			return s, nil
		}
		var s Snapshot
		if err := json.Unmarshal(frozen.Snapshot, &s); err != nil {
			return Snapshot{}, fmt.Errorf("capability snapshot of run %s: %w", e.RunID, err)
		}
		s.Tools, s.Grants = slices.Clip(s.Tools), slices.Clip(s.Grants)
		s.MCPServers, s.Skills = slices.Clip(s.MCPServers), slices.Clip(s.Skills)
		c.put(frozen.Snapshot, s)
		return s, nil
	}
	return Snapshot{}, ErrNoSnapshot
}

func (c *SnapshotCache) get(raw []byte) (Snapshot, bool) {
	if c == nil {
		return Snapshot{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.m[string(raw)]
	return s, ok
}

func (c *SnapshotCache) put(raw []byte, s Snapshot) {
	if c == nil || len(raw) > maxCachedSnapshotBytes {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || c.bytes+len(raw) > maxCachedSnapshotBytes {
		c.m, c.bytes = map[string]Snapshot{}, 0
	}
	if _, ok := c.m[string(raw)]; !ok {
		c.m[string(raw)] = s
		c.bytes += len(raw)
	}
}
