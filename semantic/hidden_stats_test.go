package semantic

import (
	"context"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/sift-search/sift/analysis"
	"github.com/sift-search/sift/index"
	"github.com/sift-search/sift/record"
	"github.com/sift-search/sift/semantic/fusion"
)

// chunkScores returns the BM25 scores of the chunk index for q, by chunk
// slot, as a semantic search ranks its lexical candidates; and it checks
// that the index hides exactly the chunks of st.hidden.
func chunkScores(t *testing.T, e testEngine, q string, private bool) map[uint32]float32 {
	t.Helper()
	e.mu.RLock()
	defer e.mu.RUnlock()
	st := e.st
	for i := range st.chunks {
		if slot := uint32(i); st.chunkIdx.Contains(slot) && st.hidden.Contains(slot) != st.chunkIdx.Hidden(slot) {
			t.Fatalf("chunk %d: hidden %v, in the index %v", i, st.hidden.Contains(slot), st.chunkIdx.Hidden(slot))
		}
	}
	out := map[uint32]float32{}
	for _, h := range st.chunkIdx.Search(&index.Query{Terms: analysis.QueryTerms(q), Public: !private}, 1000).Hits {
		out[h.ID] = h.Score
	}
	return out
}

// lexicalScores returns the scores of a lexical semantic search by title.
func lexicalScores(t *testing.T, e testEngine, q string) map[string]float64 {
	t.Helper()
	res, err := e.Index.Search(context.Background(), Request{Query: q, Limit: MaxLimit, Mode: fusion.ModeLexical})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, h := range res.Hits {
		out[h.Title+h.Channel] = h.Score
	}
	return out
}

// TestLexicalStatsIgnoreHiddenChunks: the BM25 a public semantic search
// fuses ranks public chunks by the statistics of public chunks alone.
func TestLexicalStatsIgnoreHiddenChunks(t *testing.T) {
	dir := t.TempDir()
	e := openDir(t, dir)
	defer func() { e.Close() }()
	if _, err := e.PutSource(Source{ID: "s", Name: "S", Type: "slack", Enabled: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.PutDocuments([]Document{
		{SourceID: "s", Key: "a.md", Title: "Deploy guide", Content: "how to deploy the service, and the rollback script when it fails"},
		{SourceID: "s", Key: "b.md", Title: "Runbook", Content: "rollback only; never deploy on friday"},
		{SourceID: "s", Key: "c.md", Title: "Rollback notes", Content: "rollback, rollback and rollback again"},
	}); err != nil {
		t.Fatal(err)
	}
	waitSem(t, e)
	const q = "deploy rollback"
	wantChunks, wantHits := chunkScores(t, e, q, false), lexicalScores(t, e, q)
	if len(wantChunks) != 3 || len(wantHits) != 3 {
		t.Fatalf("chunks %v, hits %v", wantChunks, wantHits)
	}
	check := func(stage string) {
		t.Helper()
		waitSem(t, e)
		if got := chunkScores(t, e, q, false); !maps.Equal(got, wantChunks) {
			t.Fatalf("%s: public chunk scores %v, want %v", stage, got, wantChunks)
		}
		if got := lexicalScores(t, e, q); !maps.Equal(got, wantHits) {
			t.Fatalf("%s: public hits %v, want %v", stage, got, wantHits)
		}
	}

	// A private source's documents and a private channel of the public
	// source, full of one of the words.
	if _, err := e.PutSource(Source{ID: "p", Name: "P", Type: "upload", Enabled: true, Visibility: record.VisibilityPrivate}); err != nil {
		t.Fatal(err)
	}
	var docs []Document
	for i := range 20 {
		docs = append(docs, Document{SourceID: "p", Key: fmt.Sprint(i, ".md"), Title: fmt.Sprint("Secret ", i), Content: "deploy deploy deploy the secret"})
	}
	priv, err := e.PutDocuments(docs)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.PutChannels([]Channel{{SourceID: "s", ID: "dm", Name: "dm", Private: true}}); err != nil {
		t.Fatal(err)
	}
	var msgs []Message
	for i := range 30 {
		msgs = append(msgs, Message{SourceID: "s", ChannelID: "dm", ID: fmt.Sprint("m", i), Author: "ana",
			Content: "deploy it now", Timestamp: t0.Add(time.Duration(i) * time.Minute)})
	}
	if _, err := e.PutMessages(msgs); err != nil {
		t.Fatal(err)
	}
	check("private content added")
	if got := chunkScores(t, e, q, true); len(got) <= len(wantChunks) {
		t.Fatalf("a private search misses private chunks: %v", got)
	}

	for _, d := range priv[:10] {
		if err := e.DeleteDocument(d.ID); err != nil {
			t.Fatal(err)
		}
	}
	check("private documents deleted")

	// Made public, the source counts; private again, it does not.
	if _, err := e.UpdateSource("p", func(s *Source) error { s.Visibility = record.VisibilityPublic; return nil }); err != nil {
		t.Fatal(err)
	}
	waitSem(t, e)
	if got := lexicalScores(t, e, q); maps.Equal(got, wantHits) {
		t.Fatalf("a public source does not count: %v", got)
	}
	if _, err := e.UpdateSource("p", func(s *Source) error { s.Visibility = record.VisibilityPrivate; return nil }); err != nil {
		t.Fatal(err)
	}
	check("made private again")

	e.Close()
	e = openDir(t, dir)
	check("after a restart")
}
