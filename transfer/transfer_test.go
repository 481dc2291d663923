package transfer_test

import (
	"testing"
	"time"

	"github.com/sift-search/sift/engine"
	"github.com/sift-search/sift/record"
	"github.com/sift-search/sift/transfer"
)

// pages is a Source that reads out fixed records, one record a page.
type pages struct {
	srcs []record.Source
	set  map[string]string
	chs  []record.Channel
	msgs []record.Message
	docs []record.Document
}

func (p *pages) ExportSources() ([]record.Source, map[string]string, error) {
	return p.srcs, p.set, nil
}
func (p *pages) ExportChannels(fn func([]record.Channel) error) error   { return each(p.chs, fn) }
func (p *pages) ExportMessages(fn func([]record.Message) error) error   { return each(p.msgs, fn) }
func (p *pages) ExportDocuments(fn func([]record.Document) error) error { return each(p.docs, fn) }

func each[T any](recs []T, fn func([]T) error) error {
	for i := range recs {
		if err := fn([]T{recs[i]}); err != nil {
			return err
		}
	}
	return nil
}

// TestCopyKeepsSlugsAndCreation: a copy keeps sources' creation times and
// cursors, the settings, channels' and documents' slugs, and skips records
// whose source or channel is gone.
func TestCopyKeepsSlugsAndCreation(t *testing.T) {
	created := time.Date(2025, 6, 1, 9, 0, 0, 0, time.UTC)
	src := &pages{
		srcs: []record.Source{{ID: "s", Name: "Acme", Type: "slack", Enabled: true, CreatedAt: created, Cursor: "cur-7"}},
		set:  map[string]string{"site_name": "Acme search"},
		chs: []record.Channel{
			{SourceID: "s", ID: "c1", Name: "general", Slug: "general-3", CreatedAt: created},
			{SourceID: "gone", ID: "c2", Name: "orphan"},
		},
		msgs: []record.Message{
			{SourceID: "s", ChannelID: "c1", ID: "m1", Author: "ana", Content: "hello", Timestamp: created},
			{SourceID: "s", ChannelID: "nochannel", ID: "m2", Author: "bo", Content: "lost", Timestamp: created},
		},
		docs: []record.Document{
			{ID: record.DocumentID("s", "k"), SourceID: "s", Key: "k", Title: "Guide", Slug: "guide-2", Content: "text", CreatedAt: created, UpdatedAt: created},
			{ID: record.DocumentID("gone", "k"), SourceID: "gone", Key: "k", Title: "Orphan", Content: "text"},
		},
	}
	eng, err := engine.Open(engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	if err := transfer.Copy(eng, src); err != nil {
		t.Fatal(err)
	}
	s, ok := eng.Source("s")
	if !ok || !s.CreatedAt.Equal(created) || s.Cursor != "cur-7" {
		t.Errorf("source %+v", s)
	}
	if got := eng.Settings()["site_name"]; got != "Acme search" {
		t.Errorf("setting %q", got)
	}
	if ch, ok := eng.ChannelByID("s", "c1"); !ok || ch.Slug != "general-3" {
		t.Errorf("channel %+v", ch)
	}
	if _, ok := eng.ChannelByID("gone", "c2"); ok {
		t.Error("a channel of a missing source was copied")
	}
	if d, ok := eng.Document(record.DocumentID("s", "k")); !ok || d.Slug != "guide-2" {
		t.Errorf("document %+v", d)
	}
	if _, ok := eng.Document(record.DocumentID("gone", "k")); ok {
		t.Error("a document of a missing source was copied")
	}
	if c := eng.Counts(true); c.Messages != 1 || c.Documents != 1 {
		t.Errorf("counts %+v", c)
	}
}
