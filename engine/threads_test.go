package engine

import (
	"slices"
	"testing"
	"time"

	"github.com/sift-search/sift/record"
)

// TestOrphanThreads: a thread is an orphan when no visible message starts
// it: its starting message is missing, or in another channel, or its
// channel is missing or hidden from the caller.
func TestOrphanThreads(t *testing.T) {
	e := openMem(t)
	if _, err := e.PutSource(record.Source{ID: "s", Name: "S", Type: "discord", Enabled: true}); err != nil {
		t.Fatal(err)
	}
	_, err := e.PutChannels([]record.Channel{
		{SourceID: "s", ID: "c1", Name: "general"},
		{SourceID: "s", ID: "c2", Name: "other"},
		{SourceID: "s", ID: "dm", Name: "dm", Private: true},
		{SourceID: "s", ID: "m1", Name: "linked", ParentID: "c1", Kind: "thread"},
		{SourceID: "s", ID: "gone", Name: "no start", ParentID: "c1", Kind: "thread"},
		{SourceID: "s", ID: "m2", Name: "started elsewhere", ParentID: "c1", Kind: "thread"},
		{SourceID: "s", ID: "lost", Name: "no channel", ParentID: "nowhere", Kind: "thread"},
		{SourceID: "s", ID: "secret", Name: "private thread", ParentID: "c1", Kind: "thread", Private: true},
		{SourceID: "s", ID: "m3", Name: "in the dm", ParentID: "dm", Kind: "thread"},
	})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	_, err = e.PutMessages([]record.Message{
		{SourceID: "s", ChannelID: "c1", ID: "m1", Author: "a", Content: "starts linked", Timestamp: t0},
		{SourceID: "s", ChannelID: "c2", ID: "m2", Author: "a", Content: "in another channel", Timestamp: t0},
		{SourceID: "s", ChannelID: "dm", ID: "m3", Author: "a", Content: "starts a thread in the DM", Timestamp: t0},
	})
	if err != nil {
		t.Fatal(err)
	}
	names := func(private bool) []string {
		var out []string
		for _, c := range e.OrphanThreads("s", private) {
			out = append(out, c.Name)
		}
		return out
	}
	if got, want := names(false), []string{"no channel", "no start", "started elsewhere"}; !slices.Equal(got, want) {
		t.Errorf("public orphans %v, want %v", got, want)
	}
	if got, want := names(true), []string{"no channel", "no start", "private thread", "started elsewhere"}; !slices.Equal(got, want) {
		t.Errorf("all orphans %v, want %v", got, want)
	}
	// An operator opens the DM's thread but not the DM: no public page
	// shows its starting message.
	if _, err := e.SetChannelVisibility("s", "m3", record.VisibilityPublic); err != nil {
		t.Fatal(err)
	}
	if got := names(false); !slices.Contains(got, "in the dm") {
		t.Errorf("public orphans %v lack the public thread of the hidden DM", got)
	}
	if got := names(true); slices.Contains(got, "in the dm") {
		t.Errorf("orphans with credentials %v hold the DM's thread", got)
	}
	if got := e.OrphanThreads("other", true); len(got) != 0 {
		t.Errorf("another source's orphans: %v", got)
	}
}
