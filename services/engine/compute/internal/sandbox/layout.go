package sandbox

import (
	"fmt"
	"os"
	"path"
	"path/filepath"

	"github.com/xbot-runtime/xbot/services/engine/compute"
)

// noSession is the directory of runs without a session (compute.Spec).
const noSession = "_"

// Mount is one of a run's directories: where the sandboxed process sees it
// and where it lives on the host.
type Mount struct {
	// Sandbox is the sandbox path, e.g. /workspace.
	Sandbox string
	// Host is the absolute host directory.
	Host string
	// ReadOnly is true for the run's input.
	ReadOnly bool
	// rel is Host relative to the key directory, slash-separated.
	rel string
}

// Layout is one run's directories. The first mount is /workspace.
type Layout struct {
	keyDir string
	paths  compute.Paths
	mounts []Mount
	owner  *Owner // receives what the layout creates; nil: nobody
}

// KeyDir returns the host directory that holds everything of key below
// base: base/tenant/workspace/agent/owner, each ID escaped. Empty IDs are
// refused.
func KeyDir(base string, key compute.Key) (string, error) {
	parts, err := escapeAll([][2]string{
		{"TenantID", key.TenantID}, {"WorkspaceID", key.WorkspaceID},
		{"AgentID", key.AgentID}, {"OwnerID", key.OwnerID},
	})
	if err != nil {
		return "", fmt.Errorf("sandbox key: %w", err)
	}
	return filepath.Join(append([]string{base}, parts...)...), nil
}

// newLayout computes the directories of spec's run below base; it creates
// nothing.
func newLayout(base string, spec compute.Spec) (*Layout, error) {
	keyDir, err := KeyDir(base, spec.Key)
	if err != nil {
		return nil, err
	}
	session := spec.SessionID
	if session == "" {
		session = noSession
	}
	ids, err := escapeAll([][2]string{{"SessionID", session}, {"RunID", spec.RunID}})
	if err != nil {
		return nil, err
	}
	sess := path.Join("sessions", ids[0])
	run := path.Join(sess, "runs", ids[1])
	l := &Layout{keyDir: keyDir}
	l.add("workspace", false)
	l.add(path.Join(sess, "context"), false)
	l.add(path.Join(run, "input"), true)
	l.add(path.Join(run, "output"), false)
	l.add(path.Join(run, "tmp"), false)
	l.paths = compute.Paths{
		Workspace: l.mounts[0].Sandbox, Context: l.mounts[1].Sandbox,
		Input: l.mounts[2].Sandbox, Output: l.mounts[3].Sandbox, Tmp: l.mounts[4].Sandbox,
	}
	return l, nil
}

func (l *Layout) add(rel string, readOnly bool) {
	l.mounts = append(l.mounts, Mount{
		Sandbox: "/" + rel, Host: filepath.Join(l.keyDir, filepath.FromSlash(rel)),
		ReadOnly: readOnly, rel: rel,
	})
}

// create makes every directory of the layout below base, through an os.Root
// so that nothing planted below base can redirect it.
func (l *Layout) create(base string) error {
	root, err := os.OpenRoot(base)
	if err != nil {
		return fmt.Errorf("open sandbox base: %w", err)
	}
	defer func() { _ = root.Close() }()
	keyRel, err := filepath.Rel(base, l.keyDir)
	if err != nil {
		return err
	}
	for _, m := range l.mounts {
		// 0o755: the base directory (0o700) already keeps other host users out.
		if err := root.MkdirAll(filepath.Join(keyRel, m.rel), 0o755); err != nil {
			return fmt.Errorf("create %s: %w", m.Sandbox, fileErr(err))
		}
	}
	return l.chownMounts()
}

// Paths returns the run's sandbox paths.
func (l *Layout) Paths() compute.Paths { return l.paths }

// Mounts returns the run's directories, /workspace first.
func (l *Layout) Mounts() []Mount { return append([]Mount(nil), l.mounts...) }

// chownMounts hands the run's directories to the layout's owner; those
// between them and the key directory stay the executor's.
func (l *Layout) chownMounts() error {
	if l.owner == nil {
		return nil
	}
	key, err := os.OpenRoot(l.keyDir)
	if err != nil {
		return fmt.Errorf("open sandbox key directory: %w", fileErr(err))
	}
	defer func() { _ = key.Close() }()
	for _, m := range l.mounts {
		if err := key.Lchown(filepath.FromSlash(m.rel), l.owner.UID, l.owner.GID); err != nil {
			return fmt.Errorf("hand %s to the sandbox user: %w", m.Sandbox, fileErr(err))
		}
	}
	return nil
}
