// Package transfer copies the records of one store into another over small
// interfaces, so that neither store imports the other: `sift backup` of a
// cluster copies the cluster (wvstore) into a memory store (engine) and
// writes that store's snapshot. It imports no store.
package transfer

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/sift-search/sift/record"
)

// Source is a store that reads out everything it holds (wvstore.Store).
type Source interface {
	// ExportSources returns the sources, each with its crawl cursor and
	// creation time, and the settings (nil when none are set).
	ExportSources() ([]record.Source, map[string]string, error)
	// ExportChannels, ExportMessages and ExportDocuments call fn with
	// every record of their kind, a page at a time.
	ExportChannels(fn func([]record.Channel) error) error
	ExportMessages(fn func([]record.Message) error) error
	ExportDocuments(fn func([]record.Document) error) error
}

// Sink is a store that takes records as another store holds them: sources
// keep their creation times, channels and documents their slugs (gaps
// included). *engine.Engine is one.
type Sink interface {
	Source(id string) (record.Source, bool)
	ChannelByID(sourceID, id string) (record.Channel, bool)
	UpdateSettings(changes map[string]string) (map[string]string, error)
	PutSourceKeepingCreated(s record.Source) (record.Source, error)
	PutChannelsKeepingSlugs(chs []record.Channel) ([]record.Channel, error)
	PutMessages(msgs []record.Message) (int, error)
	PutDocumentsKeepingSlugs(docs []record.Document) ([]record.Document, error)
}

// channelBatch is how many channels one write of Copy holds.
const channelBatch = 1000

// Copy copies every record of src into dst: sources, settings, channels,
// messages, documents, in that order. A record whose source or channel is
// gone by the time it is read (deleted while the copy runs) is skipped.
func Copy(dst Sink, src Source) error {
	srcs, set, err := src.ExportSources()
	if err != nil {
		return err
	}
	if len(set) > 0 {
		if _, err := dst.UpdateSettings(set); err != nil {
			return fmt.Errorf("copy the settings: %w", err)
		}
	}
	for _, s := range srcs {
		if _, err := dst.PutSourceKeepingCreated(s); err != nil {
			return fmt.Errorf("copy source %q: %w", s.ID, err)
		}
	}
	if err := copyChannels(dst, src); err != nil {
		return err
	}
	err = src.ExportMessages(func(page []record.Message) error {
		msgs := page[:0]
		for _, m := range page {
			if _, ok := dst.ChannelByID(m.SourceID, m.ChannelID); ok { // else its channel went meanwhile
				msgs = append(msgs, m)
			}
		}
		// One source at a time, as the engine logs them.
		slices.SortStableFunc(msgs, func(a, b record.Message) int { return cmp.Compare(a.SourceID, b.SourceID) })
		if _, err := dst.PutMessages(msgs); err != nil {
			return fmt.Errorf("copy %d messages: %w", len(msgs), err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return src.ExportDocuments(func(page []record.Document) error {
		docs := page[:0]
		for _, d := range page {
			if _, ok := dst.Source(d.SourceID); ok {
				docs = append(docs, d)
			}
		}
		if _, err := dst.PutDocumentsKeepingSlugs(docs); err != nil {
			return fmt.Errorf("copy %d documents: %w", len(docs), err)
		}
		return nil
	})
}

// copyChannels copies the channels of the sources copied, all read before
// any is written.
func copyChannels(dst Sink, src Source) error {
	var chs []record.Channel
	err := src.ExportChannels(func(page []record.Channel) error {
		for _, ch := range page {
			if _, ok := dst.Source(ch.SourceID); ok { // else its source's deletion is under way
				chs = append(chs, ch)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for start := 0; start < len(chs); start += channelBatch {
		if _, err := dst.PutChannelsKeepingSlugs(chs[start:min(start+channelBatch, len(chs))]); err != nil {
			return fmt.Errorf("copy channels: %w", err)
		}
	}
	return nil
}
