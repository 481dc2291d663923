package engine

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/sift-search/sift/internal/bin"
	"github.com/sift-search/sift/record"
)

// someInsights are rows of every shape: totals, searches and questions,
// with and without credentials, with flags counted.
var someInsights = []record.Insight{
	{Day: 20500, Endpoint: 2, Count: 7, NoResults: 2},
	{Day: 20500, Endpoint: 2, Text: "webhook signature", Count: 5},
	{Day: 20500, Endpoint: 2, Text: "nothing here", Count: 2, NoResults: 2},
	{Day: 20501, Endpoint: 4, Ask: true, Count: 3, Unanswered: 1},
	{Day: 20501, Endpoint: 4, Ask: true, Text: "why did my job run twice?", Count: 3, Unanswered: 1},
	{Day: 20501, Endpoint: 5, Ask: true, Authenticated: true, Text: "kéy rotation", Count: 1},
}

func sortedInsights(rows []record.Insight) []record.Insight {
	rows = slices.Clone(rows)
	slices.SortFunc(rows, compareInsights)
	return rows
}

// TestInsightsPersist: rows survive a log replay after a crash and a
// snapshot; a row of count 0 deletes; bad rows store nothing.
func TestInsightsPersist(t *testing.T) {
	dir := t.TempDir()
	e := openDir(t, dir)
	if err := e.PutInsights(someInsights); err != nil {
		t.Fatal(err)
	}
	gone := someInsights[2]
	gone.Count, gone.NoResults = 0, 0
	moved := someInsights[1]
	moved.Count = 9
	if err := e.PutInsights([]record.Insight{gone, moved}); err != nil {
		t.Fatal(err)
	}
	want := sortedInsights(slices.Concat(someInsights[:1], []record.Insight{moved}, someInsights[3:]))
	if got := e.Insights(); !slices.Equal(got, want) {
		t.Fatalf("stored %+v, want %+v", got, want)
	}
	for _, bad := range []record.Insight{
		{Day: 1, Text: strings.Repeat("x", record.MaxInsightTextBytes+1), Count: 1},
		{Day: 1, Text: "\xff", Count: 1},
		{Day: 1, Text: "a", Count: 1, NoResults: 2},
		{Day: 1, Text: "a", Count: 1, Unanswered: 2},
	} {
		if err := e.PutInsights([]record.Insight{someInsights[0], bad}); !errors.Is(err, record.ErrInvalid) {
			t.Errorf("PutInsights(%+v) = %v", bad, err)
		}
	}
	e.crash()
	e = openDir(t, dir)
	if got := e.Insights(); !slices.Equal(got, want) {
		t.Fatalf("after replay %+v, want %+v", got, want)
	}
	if err := e.Snapshot(); err != nil {
		t.Fatal(err)
	}
	e.crash()
	e = openDir(t, dir)
	defer e.Close()
	if got := e.Insights(); !slices.Equal(got, want) {
		t.Fatalf("after a snapshot %+v, want %+v", got, want)
	}
	if s := e.LastSnapshot(); s == nil || s.Seq != e.Seq() {
		t.Fatalf("snapshot %+v at seq %d", s, e.Seq())
	}
}

// TestInsightsTakeNoSnapshot: writes of insights alone make no snapshot
// due, not even the final one; the log keeps them for the next start.
func TestInsightsTakeNoSnapshot(t *testing.T) {
	dir := t.TempDir()
	e := openDir(t, dir)
	if _, err := e.PutDocuments([]record.Document{{Title: "t", Content: "c"}}); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e = openDir(t, dir)
	snap := e.LastSnapshot().Seq
	content := e.ContentSeq()
	if err := e.PutInsights(someInsights); err != nil {
		t.Fatal(err)
	}
	// Insights advance the log, not what the pages show.
	if e.Seq() <= content || e.ContentSeq() != content {
		t.Errorf("after insights: Seq %d, ContentSeq %d (was %d)", e.Seq(), e.ContentSeq(), content)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e = openDir(t, dir)
	defer e.Close()
	if got := e.LastSnapshot().Seq; got != snap {
		t.Errorf("a snapshot at %d after insights alone (was %d)", got, snap)
	}
	if got := e.ContentSeq(); got != content {
		t.Errorf("replayed insights moved ContentSeq to %d (was %d)", got, content)
	}
	if got := e.Insights(); !slices.Equal(got, sortedInsights(someInsights)) {
		t.Errorf("replayed %+v", got)
	}
}

// TestInsightsSnapshotChecks: a snapshot whose insight frames repeat a
// key is refused; InspectSnapshot counts the rows.
func TestInsightsSnapshotChecks(t *testing.T) {
	e := openMem(t)
	if err := e.PutInsights(someInsights); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := writeLocked(e, &b, 3); err != nil {
		t.Fatal(err)
	}
	sum, err := InspectSnapshot(bytes.NewReader(b.Bytes()), nil)
	if err != nil || sum.Insights != len(someInsights) || sum.Version != 7 {
		t.Fatalf("inspect: %+v %v", sum, err)
	}
	// The same key twice: the block of rows rewritten to hold one row
	// twice, the meta frame's count kept.
	e2 := openMem(t)
	if err := e2.PutInsights(someInsights[:2]); err != nil {
		t.Fatal(err)
	}
	var raw bytes.Buffer
	e2.writeMu.Lock()
	e2.st.writeFrames(&frameWriter{w: &raw}, 3, e2.opts.TitleWeight, nil)
	e2.writeMu.Unlock()
	var dup []byte
	found := false
	for b := raw.Bytes(); len(b) >= frameHeaderSize; {
		n := int(binary.LittleEndian.Uint32(b))
		body := b[frameHeaderSize : frameHeaderSize+n]
		payload := body[1:]
		if body[0] == frameInsights {
			var enc bin.Enc
			enc.Uvarint(2)
			encodeInsight(&enc, &someInsights[1])
			encodeInsight(&enc, &someInsights[1])
			payload, found = enc.B, true
		}
		dup = appendFrame(dup, body[0], payload)
		b = b[frameHeaderSize+n:]
	}
	if !found {
		t.Fatal("no insights frame")
	}
	if _, _, err := readBody(&frameReader{r: bytes.NewReader(dup)}, snapHeader{version: snapVersion, seq: 3}, DefaultOptions()); err == nil ||
		!strings.Contains(err.Error(), "duplicates") {
		t.Fatalf("duplicate rows: %v", err)
	}
}

// TestInsightsInBatches: a put over one record's rows is logged in
// several, and all of them replay.
func TestInsightsInBatches(t *testing.T) {
	dir := t.TempDir()
	e := openDir(t, dir)
	rows := make([]record.Insight, insightsPerOp+10)
	for i := range rows {
		rows[i] = record.Insight{Day: 20000, Endpoint: 1, Text: fmt.Sprint("q", i), Count: uint32(i + 1)}
	}
	before := e.Seq()
	if err := e.PutInsights(rows); err != nil {
		t.Fatal(err)
	}
	if got := e.Seq() - before; got != 2 {
		t.Errorf("%d records for %d rows", got, len(rows))
	}
	e.crash()
	e = openDir(t, dir)
	defer e.Close()
	if got := e.Insights(); !slices.Equal(got, sortedInsights(rows)) {
		t.Errorf("replayed %d rows, want %d", len(got), len(rows))
	}
}
