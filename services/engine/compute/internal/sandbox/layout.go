package sandbox

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sync"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/services/engine/compute"
)

// noSession is the directory of runs without a session (compute.Spec).
const noSession = "_"

// namedNoSession is the directory of a session whose ID is noSession's
// name: "_" escaped as escape writes any other byte. escape never writes it
// for another ID ('%' is escaped), so that session shares no directory with
// the runs without one, and is tidied like any other.
const namedNoSession = "%5F"

// Mount is one of a run's directories: where the sandboxed process sees it
// and where it lives on the host.
type Mount struct {
	// Sandbox is the sandbox path, e.g. /workspace.
	Sandbox string
	// Host is the absolute host directory.
	Host string
	// ReadOnly is true for the run's input, and in safety mode read-only
	// for the workspace and the session's context too.
	ReadOnly bool
	// rel is Host relative to the key directory, slash-separated.
	rel string
	// i is the mount's index in its layout.
	i int
	// external: Host lies outside the key directory (a read-only mount of
	// Spec.ReadOnlyMounts); it is never created, owned or counted here.
	external bool
}

// Layout is one run's directories. The first mount is /workspace. Nothing
// exists on the host until something needs it: a write creates the
// directory it writes into, a command all of them (ensure).
type Layout struct {
	base    string
	keyDir  string
	sessRel string // the session's directory below keyDir, slash-separated
	runRel  string // the run's directory below keyDir, slash-separated
	paths   compute.Paths
	mounts  []Mount
	// extra are the spec's read-only mounts (external), after the run's own.
	extra []Mount
	owner *Owner // receives what the layout creates; nil: nobody

	mu   sync.Mutex
	made []bool // by mount index: created (or found) by this layout
	// lock holds a shared flock on the session's directory from the first
	// mount this layout creates in it until the run's last handle closes
	// (lockSession); nil: none held (yet, or the filesystem has no locks).
	lock *os.File
	// locked: lockSession has been tried since the layout last let go.
	locked bool
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
	if spec.SessionID == noSession {
		ids[0] = namedNoSession
	}
	sess := path.Join("sessions", ids[0])
	run := path.Join(sess, "runs", ids[1])
	shared := spec.SafetyMode == events.SafetyReadOnly // the workspace and context are read-only
	l := &Layout{base: base, keyDir: keyDir, sessRel: sess, runRel: run}
	l.add("workspace", shared)
	l.add(path.Join(sess, "context"), shared)
	l.add(path.Join(run, "input"), true)
	l.add(path.Join(run, "output"), false)
	l.add(path.Join(run, "tmp"), false)
	l.made = make([]bool, len(l.mounts))
	l.paths = compute.Paths{
		WorkingDirectory: path.Join(l.mounts[0].Sandbox, spec.WorkingDirectory),
		Workspace:        l.mounts[0].Sandbox, Context: l.mounts[1].Sandbox,
		Input: l.mounts[2].Sandbox, Output: l.mounts[3].Sandbox, Tmp: l.mounts[4].Sandbox,
	}
	for _, m := range spec.ReadOnlyMounts {
		l.extra = append(l.extra, Mount{Sandbox: m.Target, Host: m.Source, ReadOnly: true, i: -1, external: true})
	}
	return l, nil
}

func (l *Layout) add(rel string, readOnly bool) {
	l.mounts = append(l.mounts, Mount{
		Sandbox: "/" + rel, Host: filepath.Join(l.keyDir, filepath.FromSlash(rel)),
		ReadOnly: readOnly, rel: rel, i: len(l.mounts),
	})
}

// ensure creates the mounts ms that this layout has not created yet, and
// the directories above them, through an os.Root so that nothing planted
// below base can redirect it; each is handed to the owner. A mount that
// exists already (a key's workspace from an earlier run) is left as it is,
// apart from its owner.
func (l *Layout) ensure(ms ...Mount) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	var key *os.Root
	defer func() {
		if key != nil {
			_ = key.Close()
		}
	}()
	for _, m := range ms {
		if m.external || l.made[m.i] {
			continue
		}
		if key == nil {
			k, err := l.openKey()
			if err != nil {
				return err
			}
			key = k
		}
		if m.i != 0 && !l.locked && !l.sessionless() {
			if err := l.lockSession(key); err != nil {
				return err
			}
		}
		if slices.Contains(runMounts, m.i) && !l.anyRunMade() {
			l.adoptSpare(key)
		}
		if err := l.create(key, m); err != nil {
			return err
		}
		l.made[m.i] = true
	}
	return nil
}

