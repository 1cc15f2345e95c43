package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkAKeysUsageWalk: one walk of a key's usage, as after every
// command: a key as one run of `xbot bench` leaves it (its directories and
// two files), and a key of 11,000 files in 11 directories.
//
//	go test -run '^$' -bench AKeysUsageWalk -benchmem ./services/engine/compute/internal/sandbox/
func BenchmarkAKeysUsageWalk(b *testing.B) {
	for _, k := range []struct {
		name  string
		dirs  []string
		files int // in each directory
	}{
		{"a-run", []string{"workspace", "sessions/s/context", "sessions/s/runs/r/input", "sessions/s/runs/r/output",
			"sessions/s/runs/r/tmp"}, 0},
		{"11000-files", []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10"}, 1000},
	} {
		key := filepath.Join(b.TempDir(), "t", "default", "demo", "owner")
		for _, d := range k.dirs {
			if err := os.MkdirAll(filepath.Join(key, d), 0o700); err != nil {
				b.Fatal(err)
			}
			for f := range k.files {
				if err := os.WriteFile(filepath.Join(key, d, fmt.Sprint(f)), []byte("x"), 0o600); err != nil {
					b.Fatal(err)
				}
			}
		}
		if k.files == 0 {
			for _, f := range []string{"workspace/a.txt", "sessions/s/context/b.txt"} {
				if err := os.WriteFile(filepath.Join(key, f), []byte("x"), 0o600); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.Run(k.name, func(b *testing.B) {
			for b.Loop() {
				usage(key) // its results differ between versions; the walk is what is timed
			}
		})
	}
}
