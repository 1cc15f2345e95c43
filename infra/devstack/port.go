package devstack

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
)

// FreePort returns a TCP port on 127.0.0.1 that was free when asked. Another
// process may take it before the caller binds it; callers that can retry with
// a new port should.
//
// The port is picked below the kernel's ephemeral port range
// (net.ipv4.ip_local_port_range) when there is room there: a port of that
// range can be taken between this check and the caller's bind, or while a
// server the caller restarts on the same port is down, as the local port of
// any outgoing connection on the machine; a port below it only by another
// server that binds it by number. Where the range leaves no room, the kernel
// picks one (port 0).
func FreePort() (int, error) {
	return freePort(ephemeralLow(), rand.IntN)
}

// freePort is FreePort below hi, the ephemeral range's low end, each try at
// lowPort + pick(hi - lowPort).
func freePort(hi int, pick func(n int) int) (int, error) {
	if hi-lowPort >= minRoom {
		for range pickTries {
			port := lowPort + pick(hi-lowPort)
			if free(port) {
				return port, nil
			}
		}
	}
	return kernelPort()
}

// Ports are picked from [lowPort, the ephemeral range's low end), when that
// holds at least minRoom ports: above the well-known and most fixed service
// ports. pickTries random picks, each checked by binding it, come before the
// fallback to the kernel's pick.
const (
	lowPort   = 10000
	minRoom   = 1000
	pickTries = 64
)

// localPortRange is the kernel's ephemeral port range setting.
const localPortRange = "/proc/sys/net/ipv4/ip_local_port_range"

// ephemeralLow is the low end of the kernel's ephemeral port range, 0 when
// it cannot be read.
func ephemeralLow() int {
	data, err := os.ReadFile(localPortRange)
	if err != nil {
		return 0
	}
	fields := strings.Fields(string(data))
	if len(fields) != 2 {
		return 0
	}
	lo, err := strconv.Atoi(fields[0])
	if err != nil {
		return 0
	}
	return lo
}

// free reports whether port can be bound on 127.0.0.1 now.
func free(port int) bool {
	l, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return false
	}
	return l.Close() == nil
}

// kernelPort is a port the kernel picks from its ephemeral range.
func kernelPort() (int, error) {
	l, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find free port: %w", err)
	}
	addr, ok := l.Addr().(*net.TCPAddr)
	if err := l.Close(); err != nil {
		return 0, fmt.Errorf("find free port: close listener: %w", err)
	}
	if !ok {
		return 0, errors.New("find free port: not a TCP address")
	}
	return addr.Port, nil
}
