package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/xbot-runtime/xbot/services/engine/compute"
)

// TestAKeysUsageIsWalkedAsItsSizeAllows: a key of few entries is walked at
// every check; a large one is walked again only once the interval its size
// allows has passed, counting what was written meanwhile, and never refused
// on that estimate.
func TestAKeysUsageIsWalkedAsItsSizeAllows(t *testing.T) {
	t.Parallel()
	const mib = 1 << 20
	dir := t.TempDir()
	clock := time.Unix(1_700_000_000, 0)
	m := newUsageMeter()
	m.now = func() time.Time { return clock }
	write := func(name string, n int) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), make([]byte, n), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	// Small: exact at every check.
	if m.fits(dir, mib, 0) != nil {
		t.Fatal("an empty key does not fit")
	}
	write("big", 2*mib)
	if m.fits(dir, mib, 0) == nil {
		t.Fatal("a small key over the limit fits: its check did not walk")
	}
	if err := os.Remove(filepath.Join(dir, "big")); err != nil {
		t.Fatal(err)
	}

	// Large: more entries than walkExactEntries.
	for d := range 11 {
		sub := filepath.Join(dir, fmt.Sprint(d))
		if err := os.Mkdir(sub, 0o700); err != nil {
			t.Fatal(err)
		}
		for f := range 1000 {
			if err := os.WriteFile(filepath.Join(sub, fmt.Sprint(f)), nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	limit := int64(64 * mib)
	if m.fits(dir, limit, 0) != nil || m.entries <= walkExactEntries {
		t.Fatalf("a large key: %d entries walked, want more than %d", m.entries, walkExactEntries)
	}
	walked := m.bytes
	write("grown", 8*mib) // what a command wrote, unseen until the next walk
	clock = clock.Add(walkEvery / 2)
	if m.fits(dir, limit, mib) != nil || m.bytes != walked+mib {
		t.Fatalf("within the interval: usage %d, want the last walk %d plus the write %d", m.bytes, walked, mib)
	}
	// Within the interval the estimate stands, though the disk holds more.
	tight := walked + 4*mib
	if m.fits(dir, tight, 0) != nil || m.bytes != walked+mib {
		t.Fatalf("within the interval: refused or walked (usage %d)", m.bytes)
	}
	// Once it passed, the walk sees what the command wrote.
	clock = clock.Add(walkEvery / 2)
	if m.fits(dir, tight, 0) == nil {
		t.Fatalf("after the interval the key over the limit fits (usage %d)", m.bytes)
	}
	// An estimate that would refuse walks first: the files are gone, the
	// write fits.
	if err := os.Remove(filepath.Join(dir, "grown")); err != nil {
		t.Fatal(err)
	}
	if m.fits(dir, tight, mib) != nil {
		t.Fatalf("a write after the run removed its files is refused (usage %d, limit %d)", m.bytes, tight)
	}
}

// deepTree makes levels directories of 200-byte names, one in the other,
// below dir (deeper than PATH_MAX from 21 levels), by descriptor, and
// returns the descriptor of the deepest.
func deepTree(t *testing.T, dir string, levels int) int {
	t.Helper()
	name := strings.Repeat("d", 200)
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	for range levels {
		if err := unix.Mkdirat(fd, name, 0o700); err != nil {
			t.Fatal(err)
		}
		sub, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		_ = unix.Close(fd)
		if err != nil {
			t.Fatal(err)
		}
		fd = sub
	}
	return fd
}

// writeAt writes a file of n bytes below the directory at fd.
func writeAt(t *testing.T, fd int, name string, n int) {
	t.Helper()
	f, err := unix.Openat(fd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = unix.Close(f) }()
	if _, err := unix.Write(f, make([]byte, n)); err != nil {
		t.Fatal(err)
	}
}

// openFDs counts this process's open descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// TestAKeysUsageCountsWhatLiesBeyondAnyPathsLength: a file below more
// directories than a path can name (PATH_MAX), and more than the walk
// keeps open, counts; a symlink is not followed; the walk leaves no
// descriptor open.
func TestAKeysUsageCountsWhatLiesBeyondAnyPathsLength(t *testing.T) {
	const levels, mib = 40, 1 << 20
	dir, outside := t.TempDir(), t.TempDir()
	deepest := deepTree(t, dir, levels)
	writeAt(t, deepest, "hidden.bin", 8*mib)
	_ = unix.Close(deepest)
	if err := os.WriteFile(filepath.Join(outside, "big.bin"), make([]byte, 16*mib), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	before := openFDs(t)
	total, entries, err := usage(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := 1 + levels + 2; entries != want { // the root, the levels, the file and the link
		t.Errorf("%d entries walked, want %d", entries, want)
	}
	if total < 8*mib || total >= 16*mib {
		t.Errorf("usage %d bytes, want the hidden 8 MiB and the directories, not the linked 16 MiB", total)
	}
	if after := openFDs(t); after != before {
		t.Errorf("%d descriptors open after the walk, %d before", after, before)
	}
	m := newUsageMeter()
	if err := m.fits(dir, 4*mib, 0); !errors.Is(err, errOverLimit) {
		t.Errorf("a key holding 8 MiB deep down fits 4 MiB: %v", err)
	}
}

// TestAUsageWalkWhoseTreeMovesUnderItWalksAgain: a directory moved while
// the walk is below it, beyond the descriptors the walk keeps, is noticed on
// the way back up (its ".." is no longer the directory the walk came from),
// and the walk starts again; a tree that moves at every try is an unknown
// usage, which does not fit.
func TestAUsageWalkWhoseTreeMovesUnderItWalksAgain(t *testing.T) {
	const mib = 1 << 20
	// A tree of usageTries chains, root/cN/d/d/…, each deeper than the
	// walk keeps open, with a file at its bottom.
	tree := func() string {
		dir := t.TempDir()
		for c := range usageTries {
			sub := filepath.Join(dir, fmt.Sprint("c", c))
			if err := os.Mkdir(sub, 0o700); err != nil {
				t.Fatal(err)
			}
			deepest := deepTree(t, sub, keptOpen+4)
			writeAt(t, deepest, "file.bin", mib)
			_ = unix.Close(deepest)
		}
		return dir
	}
	var dir string
	moves := 0
	walkEntered = func(depth, fd int) {
		if depth != keptOpen+3 || moves == 0 {
			return
		}
		// Move this directory up below the root: its ".." is the root now,
		// and what is left of its chain no longer reaches this depth.
		moves--
		root, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			t.Error(err)
			return
		}
		defer func() { _ = unix.Close(root) }()
		parent, err := unix.Openat(fd, "..", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			t.Error(err)
			return
		}
		defer func() { _ = unix.Close(parent) }()
		if err := unix.Renameat(parent, strings.Repeat("d", 200), root, fmt.Sprint("moved", moves)); err != nil {
			t.Error(err)
		}
	}
	t.Cleanup(func() { walkEntered = nil })

	dir, moves = tree(), 1
	total, _, err := usage(dir)
	if err != nil || moves != 0 {
		t.Fatalf("a tree moved once: %v (moves left %d)", err, moves)
	}
	if total < usageTries*mib {
		t.Errorf("usage %d after a move, want every file counted", total)
	}
	dir, moves = tree(), usageTries
	if _, _, err := usage(dir); !errors.Is(err, errUsageMoved) || moves != 0 {
		t.Errorf("a tree moved at every try: %v (moves left %d), want errUsageMoved", err, moves)
	}
	dir, moves = tree(), usageTries
	err = newUsageMeter().fits(dir, 1<<40, 0)
	if err == nil || errors.Is(err, errOverLimit) {
		t.Errorf("an unknown usage: %v, want why it is unknown", err)
	}
	var le *compute.LimitError
	if !errors.As(workspaceLimit(1<<40, err), &le) || le.Mechanism != mechUnknown {
		t.Errorf("the check's error: %v, want the LimitError of an unknown usage", le)
	}
	if !errors.As(workspaceLimit(1<<40, fmt.Errorf("open: %w", unix.EACCES)), &le) || le.Mechanism != mechUnreadable {
		t.Errorf("the check's error for an unreadable directory: %v", le)
	}
}
