package devstack

import (
	"context"
	"math/rand/v2"
	"net"
	"strconv"
	"testing"
)

// TestFreePortIsBelowTheEphemeralRange: a port FreePort picks is one no
// outgoing connection can take before the caller binds it (or while the
// caller's server restarts on it).
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
	}
}

// TestFreePortSkipsABoundPort: a port something listens on is never picked.
// (Whether a picked port is still free when the caller binds it is not for
// FreePort to promise: another process may bind it first.)
func TestFreePortSkipsABoundPort(t *testing.T) {
	t.Parallel()
	hi := lowPort + 2*minRoom
	var held net.Listener
	for held == nil {
		l, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp",
			net.JoinHostPort("127.0.0.1", strconv.Itoa(lowPort+rand.IntN(hi-lowPort)))) // #nosec G404 -- a spread
		if err == nil {
			held = l
		}
	}
	t.Cleanup(func() { _ = held.Close() })
	busy := held.Addr().(*net.TCPAddr).Port
	first := true
	port, err := freePort(hi, func(n int) int {
		if first {
			first = false
			return busy - lowPort
		}
		return rand.IntN(n) // #nosec G404 -- a spread
	})
	if err != nil {
		t.Fatal(err)
	}
	if port == busy {
		t.Fatalf("FreePort picked port %d, which a listener holds", busy)
	}
}
