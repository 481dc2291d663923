package engine

import (
	"reflect"
	"testing"
	"time"

	"github.com/sift-search/sift/internal/bin"
	"github.com/sift-search/sift/record"
)

// TestSourceLastImportRecord: a source's last import goes through the log
// and a snapshot as it was given, and a record written before imports were
// recorded (it ends after the opted-out usernames) still reads.
func TestSourceLastImportRecord(t *testing.T) {
	start := time.Date(2026, 1, 2, 15, 4, 5, 123456000, time.UTC)
	src := record.Source{ID: "acme", Name: "Acme Slack", Type: "slack", Enabled: true, Visibility: record.VisibilityPublic, Config: map[string]any{},
		OptOuts: []string{"eve"}, ChannelVisibility: map[string]string{}, ExcludedChannels: []string{}, LastCrawl: &record.CrawlInfo{JobID: "j_c", Status: "ok", StartedAt: start, FinishedAt: start.Add(time.Second)},
		LastImport: &record.ImportInfo{JobID: "j_i", Status: "ok", StartedAt: start, FinishedAt: start.Add(2 * time.Second), File: "acme.zip",
			Format: "slack", ImportCounts: record.ImportCounts{Channels: 2, Messages: 14, Stored: 9, Updated: 1, Unchanged: 0,
				Skipped: map[string]int{"unsupported subtype channel_join": 2, "duplicate id in file": 1, "empty message": 1}}}}

	var e bin.Enc
	if err := encodeSource(&e, &src); err != nil {
		t.Fatal(err)
	}
	d := &bin.Dec{B: e.B}
	if got := decodeSource(d, true); d.Done() != nil || !reflect.DeepEqual(got, src) {
		t.Fatalf("round trip: %v\n got %+v\nwant %+v", d.Done(), got.LastImport, src.LastImport)
	}

	// As written before: no hasLastImport at the end.
	old := src
	old.LastImport = nil
	e.B = e.B[:0]
	encodeSource(&e, &old)
	if e.B[len(e.B)-1] != 0 {
		t.Fatal("a source without a last import does not end with false")
	}
	d = &bin.Dec{B: e.B[:len(e.B)-1]}
	if got := decodeSource(d, true); d.Done() != nil || !reflect.DeepEqual(got, old) {
		t.Fatalf("an older record: %v %+v", d.Done(), got)
	}

	// Through the log and a snapshot.
	dir := t.TempDir()
	eng := openDir(t, dir)
	if _, err := eng.PutSource(src); err != nil {
		t.Fatal(err)
	}
	stored, _ := eng.Source("acme")
	stored.LastImport.Skipped["empty message"] = 99 // a copy: the engine's own is untouched
	if again, _ := eng.Source("acme"); !reflect.DeepEqual(again.LastImport, src.LastImport) {
		t.Fatalf("stored: %+v", again.LastImport)
	}
	eng.Close()
	for range 2 {
		eng = openDir(t, dir)
		if got, _ := eng.Source("acme"); !reflect.DeepEqual(got.LastImport, src.LastImport) {
			t.Fatalf("reopened: %+v", got.LastImport)
		}
		if err := eng.Snapshot(); err != nil {
			t.Fatal(err)
		}
		eng.Close()
	}
}
