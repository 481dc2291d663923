package semantic

import (
	"container/list"
	"sync"
)

// hydeCacheSize bounds the hypothetical answers kept, by query.
const hydeCacheSize = 1024

// hydeCache is a bounded least-recently-used map of query to hypothetical
// answer, so a repeated query costs no model call.
type hydeCache struct {
	mu    sync.Mutex
	max   int
	order *list.List // of *hydeEntry, most recent first
	byKey map[string]*list.Element
}

type hydeEntry struct{ query, answer string }

func newHydeCache(max int) *hydeCache {
	return &hydeCache{max: max, order: list.New(), byKey: map[string]*list.Element{}}
}

func (c *hydeCache) get(q string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byKey[q]; ok {
		c.order.MoveToFront(el)
		return el.Value.(*hydeEntry).answer, true
	}
	return "", false
}

func (c *hydeCache) put(q, a string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byKey[q]; ok {
		el.Value.(*hydeEntry).answer = a
		c.order.MoveToFront(el)
		return
	}
	c.byKey[q] = c.order.PushFront(&hydeEntry{q, a})
	for c.order.Len() > c.max {
		old := c.order.Back()
		c.order.Remove(old)
		delete(c.byKey, old.Value.(*hydeEntry).query)
	}
}

func (c *hydeCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}
