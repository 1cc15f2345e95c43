package kafkatest

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// HoldFirstProduce makes c leave the first Produce request it receives
// unanswered until release is called or tb ends: held is closed once that
// request is at the broker, which then answers it as usual. Later produces,
// a retry of the held one included, are answered at once. Call it after
// registering c's Close with tb, so that the release runs first (cleanups
// run last registered first).
func HoldFirstProduce(tb testing.TB, c *kfake.Cluster) (held <-chan struct{}, release func()) {
	at, answer := make(chan struct{}), make(chan struct{})
	var once sync.Once
	release = func() { once.Do(func() { close(answer) }) }
	tb.Cleanup(release)
	var seen atomic.Bool
	c.ControlKey(int16(kmsg.Produce), func(kmsg.Request) (kmsg.Response, error, bool) {
		if seen.Swap(true) {
			return nil, nil, false
		}
		close(at)
		c.SleepControl(func() { <-answer })
		return nil, nil, false
	})
	return at, release
}
