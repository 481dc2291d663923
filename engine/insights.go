package engine

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/sift-search/sift/internal/bin"
	"github.com/sift-search/sift/record"
)

// Bounds of what one log record or snapshot block of insights holds.
const (
	insightsPerOp    = 4096 // rows per log record
	insightsPerFrame = 4096 // rows per snapshot block
)

// The insights table: how often each query or question was searched or
// asked, per day, kept for the insights package, which owns what the rows
// mean, aggregates them and bounds them. The engine keeps the rows by key,
// checks their fields and persists them as it persists everything else:
// log records (kind 13) and snapshot frames (17, from format version 7).
// A put carries absolute values, so a record replayed over a snapshot that
// already holds it changes nothing.
//
// Insights are not content: a write of them gives the follower nothing to
// do and alone does not make a snapshot due at SNAPSHOT_INTERVAL (the log
// keeps them until a snapshot is taken for another reason, or the log
// passes SnapshotLogBytes).

type insightKey struct {
	day      int32
	endpoint uint8
	flags    uint8 // insightAsk | insightAuth
	text     string
}

const (
	insightAsk  = 1 << 0
	insightAuth = 1 << 1
)

type insightCounts struct{ count, noResults, unanswered uint32 }

// keyOf is the key of insight row in.
func keyOf(in *record.Insight) insightKey {
	k := insightKey{day: in.Day, endpoint: in.Endpoint, text: in.Text}
	if in.Ask {
		k.flags |= insightAsk
	}
	if in.Authenticated {
		k.flags |= insightAuth
	}
	return k
}

func (k insightKey) row(c insightCounts) record.Insight {
	return record.Insight{Day: k.day, Endpoint: k.endpoint, Ask: k.flags&insightAsk != 0, Authenticated: k.flags&insightAuth != 0,
		Text: k.text, Count: c.count, NoResults: c.noResults, Unanswered: c.unanswered}
}

func compareInsights(a, b record.Insight) int {
	return cmp.Or(cmp.Compare(a.Day, b.Day), cmp.Compare(a.Endpoint, b.Endpoint), compareBool(a.Ask, b.Ask),
		compareBool(a.Authenticated, b.Authenticated), strings.Compare(a.Text, b.Text))
}

func compareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// Insights returns every row of the insights table in key order. O(rows).
// It waits for writers (and snapshots): the table is guarded by writeMu
// alone, so that writing it never holds searches up.
func (e *instance) Insights() []record.Insight {
	e.writeMu.Lock()
	defer e.writeMu.Unlock()
	return e.st.insightRows()
}

// insightRows lists the table in key order; the caller holds writeMu.
func (st *state) insightRows() []record.Insight {
	rows := make([]record.Insight, 0, len(st.insights))
	for k, c := range st.insights {
		rows = append(rows, k.row(c))
	}
	slices.SortFunc(rows, compareInsights)
	return rows
}

// PutInsights stores rows: each replaces the row of its key, and one of
// Count 0 deletes it. The rows are logged in records of up to 4096, each
// applied whole, and synced before it returns; a failure part-way leaves
// the earlier records stored. A row whose text is over
// MaxInsightTextBytes or not UTF-8, or whose counts exceed its Count, is
// ErrInvalid and nothing is stored.
func (e *instance) PutInsights(rows []record.Insight) error {
	for i := range rows {
		if err := checkInsight(&rows[i]); err != nil {
			return err
		}
	}
	if len(rows) == 0 {
		return nil
	}
	var last uint64
	for start := 0; start < len(rows); start += insightsPerOp {
		e.writeMu.Lock()
		seq, err := e.commit(&op{kind: opPutInsights, insights: rows[start:min(start+insightsPerOp, len(rows))]})
		e.writeMu.Unlock()
		if err != nil {
			return err
		}
		last = seq
	}
	return e.sync(last)
}

func checkInsight(in *record.Insight) error {
	if err := record.CheckText("insight text", in.Text, record.MaxInsightTextBytes, false, false); err != nil {
		return err
	}
	if in.NoResults > in.Count || in.Unanswered > in.Count {
		return invalidf("an insight counts more searches without results or unanswered questions than in all")
	}
	return nil
}

// applyInsights applies a put of insight rows; the caller holds writeMu,
// which alone guards the table (no search reads it, so mu is not taken).
func (e *applier) applyInsights(rows []record.Insight) {
	for i := range rows {
		r := &rows[i]
		if r.Count == 0 {
			delete(e.st.insights, keyOf(r))
		} else {
			e.st.insights[keyOf(r)] = insightCounts{r.Count, r.NoResults, r.Unanswered}
		}
	}
}

// encodeInsight writes a row: varint day, u8 endpoint, u8 flags (1 a
// question, 2 authenticated), string text, uvarint count, no results,
// unanswered.
func encodeInsight(e *bin.Enc, in *record.Insight) {
	k := keyOf(in)
	e.Varint(int64(k.day))
	e.U8(k.endpoint)
	e.U8(k.flags)
	e.String(k.text)
	e.Uvarint(uint64(in.Count))
	e.Uvarint(uint64(in.NoResults))
	e.Uvarint(uint64(in.Unanswered))
}

// decodeInsight reads what encodeInsight wrote, refusing what it never
// writes (a day or count out of range, unknown flags, text that is not
// UTF-8 or too long).
func decodeInsight(d *bin.Dec) record.Insight {
	day := d.Varint()
	endpoint, flags := d.U8(), d.U8()
	text := d.String()
	count, none, unanswered := d.Uvarint(), d.Uvarint(), d.Uvarint()
	if d.Err != nil {
		return record.Insight{}
	}
	if day != int64(int32(day)) || flags&^(insightAsk|insightAuth) != 0 || len(text) > record.MaxInsightTextBytes || !utf8.ValidString(text) ||
		count > 1<<32-1 || none > count || unanswered > count {
		d.Err = fmt.Errorf("insight row out of range")
		return record.Insight{}
	}
	k := insightKey{day: int32(day), endpoint: endpoint, flags: flags, text: text}
	return k.row(insightCounts{uint32(count), uint32(none), uint32(unanswered)})
}
