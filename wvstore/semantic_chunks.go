package wvstore

import (
	"cmp"
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/go-openapi/strfmt"
	"github.com/weaviate/weaviate/entities/models"

	"github.com/sift-search/sift/analysis"
	"github.com/sift-search/sift/embed"
	"github.com/sift-search/sift/follow"
	"github.com/sift-search/sift/record"
	"github.com/sift-search/sift/semantic"
	"github.com/sift-search/sift/semantic/chunk"
)

// Chunks as the indexer makes and writes them: a document's passages and
// a channel's conversation windows, cut as the memory index cuts them,
// each an object with a deterministic id; written only when its record or
// embedder changed, its vector kept when only its place in the document
// did.

// ownerProp is a chunk's "owner" property: its owner with the NUL bytes
// that separate the parts escaped, as GraphQL strings cannot hold them.
func ownerProp(owner string) string { return url.QueryEscape(owner) }

func ownerProps(owners []string) []string {
	out := make([]string, len(owners))
	for i, o := range owners {
		out[i] = ownerProp(o)
	}
	return out
}

// chunkObj is a chunk to write.
type chunkObj struct {
	id, owner      string
	hash, textHash string // of the record, and of the text embedded
	rec            chunkRecord
	props          map[string]any
	embedder       string
	vector         []float32
}

// The "embedder" of a chunk without a vector: none yet, or refused by the
// embedder named.
const noEmbedder = "none"

func refusedBy(name string) string { return "refused:" + name }

func (s *chunks) newChunk(owner, kind, chanRef, key string, seq int64, rec chunkRecord) *chunkObj {
	record := encodeRecord(&rec)
	words := analysis.IndexTerms(nil, rec.Title, titleWeight)
	words = analysis.IndexTerms(words, rec.Body, 1)
	c := &chunkObj{id: s.objID("chunk", owner, key), owner: owner, rec: rec,
		hash: shortHash(record), textHash: shortHash(rec.embedText())}
	c.props = map[string]any{"sourceId": rec.Source, "owner": ownerProp(owner), "kind": kind, "terms": strings.Join(words, " "),
		"record": record, "hash": c.hash, "textHash": c.textHash, "seq": seq}
	if chanRef != "" {
		c.props["chan"] = chanRef
	}
	if kind == kindDocument {
		c.props["span"] = chunkSpan(&rec)
	}
	return c
}

// docChunks cuts a document into passages as the memory index does.
func (s *chunks) docChunks(d *record.Document) []*chunkObj {
	spans := chunk.SplitDocument(d.Content)
	sections := chunk.SectionStarts(d.Content, spans)
	hash := shortHash(d.Content)
	owner := documentOwner(d.ID)
	seen := map[string]int{}
	out := make([]*chunkObj, 0, len(spans))
	for i, sp := range spans {
		title := d.Title
		if sp.Heading != "" && sp.Heading != d.Title {
			title += " — " + sp.Heading
		}
		rec := chunkRecord{Title: title, Body: d.Content[sp.Start:sp.End], Heading: sp.Heading, Doc: d.ID, DocHash: hash,
			Start: sp.Start, End: sp.End, Section: sections[i], Source: d.SourceID}
		// Keyed by its text: a passage an edit elsewhere moved keeps its id
		// (and its vector).
		th := shortHash(rec.embedText())
		out = append(out, s.newChunk(owner, kindDocument, "", th+"#"+strconv.Itoa(seen[th]), int64(i), rec))
		seen[th]++
	}
	return out
}

