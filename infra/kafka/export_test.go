package kafka

import "testing"

// OnReadRetry calls fn each time a read tries a partition's offsets again,
// until the test ends.
func OnReadRetry(t *testing.T, fn func(topic string, err error)) {
	testHookReadRetry.Store(&fn)
	t.Cleanup(func() { testHookReadRetry.Store(nil) })
}
