package wvstore

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/go-openapi/strfmt"
	"github.com/sift-search/sift/record"
	"github.com/weaviate/weaviate/entities/models"
)

// What `sift migrate` needs beyond the store's methods: a migration's
// identity and progress in Meta, so an interrupted run resumes where it
// stopped and a namespace holding anything else is refused; sources that
// keep their creation time; slugs brought from the data dir (PutChannels
// and PutDocuments claim a given slug through claimGiven).

// ErrNamespaceInUse: the namespace holds content that is not the
// migration's.
var ErrNamespaceInUse = errors.New("the namespace is in use")

// migrateKey prefixes the Meta keys of a migration.
const migrateKey = "migrate:"

// BeginMigration starts, or resumes, the migration of the data dir that
// identity names (the same string each run, say its path and sequence
// number): resumed reports that the namespace holds this migration already.
// A namespace holding another migration, or content of its own (more than
// the built-in uploads source), is ErrNamespaceInUse.
func (s *bulk) BeginMigration(identity string) (resumed bool, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	from, ok, err := s.metaValue(ctx, migrateKey+"from")
	if err != nil {
		return false, fmt.Errorf("read the migration's identity: %w", err)
	}
	if ok {
		if from != identity {
			return false, fmt.Errorf("%w: namespace %s holds a migration of %s, not of %s", ErrNamespaceInUse, s.opts.Namespace, from, identity)
		}
		return true, nil
	}
	held, err := s.holds(ctx)
	if err != nil {
		return false, err
	}
	if held != "" {
		return false, fmt.Errorf("%w: namespace %s already holds %s", ErrNamespaceInUse, s.opts.Namespace, held)
	}
	return false, s.setMeta(ctx, migrateKey+"from", identity)
}

// holds describes what the namespace holds beyond a new one's uploads
// source, "" for nothing.
func (s *bulk) holds(ctx context.Context) (string, error) {
	cat, err := s.cat(ctx)
	if err != nil {
		return "", err
	}
	var parts []string
	others := 0
	for id := range cat.sources {
		if id != record.UploadsSourceID {
			others++
		}
	}
	if others > 0 {
		parts = append(parts, fmt.Sprintf("%d sources", others))
	}
	if len(cat.chans) > 0 {
		parts = append(parts, fmt.Sprintf("%d channels", len(cat.chans)))
	}
	for _, class := range []string{"Message", "Document"} {
		n, err := s.count(ctx, s.class(class), nil)
		if err != nil {
			return "", err
		}
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d %ss", n, strings.ToLower(class)))
		}
	}
	cur, err := s.current(ctx, settingsID)
	if err != nil {
		return "", err
	}
	if len(settingsOf(cur)) > 0 {
		parts = append(parts, "settings")
	}
	return strings.Join(parts, ", "), nil
}

// Progress returns what SetProgress last recorded for a stage of the
// migration, "" when nothing.
func (s *bulk) Progress(stage string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	v, _, err := s.metaValue(ctx, migrateKey+stage)
	if err != nil {
		return "", fmt.Errorf("read the progress of %s: %w", stage, err)
	}
	return v, nil
}

// SetProgress records how far a stage of the migration got.
func (s *bulk) SetProgress(stage, value string) error {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	if err := s.setMeta(ctx, migrateKey+stage, value); err != nil {
		return fmt.Errorf("record the progress of %s: %w", stage, err)
	}
	return nil
}

func (s *bulk) metaValue(ctx context.Context, key string) (string, bool, error) {
	p, ok, err := getProps(ctx, s.c, s.class("Meta"), metaID(s.opts.Namespace, key))
	v, _ := p["value"].(string)
	return v, ok, err
}

func (s *bulk) setMeta(ctx context.Context, key, value string) error {
	return s.upsert(ctx, []*models.Object{{Class: s.class("Meta"), ID: strfmt.UUID(metaID(s.opts.Namespace, key)),
		Properties: map[string]any{"key": key, "value": value}}})
}

// PutSourceKeepingCreated is PutSource that keeps src.CreatedAt (when
// set) even for a source that exists, such as the built-in uploads source
// Open created.
func (s *bulk) PutSourceKeepingCreated(src record.Source) (record.Source, error) {
	if err := record.CheckSource(&src); err != nil {
		return record.Source{}, err
	}
	return s.retry(src.ID, func(ctx context.Context, cur sourceVersion) (record.Source, error) {
		if cur.Rec != nil && !src.CreatedAt.IsZero() {
			rec := *cur.Rec // put takes the creation time from the record it replaces
			rec.CreatedAt = src.CreatedAt
			cur.Rec = &rec
		}
		return s.put(ctx, src, cur, true)
	})
}

// claimGiven claims slug, given with a new channel or document (a
// migration brings the data dir's), for owner: it returns slug when owner
// holds it, "" when slug is empty, not a slug, taken, or held by another.
func (s *bulk) claimGiven(ctx context.Context, kind, slug, owner string, taken func(string) bool) (string, error) {
	if !record.ValidSlug(slug) || taken(slug) {
		return "", nil
	}
	ok, err := s.claim(ctx, kind, slug, owner)
	if err != nil || !ok {
		return "", err
	}
	return slug, nil
}