// windowChunks cuts a channel's messages (objects in time order) into
// conversation windows as the memory index does.
func (s *chunks) windowChunks(ch *record.Channel, objs []map[string]any) ([]*chunkObj, error) {
	msgs := make([]record.Message, len(objs))
	texts := make([]follow.MessageText, len(objs))
	for i, o := range objs {
		m, err := decodeMessage(o)
		if err != nil {
			return nil, err
		}
		msgs[i] = m
		texts[i] = follow.MessageText{Live: true, Micros: m.Timestamp.UnixMicro(), Author: cmp.Or(m.AuthorName, m.Author), Content: m.Content}
	}
	owner, ref := channelOwner(ch.SourceID, ch.ID), chanRef(ch.SourceID, ch.ID)
	var out []*chunkObj
	var body strings.Builder
	refs := make([]int, len(texts))
	for i := range refs {
		refs[i] = i
	}
	for n, w := range chunk.Windows(refs, texts) {
		body.Reset()
		ids := make([]string, len(w))
		for j, i := range w {
			if j > 0 {
				body.WriteByte('\n')
			}
			body.WriteString(texts[i].Author)
			body.WriteString(": ")
			body.WriteString(texts[i].Content)
			ids[j] = msgs[i].ID
		}
		rec := chunkRecord{Title: ch.Name, Body: body.String(), Source: ch.SourceID, Channel: ch.ID, Msgs: ids}
		out = append(out, s.newChunk(owner, kindMessage, ref, "w\x00"+ids[0], int64(n), rec))
	}
	return out, nil
}

// storedChunk is what the indexer reads of a stored chunk.
type storedChunk struct{ hash, textHash, embedder string }

// writeChunks writes the chunks of owners (made: every chunk each owner
// has now) that are new or changed, embedded by the current embedder,
// and deletes the owners' other chunks. A chunk whose text is unchanged
// keeps its vector.
func (x *Semantic) writeChunks(ctx context.Context, made map[string][]*chunkObj) (bool, error) {
	if len(made) == 0 {
		return false, nil
	}
	owners := make([]string, 0, len(made))
	for o := range made {
		owners = append(owners, o)
	}
	stored, err := x.s.storedChunks(ctx, owners)
	if err != nil {
		return false, err
	}
	emb, err := x.current(ctx, false)
	if err != nil {
		return false, err
	}
	name := noEmbedder
	if emb != nil {
		name = emb.Name()
	}
	keep := map[string]bool{}
	var write, embedNow, moved []*chunkObj
	for _, cs := range made {
		for _, c := range cs {
			keep[c.id] = true
			old, ok := stored[c.id]
			switch {
			case ok && old.hash == c.hash && (old.embedder == name || old.embedder == refusedBy(name)):
				continue // as it is
			case emb == nil:
				c.embedder = noEmbedder
			case ok && old.textHash == c.textHash && old.embedder == name:
				moved = append(moved, c)
			default:
				embedNow = append(embedNow, c)
			}
			write = append(write, c)
		}
	}
	if len(moved) > 0 {
		ids := make([]string, len(moved))
		for i, c := range moved {
			ids[i] = c.id
		}
		vecs, err := x.s.chunksByID(ctx, ids, []string{"embedder"}, true)
		if err != nil {
			return false, err
		}
		for _, c := range moved {
			if h, ok := vecs[c.id]; ok && h.vector != nil && h.str("embedder") == name {
				c.vector, c.embedder = h.vector, name
			} else {
				embedNow = append(embedNow, c)
			}
		}
	}
	if err := x.embedChunks(emb, embedNow); err != nil {
		return false, err
	}
	if err := x.s.upsert(ctx, chunkObjects(x.s, write)); err != nil {
		return false, fmt.Errorf("write chunks: %w", err)
	}
	var stale []string
	for id := range stored {
		if !keep[id] {
			stale = append(stale, id)
		}
	}
	for start := 0; start < len(stale); start += 200 {
		if _, err := x.s.deleteWhere(ctx, x.s.class("Chunk"), idIn(stale[start:min(start+200, len(stale))])); err != nil {
			return true, fmt.Errorf("delete stale chunks: %w", err)
		}
	}
	return len(write) > 0 || len(stale) > 0, nil
}

