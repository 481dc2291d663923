package semantic

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"
)

// TestSearchCatchesUpItself: a search sees a write acknowledged before it
// even when the indexer's goroutine does nothing (here: stopped): the
// search does the chunking itself, and is not stale.
func TestSearchCatchesUpItself(t *testing.T) {
	e := openMem(t)
	e.Wait(t.Context())
	e.Index.Stop()
	if _, err := e.PutDocuments([]Document{{Title: "Quokka care", Content: "Feed the quokka at dawn with fresh leaves."}}); err != nil {
		t.Fatal(err)
	}
	res, err := e.SemanticSearch(t.Context(), Request{Query: "when to feed the quokka", Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stale || len(res.Hits) == 0 || res.Hits[0].Title != "Quokka care" {
		t.Fatalf("stale %v, hits %+v", res.Stale, res.Hits)
	}
}

// TestSearchWaitsNotForLaterWrites: a channel written to all the time does
// not hold a search up until the writes stop: the search waits for what
// was written before it, and returns while the writer goes on.
func TestSearchWaitsNotForLaterWrites(t *testing.T) {
	e := openMem(t, func(o *Options) { o.FreshWait = time.Minute })
	e.PutSource(Source{ID: "chat", Name: "Chat", Type: "slack", Enabled: true})
	e.PutChannels([]Channel{{SourceID: "chat", ID: "c1", Name: "general"}})
	e.Wait(t.Context())
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var written atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ctx.Err() == nil; i++ {
			msg := Message{SourceID: "chat", ChannelID: "c1", ID: fmt.Sprint(i), Author: "ana",
				Content: fmt.Sprintf("status update %d about the wombat rollout", i), Timestamp: t0.Add(time.Duration(i) * time.Second)}
			if _, err := e.PutMessages([]Message{msg}); err != nil {
				t.Error(err)
				return
			}
			written.Add(1)
		}
	}()
	for written.Load() < 50 {
		time.Sleep(time.Millisecond)
	}
	for range 5 {
		res, err := e.SemanticSearch(t.Context(), Request{Query: "wombat rollout", Limit: 3})
		if err != nil || res.Stale || len(res.Hits) == 0 {
			t.Fatalf("search while the channel is written to: %v, %+v", err, res)
		}
	}
	if ctx.Err() != nil {
		t.Fatal("the searches returned only once the writer had stopped")
	}
	cancel()
	<-done
}

// BenchmarkCatchUpIdle: what read-your-writes costs a search when the index
// is caught up (the usual case): a look at the change feed.
func BenchmarkCatchUpIdle(b *testing.B) {
	e := openMem(b)
	if _, err := e.PutDocuments([]Document{{Title: "Quokka care", Content: "Feed the quokka at dawn."}}); err != nil {
		b.Fatal(err)
	}
	e.Wait(b.Context())
	b.ReportAllocs()
	for b.Loop() {
		if !e.catchUp(b.Context(), time.Second) {
			b.Fatal("stale")
		}
	}
}
