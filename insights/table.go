package insights

import (
	"cmp"
	"slices"
	"strings"

	"github.com/sift-search/sift/record"
)

// The aggregate: one entry per (day, endpoint, question or search,
// authenticated or not, text) with its count and how many of those found
// nothing or no source, plus per (day, endpoint, kind, authenticated) an
// entry of empty text holding the day's totals. The totals are kept apart
// from the texts so that evicting texts (the bound below) never changes
// the volume the report and its chart show; there are at most days × 5
// endpoints × 2 × 2 of them. With days in the key, a window of N days is
// exact, first and last seen are the least and greatest day of a text's
// entries, and retention is dropping the old days.

// key identifies an entry; text "" is the totals entry.
type key struct {
	day  int32 // days since 1970-01-01, UTC
	ep   Endpoint
	ask  bool
	auth bool
	text string
}

type counts struct {
	n, none, unanswered uint32
	touched             uint32 // when it last counted (table.clock; not persisted)
}

func (c *counts) add(ev *Event) {
	c.n = satAdd(c.n)
	if ev.NoResults {
		c.none = satAdd(c.none)
	}
	if ev.Unanswered {
		c.unanswered = satAdd(c.unanswered)
	}
}

func satAdd(n uint32) uint32 {
	if n == 1<<32-1 {
		return n
	}
	return n + 1
}

// table is the aggregate and what changed since it was last persisted.
// It is not safe for concurrent use (Recorder guards it).
type table struct {
	entries map[key]counts
	texts   int              // entries with text, which maxTexts bounds
	dirty   map[key]struct{} // changed or deleted since the last takeDirty
	clock   uint32           // counts the events, for counts.touched
	max     int              // texts kept at most
	keep    int32            // days kept: today and keep-1 before
}

func newTable(maxTexts int, keepDays int32) *table {
	return &table{entries: map[key]counts{}, dirty: map[key]struct{}{}, max: maxTexts, keep: keepDays}
}

// add counts ev, whose text is normalized, on day. O(1), and O(max log
// max) once every max/10 new texts (evict): O(log max) amortized.
func (t *table) add(day int32, ev *Event, text string) {
	t.clock++
	k := key{day: day, ep: ev.Endpoint, ask: ev.Ask, auth: ev.Authenticated}
	t.bump(k, ev)
	if text == "" {
		return
	}
	k.text = text
	if _, ok := t.entries[k]; !ok {
		t.texts++
	}
	t.bump(k, ev)
	if t.texts > t.max {
		t.evict()
	}
}

func (t *table) bump(k key, ev *Event) {
	c := t.entries[k]
	c.add(ev)
	c.touched = t.clock
	t.entries[k] = c
	t.dirty[k] = struct{}{}
}

// put sets an entry as the store kept it (at start-up).
func (t *table) put(k key, c counts) {
	if _, ok := t.entries[k]; !ok && k.text != "" {
		t.texts++
	}
	t.entries[k] = c
}

func (t *table) remove(k key) {
	delete(t.entries, k)
	if k.text != "" {
		t.texts--
	}
	t.dirty[k] = struct{}{}
}

// evict drops the least recent texts — the oldest day first, then the
// least counted, then the least recently counted since start-up — down
// to nine tenths of the bound, so that the next eviction is a tenth of
// the bound of new texts away.
func (t *table) evict() {
	type entry struct {
		key
		n, touched uint32
	}
	es := make([]entry, 0, t.texts)
	for k, c := range t.entries {
		if k.text != "" {
			es = append(es, entry{k, c.n, c.touched})
		}
	}
	slices.SortFunc(es, func(a, b entry) int {
		return cmp.Or(cmp.Compare(a.day, b.day), cmp.Compare(a.n, b.n), cmp.Compare(a.touched, b.touched),
			strings.Compare(a.text, b.text), cmp.Compare(a.ep, b.ep), compareBool(a.ask, b.ask), compareBool(a.auth, b.auth))
	})
	for _, e := range es[:t.texts-t.max*9/10] {
		t.remove(e.key)
	}
}

// prune drops the entries older than the retention as of today. O(entries).
func (t *table) prune(today int32) {
	for k := range t.entries {
		if k.day <= today-t.keep {
			t.remove(k)
		}
	}
}

// takeDirty returns the entries changed since the last call as rows of
// absolute values, a deleted one with count 0, and forgets them.
func (t *table) takeDirty() []record.Insight {
	if len(t.dirty) == 0 {
		return nil
	}
	rows := make([]record.Insight, 0, len(t.dirty))
	for k := range t.dirty {
		c := t.entries[k] // a deleted entry: zero counts
		rows = append(rows, record.Insight{Day: k.day, Endpoint: uint8(k.ep), Ask: k.ask, Authenticated: k.auth, Text: k.text,
			Count: c.n, NoResults: c.none, Unanswered: c.unanswered})
	}
	clear(t.dirty)
	return rows
}

// markDirty marks the entries of rows changed again (a write that failed).
func (t *table) markDirty(rows []record.Insight) {
	for i := range rows {
		t.dirty[keyOf(&rows[i])] = struct{}{}
	}
}

// keyOf is the key of a stored row.
func keyOf(r *record.Insight) key {
	return key{day: r.Day, ep: Endpoint(r.Endpoint), ask: r.Ask, auth: r.Authenticated, text: r.Text}
}

func compareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}