// embedChunks gives cs the vectors of emb, in batches; a chunk the
// embedder refuses is marked so and left without one.
func (x *Semantic) embedChunks(emb embed.Embedder, cs []*chunkObj) error {
	for start := 0; start < len(cs); start += semantic.EmbedBatch {
		part := cs[start:min(start+semantic.EmbedBatch, len(cs))]
		texts := make([]string, len(part))
		for i, c := range part {
			texts[i] = c.rec.embedText()
		}
		vecs, err := x.ix.embedding(x).Embed(emb, texts)
		if err != nil {
			return fmt.Errorf("embed chunks: %w", err)
		}
		for i, c := range part {
			c.vector, c.embedder = vecs[i], emb.Name()
			if vecs[i] == nil {
				c.embedder = refusedBy(emb.Name())
			}
		}
	}
	return nil
}

func chunkObjects(s *Store, cs []*chunkObj) []*models.Object {
	out := make([]*models.Object, len(cs))
	for i, c := range cs {
		props := make(map[string]any, len(c.props)+1)
		for k, v := range c.props {
			props[k] = v
		}
		props["embedder"] = c.embedder
		out[i] = &models.Object{Class: s.class("Chunk"), ID: strfmt.UUID(c.id), Properties: props, Vector: c.vector}
	}
	return out
}

// storedChunks returns the stored chunks of owners by id.
func (s *chunks) storedChunks(ctx context.Context, owners []string) (map[string]storedChunk, error) {
	out := map[string]storedChunk{}
	for start := 0; start < len(owners); start += 100 {
		objs, err := s.keysetAll(ctx, getQuery{class: s.class("Chunk"), fields: []string{"_id", "hash", "textHash", "embedder"},
			where: anyText("owner", ownerProps(owners[start:min(start+100, len(owners))]))}, intKey("seq"))
		if err != nil {
			return nil, err
		}
		for _, o := range objs {
			id, _ := o["_id"].(string)
			c := storedChunk{}
			c.hash, _ = o["hash"].(string)
			c.textHash, _ = o["textHash"].(string)
			c.embedder, _ = o["embedder"].(string)
			out[id] = c
		}
	}
	return out, nil
}

// chunkProps are a chunk object's properties.
var chunkProps = []string{"sourceId", "owner", "kind", "chan", "terms", "record", "seq", "span", "hash", "textHash", "embedder"}

// reembed embeds a batch of the chunks whose vectors another embedder
// made (or that have none) with the current one.
func (x *Semantic) reembed(ctx context.Context) (bool, error) {
	emb, err := x.current(ctx, false)
	if err != nil || emb == nil {
		return false, err
	}
	// The embedders other than the current one, named: a negative filter
	// may count objects deleted since (weaviate#10260).
	name := emb.Name()
	counts, err := x.s.countBy(ctx, x.s.class("Chunk"), "embedder", nil)
	if err != nil {
		return false, err
	}
	var others []string
	for e, n := range counts {
		if n > 0 && e != name && e != refusedBy(name) {
			others = append(others, e)
		}
	}
	if len(others) == 0 {
		return false, nil
	}
	hits, err := x.s.chunkGet(ctx, chunkQuery{fields: chunkProps, where: anyText("embedder", others), limit: semantic.EmbedBatch})
	if err != nil || len(hits) == 0 {
		return false, err
	}
	cs := make([]*chunkObj, len(hits))
	for i, h := range hits {
		rec, err := decodeChunkRecord(h.str("record"))
		if err != nil {
			return false, fmt.Errorf("chunk %s: %w", h.id, err)
		}
		cs[i] = &chunkObj{id: h.id, rec: rec, props: map[string]any{}}
		for _, p := range chunkProps {
			if v, ok := h.props[p]; ok && v != nil && p != "embedder" {
				cs[i].props[p] = v
			}
		}
		if seq, ok := h.props["seq"].(float64); ok { // GraphQL's number: written back as the int it is
			cs[i].props["seq"] = int64(seq)
		}
	}
	if err := x.embedChunks(emb, cs); err != nil {
		return false, err
	}
	if err := x.s.upsert(ctx, chunkObjects(x.s, cs)); err != nil {
		return false, fmt.Errorf("write re-embedded chunks: %w", err)
	}
	return true, nil
}
