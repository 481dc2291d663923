package semantic

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sift-search/sift/engine"
	"github.com/sift-search/sift/follow"
	"github.com/sift-search/sift/record"
)

// The engine's types, as these tests (moved from the engine's) name them.
type (
	Document = record.Document
	Message  = record.Message
	Source   = record.Source
	Channel  = record.Channel
)

const UploadsSourceID = record.UploadsSourceID

var DocumentID = record.DocumentID

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// testEngine is a store with its semantic index following it. The index's
// unexported fields and methods are the tests' (e.mu, e.st, e.idle…).
type testEngine struct {
	*engine.Engine
	*Index
}

func (e testEngine) SemanticSearch(ctx context.Context, req Request) (*Result, error) {
	return e.Index.Search(ctx, req)
}

// live reports whether chunk c's records still exist.
func (e testEngine) live(c *chunkRec) (ok bool) {
	e.Engine.Read(func(v follow.View) { ok = chunkLive(v, c) })
	return ok
}

// open opens a store (in dir, or in memory) with an index, closed with the
// test.
func open(t testing.TB, dir string, mod ...func(*Options)) testEngine {
	t.Helper()
	var so Options
	for _, m := range mod {
		m(&so)
	}
	e, x, err := Open(engine.Options{DataDir: dir, NoSync: true}.OpenWith, so)
	if err != nil {
		t.Fatal(err)
	}
	return testEngine{e, x}
}

func openMem(t testing.TB, mod ...func(*Options)) testEngine {
	t.Helper()
	e := open(t, "", mod...)
	t.Cleanup(func() { e.Close() })
	return e
}

// openDir opens a store in dir; the caller closes it.
func openDir(t testing.TB, dir string, mod ...func(*Options)) testEngine {
	t.Helper()
	return open(t, dir, mod...)
}

// seed adds a source "chat" with channels "general" and "help" and messages.
func seed(t testing.TB, e testEngine, msgs ...string) {
	t.Helper()
	if _, err := e.PutSource(Source{ID: "chat", Name: "Acme Chat", Type: "discord", Enabled: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.PutChannels([]Channel{
		{SourceID: "chat", ID: "c1", Name: "general"},
		{SourceID: "chat", ID: "c2", Name: "help"},
	}); err != nil {
		t.Fatal(err)
	}
	var batch []Message
	for i, m := range msgs {
		author, content, _ := strings.Cut(m, ": ")
		batch = append(batch, Message{
			SourceID: "chat", ChannelID: []string{"c1", "c2"}[i%2], ID: fmt.Sprint(100 + i),
			Author: author, Content: content, Timestamp: t0.Add(time.Duration(i) * time.Hour),
		})
	}
	if _, err := e.PutMessages(batch); err != nil {
		t.Fatal(err)
	}
}

// notes returns n short documents, "Note i", each about one of four
// subjects and one of three details.
func notes(n int) []Document {
	var docs []Document
	for i := 0; i < n; i++ {
		docs = append(docs, Document{Title: fmt.Sprintf("Note %d", i),
			Content: fmt.Sprintf("Note %d is about %s and %s.", i, []string{"schedules", "webhooks", "pools", "backups"}[i%4], []string{"retries", "time zones", "signatures"}[i%3])})
	}
	return docs
}
