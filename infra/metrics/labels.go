package metrics

import "sync"

// other is the label value of everything past a cap.
const other = "other"

// capped admits the first max distinct values of a label; later ones are
// other.
type capped struct {
	mu   sync.RWMutex
	seen map[string]struct{}
	max  int
	// closed admits no new value once set (a fixed set).
	closed bool
}

func newCapped(maxValues int) *capped {
	return &capped{seen: make(map[string]struct{}, maxValues), max: maxValues}
}

// fixed admits exactly values.
func fixed(values ...string) *capped {
	c := newCapped(len(values))
	for _, v := range values {
		c.seen[v] = struct{}{}
	}
	c.closed = true
	return c
}

func (c *capped) value(v string) string {
	c.mu.RLock()
	_, ok := c.seen[v]
	c.mu.RUnlock()
	if ok {
		return v
	}
	if c.closed {
		return other
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.seen[v]; ok {
		return v
	}
	if len(c.seen) >= c.max {
		return other
	}
	c.seen[v] = struct{}{}
	return v
}
