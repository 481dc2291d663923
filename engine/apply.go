package engine

import (
	"github.com/sift-search/sift/analysis"
	"github.com/sift-search/sift/index"
	"github.com/sift-search/sift/record"
)

// applier is the engine's role of applying logged writes to the state:
// commit and start-up's replay hand it each op (apply), and it changes
// the records and indexes a chunk at a time under mu, the caller holding
// writeMu (this file; visibility.go for what a source's rules demand of
// the content held; insights.go). Like catalog it is the engine itself,
// embedded in it.
type applier struct{ *Engine }

// applyChunk is how many records a writer changes per hold of the state lock,
// so a bulk write never keeps a reader waiting for long.
const applyChunk = 256

// writer is the analyzer of writers, with the buffers of a chunk of
// records. Writers are serialised, so the engine keeps one, with large
// stem caches (writeAnalyzer).
type writer struct {
	*analysis.Analyzer
	docs  [applyChunk]index.Doc
	langs [applyChunk]string
	fac   []string
}

func newWriter() *writer { return &writer{Analyzer: analysis.New(0)} }

// langFacet tags the records of a language other than the default.
func langFacet(lang string) string { return "l:" + lang }

// withLang appends lang's facet to facets, unless lang is the default.
func withLang(facets []string, lang string) []string {
	if lang == "" {
		return facets
	}
	return append(facets, langFacet(lang))
}

// writeAnalyzer returns the analyzer of writers; the caller holds writeMu.
func (e *applier) writeAnalyzer() *writer {
	if e.wa == nil {
		e.wa = newWriter()
	}
	return e.wa
}

// apply changes the state as o says. The caller holds writeMu; apply takes
// mu for short stretches. It must accept anything the log holds: records
// that no longer fit (a channel of a deleted source, say) are skipped.
func (e *applier) apply(o *op) {
	switch o.kind {
	case opPutSource:
		s := o.source
		if !o.cursorOK {
			s.Cursor = ""
			if old, ok := e.st.sources[s.ID]; ok {
				s.Cursor = old.Cursor
			}
		}
		e.applyPutSource(&s)
	case opPutCursor:
		e.mu.Lock()
		if s, ok := e.st.sources[o.id]; ok {
			s.Cursor = o.cursor
		}
		e.mu.Unlock()
	case opDeleteSource:
		e.applyDeleteSource(o.id)
	case opPutChannels:
		e.mu.Lock()
		touched := map[string]bool{}
		for i := range o.channels {
			if e.st.putChannel(&o.channels[i]) {
				touched[o.channels[i].SourceID] = true
			}
		}
		for id := range touched {
			e.st.refreshVisibility(id)
		}
		e.mu.Unlock()
	case opPutSettings:
		e.mu.Lock()
		e.st.settings = o.settings
		e.mu.Unlock()
	case opPutInsights:
		e.applyInsights(o.insights)
	case opPutMessages:
		e.applyPutMessages(o.messages)
	case opDeleteMessages:
		e.deleteSlots(e.st.messageSlots(o.id, o.ids), nil)
	case opPutDocuments:
		e.applyPutDocuments(o.docs)
	case opDeleteDocuments:
		var slots []uint32
		for _, id := range o.ids {
			if i, ok := e.st.docID[id]; ok {
				slots = append(slots, i)
			}
		}
		e.deleteSlots(nil, slots)
	}
}

// putChannel stores c, keeping the slug and creation time of a channel
// already known, and reports whether it stored it: a channel of an unknown
// source, or one an operator excluded (or a thread of one), is skipped.
func (st *state) putChannel(c *record.Channel) bool {
	if _, ok := st.sources[c.SourceID]; !ok {
		return false
	}
	if st.skipsChannel(c) {
		st.rules[c.SourceID].dropped[c.ID] = true
		return false
	}
	c.Hidden = false
	if r := st.rules[c.SourceID]; r != nil {
		delete(r.dropped, c.ID)
	}
	key := recKey{c.SourceID, c.ID}
	if n, ok := st.chanKey[key]; ok {
		old := st.chans[n]
		if old.URL != c.URL {
			st.pinMessageURLs(n)
		}
		c.Slug, c.CreatedAt = old.Slug, old.CreatedAt
		*old = *c
		return true
	}
	if _, taken := st.chanSlug[c.Slug]; taken || c.Slug == "" {
		c.Slug = record.SlugFor(c.Name, "channel", st.newChannelSlugKey(c, nil), slugsIn(st.chanSlug))
	}
	n := uint32(len(st.chans))
	ch := *c
	st.chans = append(st.chans, &ch)
	st.chanKey[key] = n
	st.chanSlug[ch.Slug] = n
	return true
}