// openKey opens the key directory, creating it first when it does not
// exist, through the base directory's os.Root: a symlink planted below base
// is not followed.
func (l *Layout) openKey() (*os.Root, error) {
	root, err := os.OpenRoot(l.base)
	if err != nil {
		return nil, fmt.Errorf("open sandbox base: %w", err)
	}
	defer func() { _ = root.Close() }()
	keyRel, err := filepath.Rel(l.base, l.keyDir)
	if err != nil {
		return nil, err
	}
	key, err := root.OpenRoot(keyRel)
	if errors.Is(err, fs.ErrNotExist) {
		if err := root.MkdirAll(keyRel, 0o755); err != nil {
			return nil, fmt.Errorf("create the sandbox key directory: %w", fileErr(err))
		}
		key, err = root.OpenRoot(keyRel)
	}
	if err != nil {
		return nil, fmt.Errorf("open the sandbox key directory: %w", fileErr(err))
	}
	return key, nil
}

// runMounts are the indexes in mounts of the run's own directories (input,
// output, tmp), below runRel.
var runMounts = []int{2, 3, 4}

// contextMount is the index in mounts of the session's context.
const contextMount = 1

// sessionless reports whether the run has no session: its directories are
// below sessions/_, which stays.
func (l *Layout) sessionless() bool { return path.Base(l.sessRel) == noSession }

// anyRunMade reports whether this layout has created one of the run's own
// directories; under l.mu.
func (l *Layout) anyRunMade() bool {
	for _, i := range runMounts {
		if l.made[i] {
			return true
		}
	}
	return false
}

// tidy removes the run's own directories that are empty and the run's
// directory once nothing is left in it, when the run's last handle closes
// (the provider then tidies the session's directory, once no run of the
// session uses it any more, here or in another executor process sharing
// the base directory: tidySession); a run directory left as it was created
// becomes the key's spare instead (spare), for the key's next run, and the
// directories of runs without a session (sessions/_ and its runs) stay, one
// pair per key.
// A run that leaves nothing there then leaves nothing on the host but
// those, so that a key's directory grows with what its runs kept, not with
// how many runs or sessions there were: every directory counts against the
// workspace limit and is walked by its check after each command (usage). A
// later handle of the run (resumed, taken over) creates them again on first
// need. A directory that is not empty is kept as it is, so a run of the
// session still open keeps what it created. The directories above the
// mounts stay the executor's (chownMount), so the sandbox user cannot have
// replaced one.
func (l *Layout) tidy() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, i := range runMounts {
		l.made[i] = false
	}
	l.made[contextMount] = false // tidySession may take it
	key, err := os.OpenRoot(l.keyDir)
	if err != nil {
		l.unlockSession()
		return // nothing was created
	}
	defer func() { _ = key.Close() }()
	run := filepath.FromSlash(l.runRel)
	if !l.spare(key) {
		for _, i := range runMounts {
			_ = key.Remove(filepath.FromSlash(l.mounts[i].rel)) // ENOENT, ENOTEMPTY: keep
		}
	}
	_ = key.Remove(run)
	// Before tidySession's exclusive lock: the locks of two opens of one
	// directory exclude each other within a process too.
	l.unlockSession()
}

// spareRel is the key directory's spare run directory, below the key
// directory and outside every mount: a run directory that a run left as it
// was created, handed on to the key's next run instead of being removed
// and created again. Removing and creating directories is what a run's
// directories cost the host: on ext4 each new directory takes an inode and
// a block, and with online discard each removed one a discard request.
const spareRel = "spare"

