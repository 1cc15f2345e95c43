package devstack

import (
	"encoding/base64"
	"testing"
)

// The storage tool reads an id starting with "-" as an option: one random
// id in 64 would fail the format. 10,000 draws meet such an id with
// all but certainty: (63/64)^10000 ≈ e^-156 is the chance they would not.
func TestNewClusterIDNeverLooksLikeAnOption(t *testing.T) {
	t.Parallel()
	for range 10000 {
		id := newClusterID()
		if b, err := base64.RawURLEncoding.DecodeString(id); err != nil || len(b) != 16 {
			t.Fatalf("cluster id %q is not 16 bytes of URL-safe base64 (%v)", id, err)
		}
		if id[0] == '-' {
			t.Fatalf("cluster id %q starts with '-'", id)
		}
	}
}
