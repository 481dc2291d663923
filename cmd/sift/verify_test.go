package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sift-search/sift/engine"
)

func TestVerifyCommand(t *testing.T) {
	dir := t.TempDir()
	eng, err := engine.Open(engine.Options{DataDir: dir, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	eng.PutSource(engine.Source{ID: "chat", Name: "Chat", Type: "slack", Enabled: true})
	eng.PutChannels([]engine.Channel{{SourceID: "chat", ID: "c1", Name: "general"}, {SourceID: "chat", ID: "c2", Name: "random"}})
	now := time.Now()
	if _, err := eng.PutMessages([]engine.Message{
		{SourceID: "chat", ChannelID: "c1", ID: "1", Author: "ana", Content: "alpha", Timestamp: now},
		{SourceID: "chat", ChannelID: "c1", ID: "2", Author: "bo", Content: "beta", Timestamp: now},
		{SourceID: "chat", ChannelID: "c2", ID: "3", Author: "bo", Content: "gamma", Timestamp: now},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.PutDocuments([]engine.Document{{Title: "guide", Content: "how to"}}); err != nil {
		t.Fatal(err)
	}
	if err := eng.Close(); err != nil {
		t.Fatal(err)
	}
	snap := eng.LastSnapshot()
	out, err := run(t, "verify", snap.Path)
	// Two sources: the built-in uploads source and chat.
	for _, want := range []string{"verified", "format version  4", "2 sources, 2 channels, 3 messages, 1 documents, 0 chunks",
		"created         " + now.UTC().Format("2006-01-02"), "bytes"} {
		if err != nil || !strings.Contains(out, want) {
			t.Fatalf("verify a good snapshot: %v, want %q in\n%s", err, want, out)
		}
	}
	if !strings.Contains(out, "sequence") || !strings.Contains(out, " "+strconv.FormatUint(snap.Seq, 10)+"\n") {
		t.Errorf("verify does not name the sequence number %d:\n%s", snap.Seq, out)
	}

	b, _ := os.ReadFile(snap.Path)
	b[len(b)/2] ^= 0xff
	bad := filepath.Join(t.TempDir(), "bad.sift")
	os.WriteFile(bad, b, 0o600)
	if out, err := run(t, "verify", bad); err == nil || !strings.Contains(out, "damaged") {
		t.Fatalf("verify a damaged file: %v\n%s", err, out)
	}
	os.WriteFile(bad, b[:20], 0o600)
	if out, err := run(t, "verify", bad); err == nil || !strings.Contains(out, "header") {
		t.Fatalf("verify a truncated file: %v\n%s", err, out)
	}
	if out, err := run(t, "verify"); err == nil || !strings.Contains(out, "usage") {
		t.Fatalf("verify without a file: %v\n%s", err, out)
	}
}
