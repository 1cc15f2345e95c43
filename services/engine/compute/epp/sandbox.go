package epp

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/services/engine/compute"
)

// Sandbox is one run's handle: a plugin process attached to the key's
// sandbox. It implements compute.Sandbox and compute.Identified.
type Sandbox struct {
	p     *Provider
	s     *session
	key   string // keyID
	id    string
	scope runScope
	paths compute.Paths

	mu        sync.Mutex
	closed    bool
	live      map[string]struct{} // exec.start process ids running
	runs      map[int64]struct{}  // exec.run and exec.start request ids running
	lost      error               // why the sandbox is lost (lost.go)
	destroyed bool                // lost by Destroy: nothing left to kill
	lostCh    chan struct{}       // closed when lost is set
}

var (
	_ compute.Sandbox    = (*Sandbox)(nil)
	_ compute.Identified = (*Sandbox)(nil)
)

// runScope is the RunScope every data-plane call carries.
type runScope struct {
	SessionID  string            `json:"session_id"`
	RunID      string            `json:"run_id"`
	Paths      scopePaths        `json:"paths"`
	SafetyMode string            `json:"safety_mode"`
	Network    bool              `json:"network"`
	AllowHosts []string          `json:"allow_hosts,omitempty"`
	Env        map[string]string `json:"env,omitempty"`
	Limits     *scopeLimits      `json:"limits,omitempty"`
	Mounts     []scopeMount      `json:"read_only_mounts,omitempty"`
}

type scopeMount struct {
	Source string `json:"source"`
	Target string `json:"target"`
}

type scopePaths struct {
	WorkingDirectory string `json:"working_directory"`
	Workspace        string `json:"workspace"`
	Context          string `json:"context"`
	Input            string `json:"input"`
	Output           string `json:"output"`
	Tmp              string `json:"tmp"`
}

type scopeLimits struct {
	MemoryBytes    int64 `json:"memory_bytes,omitempty"`
	Pids           int64 `json:"pids,omitempty"`
	CPUMillis      int64 `json:"cpu_millis,omitempty"`
	WorkspaceBytes int64 `json:"workspace_bytes,omitempty"`
}

func newSandbox(pr *Provider, s *session, id string, spec compute.Spec, p compute.Paths) *Sandbox {
	mode := spec.SafetyMode
	if mode == "" {
		mode = events.SafetyWorkspaceWrite
	}
	scope := runScope{SessionID: spec.SessionID, RunID: spec.RunID, SafetyMode: string(mode), Network: spec.Network,
		AllowHosts: spec.AllowHosts, Paths: scopePaths{WorkingDirectory: p.WorkingDirectory, Workspace: p.Workspace,
			Context: p.Context, Input: p.Input, Output: p.Output, Tmp: p.Tmp}}
	if len(spec.Env) > 0 {
		scope.Env = map[string]string{}
		for _, kv := range spec.Env { // checked NAME=value; a later one wins
			name, value, _ := strings.Cut(kv, "=")
			scope.Env[name] = value
		}
	}
	for _, m := range spec.ReadOnlyMounts {
		scope.Mounts = append(scope.Mounts, scopeMount{Source: m.Source, Target: m.Target})
	}
	if l := spec.Limits; l != (compute.Limits{}) {
		scope.Limits = &scopeLimits{MemoryBytes: l.MemoryBytes, Pids: l.Pids, CPUMillis: l.CPUMillis, WorkspaceBytes: l.WorkspaceBytes}
	}
	return &Sandbox{p: pr, s: s, key: keyID(spec.Key), id: id, scope: scope, paths: p, live: map[string]struct{}{},
		runs: map[int64]struct{}{}, lostCh: make(chan struct{})}
}

// SandboxID is the plugin's id of the sandbox.
func (b *Sandbox) SandboxID() string { return b.id }

// Paths returns the run's sandbox paths.
func (b *Sandbox) Paths() compute.Paths { return b.paths }

// usable fails once the handle is closed, and with the plugin's end
// (wrapping compute.ErrSandboxLost) once it died.
func (b *Sandbox) usable(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	b.mu.Lock()
	closed, lost := b.closed, b.lost
	b.mu.Unlock()
	switch {
	case lost != nil:
		return lost
	case closed:
		return errors.New("sandbox handle is closed")
	}
	return b.note(b.s.conn.err())
}

// lostIfGone marks a sandbox the plugin no longer knows, or that was lost
// meanwhile, as lost.
func (b *Sandbox) lostIfGone(err error) error {
	if errors.Is(err, ErrSandboxNotFound) {
		err = sandboxLost(err)
	}
	if lost := b.lostErr(); lost != nil && err != nil && !errors.Is(err, compute.ErrSandboxLost) {
		err = fmt.Errorf("%w (%w)", lost, err)
	}
	return b.note(err)
}

