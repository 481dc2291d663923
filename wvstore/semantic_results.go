package wvstore

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/sift-search/sift/record"
	"github.com/sift-search/sift/semantic"
	"github.com/sift-search/sift/semantic/chunk"
)

// From ranked chunks to hits: one result per document section (its
// overlapping passages among the candidates merged) or conversation
// window, built from the records as they are now — a document's current
// content, a window's messages that still exist — as the memory index
// builds its hits.

// Chunk kinds, the "kind" property.
const (
	kindDocument = "document"
	kindMessage  = "message"
)

// chunkRecord is a chunk object's "record": what it was made of.
type chunkRecord struct {
	Title   string   `json:"title"` // as indexed: the document's title and heading, or the channel's name
	Body    string   `json:"body"`  // the passage, or the window's "author: text" lines
	Heading string   `json:"heading,omitempty"`
	Doc     string   `json:"doc,omitempty"`     // document id
	DocHash string   `json:"docHash,omitempty"` // of the content the span is of
	Start   int      `json:"start,omitempty"`   // the passage's bytes in the content
	End     int      `json:"end,omitempty"`
	Section int      `json:"section,omitempty"` // where its section starts
	Source  string   `json:"source"`
	Channel string   `json:"channel,omitempty"` // platform id
	Msgs    []string `json:"msgs,omitempty"`    // the window's message ids, in time order
}

// embedText is what a chunk is embedded as (the memory index's chunkText).
func (r *chunkRecord) embedText() string { return r.Title + "\n" + r.Body }

func decodeChunkRecord(s string) (chunkRecord, error) {
	var r chunkRecord
	if err := json.Unmarshal([]byte(s), &r); err != nil {
		return r, fmt.Errorf("a damaged chunk record: %w", err)
	}
	return r, nil
}

// shortHash is a hex digest of parts, for comparing texts.
func shortHash(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}

// chunkSpan is a document chunk's "span" property: section, start, end.
func chunkSpan(r *chunkRecord) string {
	return strconv.Itoa(r.Section) + "," + strconv.Itoa(r.Start) + "," + strconv.Itoa(r.End)
}

func parseSpan(s string) (section, start, end int, ok bool) {
	parts := strings.Split(s, ",")
	if len(parts) != 3 {
		return 0, 0, 0, false
	}
	var err [3]error
	section, err[0] = strconv.Atoi(parts[0])
	start, err[1] = strconv.Atoi(parts[1])
	end, err[2] = strconv.Atoi(parts[2])
	return section, start, end, err[0] == nil && err[1] == nil && err[2] == nil && start <= end
}

// parseOwner reads an owner as channelOwner or documentOwner wrote it.
func parseOwner(owner string) (kind string, ch chanKey, doc string, ok bool) {
	parts := strings.Split(owner, "\x00")
	switch {
	case len(parts) == 3 && parts[0] == "c":
		return kindMessage, chanKey{parts[1], parts[2]}, "", true
	case len(parts) == 2 && parts[0] == "d":
		return kindDocument, chanKey{}, parts[1], true
	}
	return "", chanKey{}, "", false
}

// group is a result to be: a window, or a document section with the
// candidates of it, best first.
type group struct {
	best    *candidate
	doc     string // document id; "" for a window
	ch      chanKey
	members []string // chunk ids
}

// groups gathers the ranked candidates into results, best first, leaving
// out those whose channel or source the catalog no longer has or, unless
// private, hides.
func groups(cat *catalog, ranked []*candidate, private bool) []*group {
	var out []*group
	sections := map[string]*group{}
	for _, c := range ranked {
		kind, k, doc, ok := parseOwner(c.owner)
		if !ok {
			continue
		}
		if kind == kindMessage {
			if cat.chans[k] == nil || !private && cat.hidden[k] {
				continue
			}
			out = append(out, &group{best: c, ch: k, members: []string{c.id}})
			continue
		}
		src := cat.sources[c.source]
		section, _, _, ok := parseSpan(c.span)
		if src == nil || !private && src.Hidden() || !ok {
			continue
		}
		key := doc + "\x00" + strconv.Itoa(section)
		if g := sections[key]; g != nil {
			g.members = append(g.members, c.id)
			continue
		}
		g := &group{best: c, doc: doc, members: []string{c.id}}
		sections[key] = g
		out = append(out, g)
	}
	return out
}

// resolveSlack is how many results beyond those still missing are read
// at once, so a few dropped ones cost no second round.
const resolveSlack = 4

// results builds the hits of the first limit groups that still exist.
func (x *Semantic) results(ctx context.Context, cat *catalog, gs []*group, limit, maxChars int) ([]semantic.Hit, error) {
	var hits []semantic.Hit
	for next := 0; len(hits) < limit && next < len(gs); {
		n := min(len(gs)-next, limit-len(hits)+resolveSlack)
		built, err := x.build(ctx, cat, gs[next:next+n], maxChars)
		if err != nil {
			return nil, err
		}
		next += n
		for _, h := range built {
			if h != nil && len(hits) < limit {
				hits = append(hits, *h)
			}
		}
	}
	return hits, nil
}

// msgKey names a message by source, channel and id.
type msgKey struct{ source, channel, id string }

