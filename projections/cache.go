package projections

import (
	"sync"

	"github.com/google/uuid"
)

// factCache remembers read-model facts that never change once written (a
// tenant's owner, a merchant: no event updates or deletes either), so the
// hot write path reads each of them from Postgres once per process rather
// than once per request. Every instance fills its own; none can be stale,
// because there is nothing to invalidate. At max entries it starts over,
// which bounds memory without bookkeeping.
type factCache[V any] struct {
	mu  sync.RWMutex
	m   map[uuid.UUID]V
	max int
}

func newFactCache[V any](max int) *factCache[V] {
	return &factCache[V]{m: make(map[uuid.UUID]V), max: max}
}

func (c *factCache[V]) get(id uuid.UUID) (V, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	v, ok := c.m[id]
	return v, ok
}

func (c *factCache[V]) put(id uuid.UUID, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= c.max {
		clear(c.m)
	}
	c.m[id] = v
}