// readChunk is what one files.read asks for: 4 MiB is 5.4 MiB in base64,
// well inside a line. maxWrite bounds one files.write for the same reason.
const (
	readChunk = 4 << 20
	maxWrite  = 5 << 20
)

type fileParams struct {
	SandboxID string   `json:"sandbox_id"`
	Run       runScope `json:"run"`
	Path      string   `json:"path"`
	Offset    int64    `json:"offset,omitempty"`
	Limit     int64    `json:"limit,omitempty"`
}

// ReadFile reads the file a chunk at a time (files.read with offset).
func (b *Sandbox) ReadFile(ctx context.Context, p string, limit int64) ([]byte, bool, error) {
	if err := b.usable(ctx); err != nil {
		return nil, false, err
	}
	var data []byte
	for {
		want := int64(readChunk)
		if limit > 0 {
			want = min(want, limit-int64(len(data)))
		}
		var out struct {
			DataB64   string `json:"data_b64"`
			Truncated bool   `json:"truncated"`
		}
		err := b.s.call(ctx, MFilesRead, fileParams{SandboxID: b.id, Run: b.scope, Path: p, Offset: int64(len(data)), Limit: want}, &out, 0)
		if err != nil {
			return nil, false, fmt.Errorf("read %s: %w", p, b.lostIfGone(err))
		}
		chunk, err := base64.StdEncoding.DecodeString(out.DataB64)
		if err != nil || int64(len(chunk)) > want || (out.Truncated && len(chunk) == 0) {
			return nil, false, fmt.Errorf("read %s: provider %s answered a malformed chunk: %w", p, b.s.cfg.ID, ErrProvider)
		}
		data = append(data, chunk...)
		switch {
		case !out.Truncated:
			return data, false, nil
		case limit > 0 && int64(len(data)) >= limit:
			return data, true, nil
		}
	}
}

// WriteFile writes data with one files.write (at most maxWrite bytes).
func (b *Sandbox) WriteFile(ctx context.Context, p string, data []byte) error {
	if err := b.usable(ctx); err != nil {
		return err
	}
	if len(data) > maxWrite {
		return fmt.Errorf("write %s: %s is more than one EPP/1 write carries (%s): %w", p,
			compute.Bytes(int64(len(data))), compute.Bytes(maxWrite), ErrInvalid)
	}
	params := struct {
		SandboxID string   `json:"sandbox_id"`
		Run       runScope `json:"run"`
		Path      string   `json:"path"`
		DataB64   string   `json:"data_b64"`
	}{b.id, b.scope, p, base64.StdEncoding.EncodeToString(data)}
	if err := b.s.call(ctx, MFilesWrite, params, nil, 0); err != nil {
		return fmt.Errorf("write %s: %w", p, b.lostIfGone(err))
	}
	return nil
}

// ListFiles lists dir with files.list; entries are sorted by path and
// must be clean absolute sandbox paths.
func (b *Sandbox) ListFiles(ctx context.Context, dir string, depth int) ([]compute.FileInfo, error) {
	if err := b.usable(ctx); err != nil {
		return nil, err
	}
	params := struct {
		SandboxID string   `json:"sandbox_id"`
		Run       runScope `json:"run"`
		Path      string   `json:"path"`
		Depth     int      `json:"depth"`
	}{b.id, b.scope, dir, max(depth, 1)}
	var out struct {
		Entries []struct {
			Path  string `json:"path"`
			Size  int64  `json:"size"`
			IsDir bool   `json:"is_dir"`
		} `json:"entries"`
	}
	if err := b.s.call(ctx, MFilesList, params, &out, 0); err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, b.lostIfGone(err))
	}
	infos := make([]compute.FileInfo, 0, len(out.Entries))
	for _, e := range out.Entries {
		if !path.IsAbs(e.Path) || path.Clean(e.Path) != e.Path {
			return nil, fmt.Errorf("list %s: provider %s answered the path %q: %w", dir, b.s.cfg.ID, e.Path, ErrProvider)
		}
		infos = append(infos, compute.FileInfo{Path: e.Path, Size: e.Size, IsDir: e.IsDir})
	}
	slices.SortFunc(infos, func(x, y compute.FileInfo) int { return strings.Compare(x.Path, y.Path) })
	if len(infos) == 0 {
		return nil, nil
	}
	return infos[:min(len(infos), compute.MaxListed)], nil
}