// build reads what gs's hits are made of and builds them; a group whose
// document or messages are gone gets nil.
func (x *Semantic) build(ctx context.Context, cat *catalog, gs []*group, maxChars int) ([]*semantic.Hit, error) {
	var ids, docIDs []string
	for _, g := range gs {
		ids = append(ids, g.members...)
		if g.doc != "" {
			docIDs = append(docIDs, g.doc)
		}
	}
	// The passages and the documents at once; then the windows' messages.
	var objs map[string]chunkHit
	var docs map[string]record.Document
	var objsErr, docsErr error
	var wg sync.WaitGroup
	wg.Go(func() { objs, objsErr = x.s.chunksByID(ctx, ids, []string{"record"}, false) })
	if len(docIDs) > 0 {
		wg.Go(func() { docs, docsErr = x.s.storedDocuments(ctx, cat, docIDs) })
	}
	wg.Wait()
	if err := cmp.Or(objsErr, docsErr); err != nil {
		return nil, fmt.Errorf("semantic search: %w", err)
	}
	recs := make(map[string]*chunkRecord, len(objs))
	for id, o := range objs {
		r, err := decodeChunkRecord(o.str("record"))
		if err != nil {
			return nil, fmt.Errorf("semantic search: chunk %s: %w", id, err)
		}
		recs[id] = &r
	}
	want := map[chanKey][]string{}
	for _, g := range gs {
		if r := recs[g.best.id]; g.doc == "" && r != nil {
			want[g.ch] = append(want[g.ch], r.Msgs...)
		}
	}
	live, err := x.s.liveMessages(ctx, want)
	if err != nil {
		return nil, fmt.Errorf("semantic search: %w", err)
	}
	out := make([]*semantic.Hit, len(gs))
	for i, g := range gs {
		r := recs[g.best.id]
		switch {
		case r == nil: // deleted since it was ranked
		case g.doc != "":
			if d, ok := docs[g.doc]; ok {
				out[i] = docHit(cat, g, recs, &d, maxChars)
			}
		default:
			out[i] = windowHit(cat, g, r, live, maxChars)
		}
	}
	return out, nil
}

// liveMessages reads the messages want names by channel: those that
// still exist.
func (s *chunks) liveMessages(ctx context.Context, want map[chanKey][]string) (map[msgKey]record.Message, error) {
	out := map[msgKey]record.Message{}
	if len(want) == 0 {
		return out, nil
	}
	var refs, ids []string
	wanted := map[msgKey]bool{}
	for k, ms := range want {
		refs = append(refs, chanRef(k.source, k.id))
		for _, id := range ms {
			ids = append(ids, id)
			wanted[msgKey{k.source, k.id, id}] = true
		}
	}
	ids = uniq(ids)
	for start := 0; start < len(ids); start += 500 {
		part := ids[start:min(start+500, len(ids))]
		objs, err := s.getAll(ctx, getQuery{class: s.class("Message"), fields: msgFields, where: and(anyText("chan", refs), anyText("msgId", part))})
		if err != nil {
			return nil, err
		}
		for _, o := range objs {
			m, err := decodeMessage(o)
			if err != nil {
				return nil, err
			}
			if k := (msgKey{m.SourceID, m.ChannelID, m.ID}); wanted[k] {
				out[k] = m
			}
		}
	}
	return out, nil
}

// docHit builds a document section's hit from the document as it is: the
// span its passages among the candidates cover. Passages cut from another
// version of the content (an edit the indexer has not taken in yet) are
// left out: the text they hold may be gone.
func docHit(cat *catalog, g *group, recs map[string]*chunkRecord, d *record.Document, maxChars int) *semantic.Hit {
	best, hash := recs[g.best.id], shortHash(d.Content)
	if best.DocHash != hash {
		return nil
	}
	var spans [][2]int
	for _, id := range g.members {
		if r := recs[id]; r != nil && r.DocHash == hash {
			spans = append(spans, [2]int{r.Start, r.End})
		}
	}
	start, end := chunk.MergeSpans(spans)
	if start < 0 || start > end || end > len(d.Content) {
		return nil
	}
	body := d.Content[start:end]
	title := d.Title
	if best.Heading != "" && best.Heading != d.Title {
		title += " — " + best.Heading
	}
	h := &semantic.Hit{Type: "document", Score: g.best.score, Title: title, SourceID: d.SourceID,
		DocumentID: d.ID, DocSlug: d.Slug, DocURL: d.URL, Fragment: chunk.TextFragment(d.Content, start, end), Time: d.UpdatedAt}
	if src := cat.sources[d.SourceID]; src != nil {
		h.Source, h.SourceType = src.Name, src.Type
	}
	h.ContentLength = utf8.RuneCountInString(body)
	h.Content, h.Truncated = chunk.CutWords(body, maxChars)
	return h
}

// windowHit builds a conversation window's hit from its messages that
// still exist, as they read now; nil when none does.
func windowHit(cat *catalog, g *group, r *chunkRecord, live map[msgKey]record.Message, maxChars int) *semantic.Hit {
	ch := cat.chans[g.ch]
	h := &semantic.Hit{Type: "message", Score: g.best.score, SourceID: g.ch.source, ChannelSlug: ch.Slug, Channel: ch.Name}
	if src := cat.sources[g.ch.source]; src != nil {
		h.Source, h.SourceType = src.Name, src.Type
	}
	var b strings.Builder
	for _, id := range r.Msgs {
		m, ok := live[msgKey{g.ch.source, g.ch.id, id}]
		if !ok {
			continue
		}
		author := cmp.Or(m.AuthorName, m.Author)
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(author)
		b.WriteString(": ")
		b.WriteString(m.Content)
		if h.MessageID == "" {
			h.MessageID, h.MessageURL, h.Time = m.ID, m.URL, m.Timestamp.UTC()
			h.Title = ch.Name + " — " + h.Time.Format("2006-01-02")
		}
		if !slices.Contains(h.Authors, author) {
			h.Authors = append(h.Authors, author)
		}
	}
	if h.MessageID == "" {
		return nil
	}
	body := b.String()
	h.ContentLength = utf8.RuneCountInString(body)
	h.Content, h.Truncated = chunk.CutWords(body, maxChars)
	return h
}
