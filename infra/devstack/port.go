package devstack

import (
	"context"
	"fmt"
	"net"
)

// FreePort returns a TCP port on 127.0.0.1 that was free when asked. Another
// process may take it before the caller binds it; callers that can retry with
// a new port should.
func FreePort() (int, error) {
	l, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find free port: %w", err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	if err := l.Close(); err != nil {
		return 0, fmt.Errorf("find free port: close listener: %w", err)
	}
	return port, nil
}
