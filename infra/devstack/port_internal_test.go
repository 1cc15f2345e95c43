package devstack

import "testing"

// TestFreePortIsBelowTheEphemeralRange: a port FreePort picks is one no
// outgoing connection can take before the caller binds it (or while the
// caller's server restarts on it), and it is free.
func TestFreePortIsBelowTheEphemeralRange(t *testing.T) {
	t.Parallel()
	hi := ephemeralLow()
	if hi-lowPort < minRoom {
		t.Skipf("the ephemeral port range starts at %d: no room below it, the kernel picks", hi)
	}
	for range 50 {
		port, err := FreePort()
		if err != nil {
			t.Fatal(err)
		}
		if port < lowPort || port >= hi {
			t.Fatalf("FreePort = %d, want one in [%d, %d), below the ephemeral range", port, lowPort, hi)
		}
		if !free(port) {
			t.Fatalf("FreePort = %d, which cannot be bound", port)
		}
	}
}
