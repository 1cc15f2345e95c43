package devstack

import (
	"strings"
	"testing"
)

// A cluster id starting with '-' makes the storage tool fail to parse its
// arguments; one random id in 64 would.
func TestClusterIDsNeverStartWithADash(t *testing.T) {
	t.Parallel()
	for range 5000 { // without the redraw, (63/64)^5000 ≈ 1e-34 of never drawing one
		if id := newClusterID(); strings.HasPrefix(id, "-") || len(id) != 22 {
			t.Fatalf("cluster id %q", id)
		}
	}
}