// spare moves the run's directory to the key's spare (spareRel) when it
// holds nothing but run directories of its own (input, output, tmp), each
// empty and with the mode the run's directory itself was created with (a
// run that changed a mode leaves its directories to be removed), and the
// key has no spare yet. The check and the move are not atomic: a process
// that still wrote into the run's directories in between would hand what
// it wrote to the key's next run, which shares the key's workspace anyway;
// a run's last handle is only closed once its commands have ended.
func (l *Layout) spare(key *os.Root) bool {
	run := filepath.FromSlash(l.runRel)
	fi, err := key.Lstat(run)
	if err != nil || !fi.IsDir() {
		return false
	}
	names, err := dirNames(key, run, len(runMounts)+1)
	if err != nil || len(names) > len(runMounts) {
		return false
	}
	for _, name := range names {
		if !l.isRunMount(name) {
			return false
		}
		sub := filepath.Join(run, name)
		si, err := key.Lstat(sub)
		if err != nil || !si.IsDir() || si.Mode() != fi.Mode() {
			return false
		}
		if in, err := dirNames(key, sub, 1); err != nil || len(in) > 0 {
			return false
		}
	}
	if _, err := key.Lstat(spareRel); !errors.Is(err, fs.ErrNotExist) {
		return false // a spare already, or unknown
	}
	// rename(2) would replace an empty directory at spareRel, never one
	// with entries: a spare another process moved there since stays.
	return key.Rename(run, spareRel) == nil
}

// isRunMount reports whether name is the last element of one of the run's
// own directories.
func (l *Layout) isRunMount(name string) bool {
	for _, i := range runMounts {
		if path.Base(l.mounts[i].rel) == name {
			return true
		}
	}
	return false
}

// dirNames returns up to n names in directory dir below root.
func dirNames(root *os.Root, dir string, n int) ([]string, error) {
	f, err := root.Open(dir)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	names, err := f.Readdirnames(n)
	if errors.Is(err, io.EOF) {
		err = nil
	}
	return names, err
}

// adoptSpare moves the key's spare run directory (spareRel), when there is
// one, to the run's directory, before the run's first own directory is
// created: those it holds then exist already, and create finds them (and
// hands them to the owner as it does a new one). Any failure (no spare,
// another run took it first, the run's directory exists and is not empty)
// leaves the creation to make them as usual. The session's directory is
// there and locked already (lockSession).
func (l *Layout) adoptSpare(key *os.Root) {
	if _, err := key.Lstat(spareRel); err != nil {
		return
	}
	run := filepath.FromSlash(l.runRel)
	if err := key.MkdirAll(filepath.Dir(run), 0o755); err != nil {
		return
	}
	_ = key.Rename(spareRel, run)
}

// created reports whether this layout has created mount m.
func (l *Layout) created(m Mount) bool {
	if m.external {
		return true // it exists outside; nothing here creates it
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.made[m.i]
}

// create makes m's directory and those above it below key.
func (l *Layout) create(key *os.Root, m Mount) error {
	// 0o755: the base directory (0o700) already keeps other host users out.
	err := key.MkdirAll(filepath.FromSlash(m.rel), 0o755)
	if errors.Is(err, fs.ErrNotExist) {
		// A directory above it was removed while this created below it: the
		// tidy of another run of a session this layout could not lock
		// (lockSession). Once more: it is created anew.
		err = key.MkdirAll(filepath.FromSlash(m.rel), 0o755)
	}
	if err != nil {
		return fmt.Errorf("create %s: %w", m.Sandbox, fileErr(err))
	}
	return l.chownMount(key, m)
}

// Paths returns the run's sandbox paths.
func (l *Layout) Paths() compute.Paths { return l.paths }

// Mounts returns the run's directories, /workspace first, then the
// spec's read-only mounts.
func (l *Layout) Mounts() []Mount { return append(append([]Mount(nil), l.mounts...), l.extra...) }

// chownMount hands a run's directory (below key) to the layout's owner;
// those between it and the key directory stay the executor's.
func (l *Layout) chownMount(key *os.Root, m Mount) error {
	if l.owner == nil {
		return nil
	}
	if err := key.Lchown(filepath.FromSlash(m.rel), l.owner.UID, l.owner.GID); err != nil {
		return fmt.Errorf("hand %s to the sandbox user: %w", m.Sandbox, fileErr(err))
	}
	return nil
}