func (e *applier) applyPutMessages(msgs []record.Message) {
	a := e.writeAnalyzer()
	st := e.st
	for start := 0; start < len(msgs); start += applyChunk {
		batch := msgs[start:min(start+applyChunk, len(msgs))]
		for i := range batch {
			a.langs[i] = a.Message(&a.docs[i], batch[i].Content)
		}
		e.mu.Lock()
		for i := range batch {
			m := &batch[i]
			ch, ok := st.chanKey[recKey{m.SourceID, m.ChannelID}]
			if !ok || st.skipsMessage(m) {
				continue
			}
			if old, ok := st.findMessage(m.SourceID, m.ID); ok {
				if st.sameMessage(old, m) {
					continue
				}
				st.deleteMessage(old)
			}
			slot := st.storeMessage(m, ch)
			st.orderInsert(ch, slot)
			if st.hid.chans.Contains(ch) {
				st.msgIdx.Hide(slot, true) // before Add, which finds it hidden
			}
			a.fac = withLang(messageFacets(a.fac[:0], m, ch), a.langs[i])
			st.msgIdx.Add(slot, &a.docs[i], a.fac)
		}
		e.mu.Unlock()
	}
}

func (e *applier) applyPutDocuments(docs []record.Document) {
	a := e.writeAnalyzer()
	st := e.st
	for start := 0; start < len(docs); start += applyChunk {
		batch := docs[start:min(start+applyChunk, len(docs))]
		for i := range batch {
			a.langs[i] = a.DocumentIn(&a.docs[i], &batch[i], e.opts.TitleWeight)
		}
		e.mu.Lock()
		for i := range batch {
			d := batch[i]
			if _, ok := st.sources[d.SourceID]; !ok {
				continue
			}
			if old, ok := st.docID[d.ID]; ok {
				d.Slug, d.CreatedAt = st.docs[old].Slug, st.docs[old].CreatedAt
				st.deleteDocument(old)
			} else if _, taken := st.docSlug[d.Slug]; taken || d.Slug == "" {
				d.Slug = record.SlugFor(d.Title, "doc", st.newDocumentSlugKey(&d), slugsIn(st.docSlug))
			}
			slot := uint32(len(st.docs))
			st.docs = append(st.docs, &d)
			st.docID[d.ID] = slot
			st.docSlug[d.Slug] = slot
			st.docIdx.Add(slot, &a.docs[i], withLang([]string{sourceFacet(d.SourceID)}, a.langs[i]))
			d.Hidden = false
			if record.SourceHidden(st.sources[d.SourceID]) {
				st.docIdx.Hide(slot, true)
			}
			st.feed.changed(DocumentChanged, slot)
		}
		e.mu.Unlock()
	}
}

// deleteSlots deletes messages and documents by slot, a chunk at a time.
func (e *applier) deleteSlots(msgs, docs []uint32) {
	for start := 0; start < len(msgs); start += applyChunk {
		e.mu.Lock()
		for _, i := range msgs[start:min(start+applyChunk, len(msgs))] {
			e.st.deleteMessage(i)
		}
		e.mu.Unlock()
	}
	for start := 0; start < len(docs); start += applyChunk {
		e.mu.Lock()
		for _, i := range docs[start:min(start+applyChunk, len(docs))] {
			e.st.deleteDocument(i)
		}
		e.mu.Unlock()
	}
}

// applyDeleteSource removes a source and everything that came from it.
func (e *applier) applyDeleteSource(id string) {
	st := e.st
	f := sourceFacet(id)
	e.deleteSlots(st.msgIdx.Facet(f).ToArray(), st.docIdx.Facet(f).ToArray())
	var chans []uint32
	for n, c := range st.chans {
		if c != nil && c.SourceID == id {
			chans = append(chans, uint32(n))
		}
	}
	e.deleteChannels(chans)
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(st.sources, id)
	delete(st.rules, id)
}
