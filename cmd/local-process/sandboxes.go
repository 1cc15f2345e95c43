package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/services/engine/compute"
	"github.com/xbot-runtime/xbot/services/engine/compute/local"
)

// scope is EPP's RunScope.
type scope struct {
	SessionID  string            `json:"session_id"`
	RunID      string            `json:"run_id"`
	Paths      map[string]string `json:"paths"`
	SafetyMode string            `json:"safety_mode"`
	Network    bool              `json:"network"`
	AllowHosts []string          `json:"allow_hosts"`
	Env        map[string]string `json:"env"`
	Limits     struct {
		MemoryBytes    int64 `json:"memory_bytes"`
		Pids           int64 `json:"pids"`
		CPUMillis      int64 `json:"cpu_millis"`
		WorkspaceBytes int64 `json:"workspace_bytes"`
	} `json:"limits"`
	Mounts []struct {
		Source string `json:"source"`
		Target string `json:"target"`
	} `json:"read_only_mounts"`
}

// sandboxes keeps the records and, through xbot's local provider, each
// sandbox's directories: the sandbox id is its key.
type sandboxes struct {
	rec   records
	local *local.Provider

	mu    sync.Mutex
	boxes map[string]compute.Sandbox // by sandbox id and scope
}

func newSandboxes(root, limits string) (*sandboxes, error) {
	rec := records{dir: filepath.Join(root, "records")}
	if err := mkdirs(rec.dir); err != nil {
		return nil, err
	}
	lp, err := local.New(local.Config{Dir: filepath.Join(root, "boxes"), Logger: zap.NewNop(), LimitMechanism: limits})
	if err != nil {
		return nil, err
	}
	return &sandboxes{rec: rec, local: lp, boxes: map[string]compute.Sandbox{}}, nil
}

func keyOf(id string) compute.Key {
	return compute.Key{TenantID: id, WorkspaceID: "w", AgentID: "a", OwnerID: "o"}
}

// box returns the run's handle on sandbox id (opened once per scope and
// extra environment), after checking that the sandbox exists and that the
// host's paths are the ones the layout gives.
func (s *sandboxes) box(ctx context.Context, id string, sc scope, envs map[string]string) (compute.Sandbox, error) {
	if _, err := s.rec.get(id); err != nil {
		return nil, err
	}
	spec, err := specOf(id, sc, envs)
	if err != nil {
		return nil, err
	}
	raw, _ := json.Marshal(spec)
	key := id + "\x00" + string(raw)
	s.mu.Lock()
	defer s.mu.Unlock()
	if b, ok := s.boxes[key]; ok {
		return b, nil
	}
	b, err := s.local.Open(ctx, spec)
	if err != nil {
		return nil, &rpcError{Code: -32001, Message: err.Error(), Data: &errorRef{Kind: "invalid_argument"}}
	}
	p := b.Paths()
	want := map[string]string{"working_directory": p.WorkingDirectory, "workspace": p.Workspace, "context": p.Context,
		"input": p.Input, "output": p.Output, "tmp": p.Tmp}
	for k, v := range want {
		if sc.Paths[k] != v {
			_ = b.Close()
			return nil, &rpcError{Code: -32001, Message: fmt.Sprintf("paths.%s is %q, this plugin lays it out at %q", k, sc.Paths[k], v),
				Data: &errorRef{Kind: "invalid_argument"}}
		}
	}
	s.boxes[key] = b
	return b, nil
}

func specOf(id string, sc scope, envs map[string]string) (compute.Spec, error) {
	ws := sc.Paths["workspace"]
	wd, ok := strings.CutPrefix(sc.Paths["working_directory"], ws)
	if !ok {
		return compute.Spec{}, &rpcError{Code: -32602, Message: "paths.working_directory is not below paths.workspace"}
	}
	env := map[string]string{}
	for k, v := range sc.Env {
		env[k] = v
	}
	for k, v := range envs {
		env[k] = v
	}
	var list []string
	for k, v := range env {
		list = append(list, k+"="+v)
	}
	slices.Sort(list)
	var mounts []compute.ReadOnlyMount
	for _, m := range sc.Mounts {
		mounts = append(mounts, compute.ReadOnlyMount{Source: m.Source, Target: m.Target})
	}
	l := sc.Limits
	return compute.Spec{ReadOnlyMounts: mounts, Key: keyOf(id), SessionID: sc.SessionID, RunID: sc.RunID, Network: sc.Network,
		AllowHosts: sc.AllowHosts, Env: list, SafetyMode: events.SafetyMode(sc.SafetyMode),
		WorkingDirectory: strings.TrimPrefix(path.Clean("/"+wd), "/"),
		Limits:           compute.Limits{MemoryBytes: l.MemoryBytes, Pids: l.Pids, CPUMillis: l.CPUMillis, WorkspaceBytes: l.WorkspaceBytes}}, nil
}

// kill removes sandbox id: its record, its handles and its directories.
func (s *sandboxes) kill(ctx context.Context, id string) (bool, error) {
	killed, err := s.rec.remove(id)
	if err != nil || !killed {
		return killed, err
	}
	s.mu.Lock()
	for k, b := range s.boxes {
		if strings.HasPrefix(k, id+"\x00") {
			_ = b.Close()
			delete(s.boxes, k)
		}
	}
	s.mu.Unlock()
	return true, s.local.Destroy(ctx, keyOf(id))
}

// close closes every handle, then the provider, which removes the cgroups
// it kept for the next sandboxes.
func (s *sandboxes) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, b := range s.boxes {
		_ = b.Close()
		delete(s.boxes, k)
	}
	_ = s.local.Close()
}

// errorOf maps an error of the local provider to EPP's error kinds.
func errorOf(err error) *rpcError {
	var le *compute.LimitError
	switch {
	case errors.As(err, &le):
		return &rpcError{Code: -32000, Message: err.Error(), Data: &errorRef{Kind: "limit_exceeded",
			Details: map[string]any{"resource": le.Resource, "limit": le.Limit, "mechanism": le.Mechanism}}}
	case errors.Is(err, compute.ErrSandboxLost):
		return &rpcError{Code: -32002, Message: err.Error(), Data: &errorRef{Kind: "sandbox_not_found"}}
	case errors.Is(err, compute.ErrPathOutside):
		return &rpcError{Code: -32001, Message: err.Error(), Data: &errorRef{Kind: "path_outside"}}
	case errors.Is(err, compute.ErrNotFound):
		return &rpcError{Code: -32002, Message: err.Error(), Data: &errorRef{Kind: "file_not_found"}}
	case errors.Is(err, fs.ErrPermission):
		return &rpcError{Code: -32001, Message: err.Error(), Data: &errorRef{Kind: "permission_denied"}}
	case errors.Is(err, context.Canceled):
		return &rpcError{Code: -32000, Message: "cancelled"}
	}
	return &rpcError{Code: -32000, Message: err.Error()}
}

func asLimit(err error, le **compute.LimitError) bool { return errors.As(err, le) }
