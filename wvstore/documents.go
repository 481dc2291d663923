package wvstore

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-openapi/strfmt"
	"github.com/weaviate/weaviate/entities/models"

	"github.com/sift-search/sift/analysis"
	"github.com/sift-search/sift/record"
)

// Documents are objects with the document id's object id; "terms" holds
// the title's words titleWeight times, then the body's, as the memory
// store weighs them.

// titleWeight is how much a title word counts against a body word, the
// memory store's default.
const titleWeight = 3

func (s *content) documentObjID(id string) string { return s.objID("document", id) }

func (s *content) documentObject(d *record.Document) *models.Object {
	rec := *d
	rec.Hidden = false
	words := analysis.IndexTerms(nil, d.Title, titleWeight)
	words = analysis.IndexTerms(words, d.Content, 1)
	o := &models.Object{Class: s.class("Document"), ID: strfmt.UUID(s.documentObjID(d.ID)),
		Properties: map[string]any{
			"sourceId": d.SourceID, "docId": d.ID, "docKey": d.Key, "slug": d.Slug,
			"terms": strings.Join(words, " "), "len": len(words),
			"updated": d.UpdatedAt.UTC().Format("2006-01-02T15:04:05.000000Z07:00"), "record": encodeRecord(&rec),
		}}
	if s.pairs {
		pairs := analysis.IndexPairs(analysis.IndexPairs(nil, d.Title), d.Content) // none across the two
		props(o)["pairs"] = strings.Join(pairs, " ")
	}
	return o
}

func documentOwner(id string) string { return "d\x00" + id }

func decodeDocument(cat *catalog, o map[string]any) (record.Document, error) {
	var d record.Document
	if err := decodeRecord(o, &d); err != nil {
		return d, err
	}
	d.Hidden = cat.sources[d.SourceID].Hidden()
	return d, nil
}

// storedDocuments returns the stored documents among ids.
func (s *content) storedDocuments(ctx context.Context, cat *catalog, ids []string) (map[string]record.Document, error) {
	out := map[string]record.Document{}
	step := perQuery(501) - 1
	for start := 0; start < len(ids); start += step {
		part := ids[start:min(start+step, len(ids))]
		objs, err := s.get(ctx, getQuery{class: s.class("Document"), fields: []string{"record"}, where: anyText("docId", part), limit: len(part) + 1})
		if err != nil {
			return nil, err
		}
		for _, o := range objs {
			d, err := decodeDocument(cat, o)
			if err != nil {
				return nil, err
			}
			out[d.ID] = d
		}
	}
	return out, nil
}

// PutDocuments creates or replaces documents and returns them as stored;
// a replaced document keeps its slug and creation time, a new one gets
// the Slug it carries when that is free (a migration's).
func (s *content) PutDocuments(docs []record.Document) ([]record.Document, error) {
	out := make([]record.Document, len(docs))
	copy(out, docs)
	now := time.Now()
	for i := range out {
		if err := record.CheckDocument(&out[i], now); err != nil {
			return nil, err
		}
	}
	out = record.LastOfEachID(out)
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	cat, err := s.cat(ctx)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(out))
	for i := range out {
		if cat.sources[out[i].SourceID] == nil {
			return nil, fmt.Errorf("%w: document %q: unknown source %q", record.ErrInvalid, out[i].Title, out[i].SourceID)
		}
		ids[i] = out[i].ID
	}
	stored, err := s.storedDocuments(ctx, cat, ids)
	if err != nil {
		return nil, err
	}
	taken := map[string]bool{}
	objs := make([]*models.Object, 0, len(out))
	for i := range out {
		d := &out[i]
		if old, ok := stored[d.ID]; ok {
			d.Slug, d.CreatedAt = old.Slug, old.CreatedAt
		} else {
			used := func(x string) bool { return taken[x] }
			// A given slug (a migration's) is claimed when free.
			slug, err := s.claimGiven(ctx, "d", d.Slug, documentOwner(d.ID), used)
			if err == nil && slug == "" {
				hiddenKey := ""
				if cat.sources[d.SourceID].Hidden() {
					hiddenKey = d.ID
				}
				slug, err = s.claimSlug(ctx, "d", d.Title, "doc", hiddenKey, documentOwner(d.ID), used)
			}
			if err != nil {
				return nil, err
			}
			d.Slug, taken[slug] = slug, true
			if d.CreatedAt.IsZero() {
				d.CreatedAt = d.UpdatedAt
			}
		}
		objs = append(objs, s.documentObject(d))
	}
	if err := s.upsert(ctx, objs); err != nil {
		return nil, err
	}
	touched := map[string]string{}
	for i := range out {
		touched[documentOwner(out[i].ID)] = out[i].SourceID
	}
	if err := s.contentChanged(ctx, touched); err != nil {
		return nil, err
	}
	for i := range out {
		out[i].Hidden = cat.sources[out[i].SourceID].Hidden()
	}
	return out, s.wrote(ctx)
}

