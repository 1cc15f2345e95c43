package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
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
	if !m.fits(dir, mib, 0) {
		t.Fatal("an empty key does not fit")
	}
	write("big", 2*mib)
	if m.fits(dir, mib, 0) {
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
	if !m.fits(dir, limit, 0) || m.entries <= walkExactEntries {
		t.Fatalf("a large key: %d entries walked, want more than %d", m.entries, walkExactEntries)
	}
	walked := m.bytes
	write("grown", 8*mib) // what a command wrote, unseen until the next walk
	clock = clock.Add(walkEvery / 2)
	if !m.fits(dir, limit, mib) || m.bytes != walked+mib {
		t.Fatalf("within the interval: usage %d, want the last walk %d plus the write %d", m.bytes, walked, mib)
	}
	// Within the interval the estimate stands, though the disk holds more.
	tight := walked + 4*mib
	if !m.fits(dir, tight, 0) || m.bytes != walked+mib {
		t.Fatalf("within the interval: refused or walked (usage %d)", m.bytes)
	}
	// Once it passed, the walk sees what the command wrote.
	clock = clock.Add(walkEvery / 2)
	if m.fits(dir, tight, 0) {
		t.Fatalf("after the interval the key over the limit fits (usage %d)", m.bytes)
	}
	// An estimate that would refuse walks first: the files are gone, the
	// write fits.
	if err := os.Remove(filepath.Join(dir, "grown")); err != nil {
		t.Fatal(err)
	}
	if !m.fits(dir, tight, mib) {
		t.Fatalf("a write after the run removed its files is refused (usage %d, limit %d)", m.bytes, tight)
	}
}
