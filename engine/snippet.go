package engine

import (
	"container/list"
	"sync"
	"weak"

	"github.com/sift-search/sift/analysis"
	"github.com/sift-search/sift/internal/mdtext"
	"github.com/sift-search/sift/record"
)

// plainCacheBytes bounds the plain texts kept for snippets, in bytes.
const plainCacheBytes = 32 << 20

// plainCache keeps the plain text of Markdown documents (see mdtext) for
// their search snippets, least recently used first out, so a search over
// documents it has seen costs no Markdown parsing. Stored documents never
// change (a new version takes a new record), so a record is its own key;
// keys are weak, so a replaced document is not kept alive.
type plainCache struct {
	mu    sync.Mutex
	max   int // bytes
	size  int
	order *list.List // of *plainEntry, most recent first
	byDoc map[weak.Pointer[record.Document]]*list.Element
}

type plainEntry struct {
	doc  weak.Pointer[record.Document]
	text string
}

func newPlainCache(max int) *plainCache {
	return &plainCache{max: max, order: list.New(), byDoc: map[weak.Pointer[record.Document]]*list.Element{}}
}

// text returns what a snippet of stored document d is cut from: its
// content, or for Markdown its plain text.
func (c *plainCache) text(d *record.Document) string {
	if d.Format != record.FormatMarkdown {
		return d.Content
	}
	key := weak.Make(d)
	c.mu.Lock()
	if el, ok := c.byDoc[key]; ok {
		c.order.MoveToFront(el)
		c.mu.Unlock()
		return el.Value.(*plainEntry).text
	}
	c.mu.Unlock()
	t := mdtext.Plain(analysis.MarkdownHead(d.Content))
	c.put(key, t)
	return t
}

func (c *plainCache) put(key weak.Pointer[record.Document], t string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.byDoc[key]; ok {
		return // another search was first
	}
	c.byDoc[key] = c.order.PushFront(&plainEntry{key, t})
	c.size += len(t)
	for c.size > c.max && c.order.Len() > 1 {
		old := c.order.Remove(c.order.Back()).(*plainEntry)
		delete(c.byDoc, old.doc)
		c.size -= len(old.text)
	}
}