// DeleteDocument deletes a document by id.
func (s *content) DeleteDocument(id string) error {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	d, ok, err := s.document(ctx, id)
	if err != nil {
		return err
	}
	if !ok {
		return record.ErrNotFound
	}
	if err := s.deleteObject(ctx, s.class("Document"), s.documentObjID(id)); err != nil {
		return err
	}
	if err := s.release(ctx, "d", d.Slug); err != nil {
		return err
	}
	if err := s.contentChanged(ctx, map[string]string{documentOwner(id): d.SourceID}); err != nil {
		return err
	}
	return s.wrote(ctx)
}

func (s *content) document(ctx context.Context, id string) (record.Document, bool, error) {
	cat, err := s.cat(ctx)
	if err != nil {
		return record.Document{}, false, err
	}
	p, ok, err := getProps(ctx, s.c, s.class("Document"), s.documentObjID(id))
	if err != nil || !ok {
		return record.Document{}, false, err
	}
	d, err := decodeDocument(cat, p)
	return d, err == nil, err
}

// Document returns a document by id.
func (s *content) Document(id string) (record.Document, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	d, ok, _ := s.document(ctx, id)
	return d, ok
}

// DocumentBySlug returns the document with the given slug.
func (s *content) DocumentBySlug(slug string) (record.Document, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	cat, err := s.cat(ctx)
	if err != nil {
		return record.Document{}, false
	}
	objs, err := s.get(ctx, getQuery{class: s.class("Document"), fields: []string{"record"}, where: eqText("slug", slug), limit: 2})
	if err != nil || len(objs) == 0 {
		return record.Document{}, false
	}
	d, err := decodeDocument(cat, objs[0])
	return d, err == nil
}

// Documents returns a page of the documents, newest first (ties by id),
// and how many there are; without private, only those callers without
// credentials may see.
func (s *content) Documents(offset, limit int, private bool) ([]record.Document, int) {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	cat, err := s.cat(ctx)
	if err != nil {
		return []record.Document{}, 0
	}
	w := cond{}.except(hiddenDocuments(cat, private))
	where := w.where()
	total, err := s.countCond(ctx, s.class("Document"), w)
	if err != nil {
		return []record.Document{}, 0
	}
	offset = min(max(offset, 0), total)
	limit = min(max(limit, 0), total-offset)
	out := []record.Document{}
	if limit == 0 {
		return out, total
	}
	objs, err := s.listPage(ctx, listing{class: s.class("Document"), where: where, ts: "updated", id: "docId", desc: true,
		fields: []string{"record"}}, offset, limit)
	if err != nil {
		return out, total
	}
	for _, o := range objs {
		if d, err := decodeDocument(cat, o); err == nil {
			out = append(out, d)
		}
	}
	return out, total
}

// SourceDocuments returns a source's documents ordered by key.
func (s *content) SourceDocuments(sourceID string) []record.Document {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	cat, err := s.cat(ctx)
	if err != nil {
		return nil
	}
	objs, err := s.getAll(ctx, getQuery{class: s.class("Document"), fields: []string{"record"}, where: eqText("sourceId", sourceID)})
	if err != nil {
		return nil
	}
	var out []record.Document
	for _, o := range objs {
		if d, err := decodeDocument(cat, o); err == nil {
			out = append(out, d)
		}
	}
	// By the keys' bytes, as the memory store orders them (Weaviate's
	// sort ignores case).
	slices.SortFunc(out, func(a, b record.Document) int { return cmp.Compare(a.Key, b.Key) })
	return out
}
