package insights

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/sift-search/sift/record"
)

// memStore is a Store keeping rows as the engine does: by key, a row of
// count 0 deleting.
type memStore struct {
	mu   sync.Mutex
	rows map[key]record.Insight
	puts int
	fail error
}

func newMemStore() *memStore { return &memStore{rows: map[key]record.Insight{}} }

func rowKey(r record.Insight) key {
	return key{day: r.Day, ep: Endpoint(r.Endpoint), ask: r.Ask, auth: r.Authenticated, text: r.Text}
}

func (s *memStore) Insights() []record.Insight {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []record.Insight
	for _, r := range s.rows {
		out = append(out, r)
	}
	return out
}

func (s *memStore) PutInsights(rows []record.Insight) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return s.fail
	}
	s.puts++
	for _, r := range rows {
		if r.Count == 0 {
			delete(s.rows, rowKey(r))
		} else {
			s.rows[rowKey(r)] = r
		}
	}
	return nil
}

func (s *memStore) texts() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for k := range s.rows {
		if k.text != "" {
			out = append(out, k.text)
		}
	}
	slices.Sort(out)
	return out
}

// clock is a settable time.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

var day0 = time.Date(2026, 5, 10, 15, 0, 0, 0, time.UTC)

func open(t *testing.T, opts Options) *Recorder {
	t.Helper()
	if opts.FlushEvery == 0 {
		opts.FlushEvery = time.Hour // tests flush themselves
	}
	r, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func texts(es []Entry) []string {
	out := []string{}
	for _, e := range es {
		out = append(out, fmt.Sprintf("%s=%d", e.Text, e.Count))
	}
	return out
}

// TestRecordAndReport: counts, flags and callers per list; totals and
// the daily volume; ties ranked by recency then text.
func TestRecordAndReport(t *testing.T) {
	c := &clock{t: day0}
	r := open(t, Options{Now: c.now})
	r.Record(Event{Endpoint: API, Text: "old query"})
	r.sync() // counted on the day the recorder takes it in
	c.add(24 * time.Hour)
	for range 3 {
		r.Record(Event{Endpoint: API, Text: "Webhook  Signature"})
	}
	r.Record(Event{Endpoint: Page, Text: "webhook signature", Authenticated: true})
	r.Record(Event{Endpoint: Semantic, Text: "nothing at all", NoResults: true})
	r.Record(Event{Endpoint: MCP, Text: "nothing at all", NoResults: true, Authenticated: true})
	r.Record(Event{Endpoint: API, Text: "zzz recent"})
	r.Record(Event{Endpoint: Ask, Ask: true, Text: "Why twice?", Unanswered: true})
	r.Record(Event{Endpoint: MCP, Ask: true, Text: "why twice?"})
	r.Record(Event{Endpoint: Ask, Ask: true, Text: "", Unanswered: true}) // counted in the totals only

	rep := r.Report(Query{Days: 30})
	if rep.Searches != 8 || rep.Asks != 3 {
		t.Errorf("searches %d, asks %d", rep.Searches, rep.Asks)
	}
	if got := texts(rep.TopQueries); !slices.Equal(got, []string{"webhook signature=4", "nothing at all=2", "zzz recent=1", "old query=1"}) {
		t.Errorf("top queries %v", got)
	}
	top := rep.TopQueries[0]
	if top.Authenticated != 1 || top.Endpoints["api"] != 3 || top.Endpoints["page"] != 1 || !top.LastSeen.Equal(time.Date(2026, 5, 11, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("top entry %+v", top)
	}
	if got := texts(rep.ZeroResultQueries); !slices.Equal(got, []string{"nothing at all=2"}) {
		t.Errorf("zero-result queries %v", got)
	}
	if got := texts(rep.UnansweredQuestions); !slices.Equal(got, []string{"why twice?=1"}) {
		t.Errorf("unanswered %v", got)
	}
	if got := texts(rep.TopQuestions); !slices.Equal(got, []string{"why twice?=2"}) {
		t.Errorf("top questions %v", got)
	}
	if len(rep.Daily) != 30 || rep.Daily[29].Searches != 7 || rep.Daily[28].Searches != 1 || rep.Daily[29].Asks != 3 || rep.Daily[29].Unanswered != 2 {
		t.Errorf("daily %+v", rep.Daily[27:])
	}

	pub := r.Report(Query{Days: 30, Callers: Public})
	if pub.Searches != 6 || texts(pub.ZeroResultQueries)[0] != "nothing at all=1" || texts(pub.TopQueries)[0] != "webhook signature=3" {
		t.Errorf("public: %d searches, %v, %v", pub.Searches, texts(pub.TopQueries), texts(pub.ZeroResultQueries))
	}
	auth := r.Report(Query{Days: 30, Callers: Authenticated})
	if auth.Searches != 2 || auth.Asks != 0 {
		t.Errorf("authenticated: %d searches, %d asks", auth.Searches, auth.Asks)
	}

	// days=1 is today alone: exact.
	today := r.Report(Query{Days: 1})
	if today.Searches != 7 || slices.Contains(texts(today.TopQueries), "old query=1") {
		t.Errorf("today: %d searches, %v", today.Searches, texts(today.TopQueries))
	}
	if got := r.Report(Query{Days: 3, Limit: 1}); len(got.TopQueries) != 1 {
		t.Errorf("limit 1: %v", texts(got.TopQueries))
	}
}

// TestBound: past MaxEntries texts, the least recent go in a batch —
// the oldest day first, then the least counted, then the least recently
// counted — and the totals stay.
func TestBound(t *testing.T) {
	c := &clock{t: day0}
	st := newMemStore()
	r := open(t, Options{Now: c.now, MaxEntries: 100, Store: st})
	r.Record(Event{Endpoint: API, Text: "old but frequent"})
	r.Record(Event{Endpoint: API, Text: "old but frequent"})
	r.sync()
	c.add(24 * time.Hour)
	for i := range 90 {
		r.Record(Event{Endpoint: API, Text: fmt.Sprint("q", i)})
		if i%3 == 0 {
			r.Record(Event{Endpoint: API, Text: fmt.Sprint("q", i)})
		}
	}
	r.Record(Event{Endpoint: API, Text: "old but frequent"}) // today's entry is new
	r.Flush()
	if n := len(st.texts()); n != 92 {
		t.Fatalf("%d texts stored", n)
	}
	for i := range 9 {
		r.Record(Event{Endpoint: Page, Text: fmt.Sprint("new", i)})
	}
	// 101 texts: down to 90, the old day's entry first, then the ten
	// counted once that counted first.
	if err := r.Flush(); err != nil {
		t.Fatal(err)
	}
	rep := r.Report(Query{Days: 10})
	if rep.Searches != 2+90+30+1+9 {
		t.Errorf("totals changed by eviction: %d searches", rep.Searches)
	}
	got := st.texts()
	if len(got) != 90 {
		t.Fatalf("%d texts kept, want 90", len(got))
	}
	for _, gone := range []string{"q1", "q2", "q4", "q5", "q7", "q8", "q10", "q11", "q13", "q14"} {
		if slices.Contains(got, gone) {
			t.Errorf("%q kept", gone)
		}
	}
	for _, kept := range []string{"old but frequent", "q0", "q3", "q16", "new0", "new8"} {
		if !slices.Contains(got, kept) {
			t.Errorf("%q evicted", kept)
		}
	}
	for _, e := range rep.TopQueries {
		if e.Text == "old but frequent" && (e.Count != 1 || !e.FirstSeen.Equal(e.LastSeen)) {
			t.Errorf("%+v: the old day's entry is gone, today's is kept", e)
		}
	}
}

// TestRetention: entries older than the retention go at the first flush
// after midnight, from memory and from the store; at Open too.
func TestRetention(t *testing.T) {
	c := &clock{t: day0}
	st := newMemStore()
	r := open(t, Options{Now: c.now, Retention: 2 * 24 * time.Hour, FlushEvery: 10 * time.Millisecond, Store: st})
	r.Record(Event{Endpoint: API, Text: "day one"})
	r.sync()
	c.add(24 * time.Hour)
	r.Record(Event{Endpoint: API, Text: "day two"})
	r.Flush()
	if got := st.texts(); !slices.Equal(got, []string{"day one", "day two"}) {
		t.Fatalf("stored %v", got)
	}
	c.add(24 * time.Hour) // day one is now 2 days old: gone
	deadline := time.Now().Add(10 * time.Second)
	for !slices.Equal(st.texts(), []string{"day two"}) {
		if time.Now().After(deadline) {
			t.Fatalf("stored %v", st.texts())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if got := texts(r.Report(Query{Days: 2}).TopQueries); !slices.Equal(got, []string{"day two=1"}) {
		t.Errorf("report %v", got)
	}
	r.Close()
	c.add(48 * time.Hour)
	r2 := open(t, Options{Now: c.now, Retention: 2 * 24 * time.Hour, Store: st})
	if rep := r2.Report(Query{Days: 2}); len(rep.TopQueries) != 0 || rep.Searches != 0 {
		t.Errorf("expired entries reported: %+v", rep)
	}
	r2.Close()
	if got := st.texts(); len(got) != 0 {
		t.Errorf("expired entries still stored: %v", got)
	}
}

// TestPersist: Close writes what changed; a new recorder over the store
// reports the same; a failed write is tried again.
func TestPersist(t *testing.T) {
	c := &clock{t: day0}
	st := newMemStore()
	r := open(t, Options{Now: c.now, Store: st})
	r.Record(Event{Endpoint: API, Text: "a"})
	r.Record(Event{Endpoint: Ask, Ask: true, Text: "b?", Unanswered: true})
	st.fail = errors.New("disk full")
	if err := r.Flush(); err == nil {
		t.Fatal("a failed write is not reported")
	}
	st.fail = nil
	r.Record(Event{Endpoint: API, Text: "a", NoResults: true})
	want := r.Report(Query{Days: 7})
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	r.Record(Event{Endpoint: API, Text: "after close"}) // ignored
	r2 := open(t, Options{Now: c.now, Store: st})
	got := r2.Report(Query{Days: 7})
	if fmt.Sprint(got) != fmt.Sprint(want) || got.Searches != 2 || got.Asks != 1 {
		t.Errorf("reloaded\n%+v\nwant\n%+v", got, want)
	}
}

// TestFullBufferDrops: Record never waits; what does not fit is counted.
func TestFullBufferDrops(t *testing.T) {
	r := open(t, Options{Buffer: 1})
	r.mu.Lock() // the aggregating goroutine stops at its next batch
	for range 1000 {
		r.Record(Event{Endpoint: API, Text: "x"})
	}
	r.mu.Unlock()
	if r.Dropped() == 0 {
		t.Fatal("nothing dropped")
	}
	rep := r.Report(Query{Days: 1})
	if int64(rep.Searches)+rep.Dropped != 1000 {
		t.Errorf("%d counted and %d dropped of 1000", rep.Searches, rep.Dropped)
	}
}

// TestConcurrentRecord runs recorders, reports and flushes at once, for
// the race detector.
func TestConcurrentRecord(t *testing.T) {
	st := newMemStore()
	r := open(t, Options{Store: st, FlushEvery: time.Millisecond, MaxEntries: 50})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 2000 {
				r.Record(Event{Endpoint: Endpoint(1 + i%5), Ask: i%2 == 0, Text: fmt.Sprint("q", w, i%80), NoResults: i%7 == 0})
			}
		}()
	}
	for range 20 {
		r.Report(Query{Days: 3})
	}
	wg.Wait()
	rep := r.Report(Query{Days: 3})
	if int64(rep.Searches+rep.Asks)+rep.Dropped != 8000 {
		t.Errorf("%d + %d counted, %d dropped of 8000", rep.Searches, rep.Asks, rep.Dropped)
	}
	r.Close()
	if n := len(st.texts()); n > 50 {
		t.Errorf("%d texts stored over the bound", n)
	}
}

// TestLongText: a text over the bound is cut before it is queued, and
// kept at MaxRunes characters.
func TestLongText(t *testing.T) {
	r := open(t, Options{})
	long := strings.Repeat("Ab ", 100_000)
	r.Record(Event{Endpoint: API, Text: long})
	rep := r.Report(Query{Days: 1})
	if len(rep.TopQueries) != 1 || utf8.RuneCountInString(rep.TopQueries[0].Text) > MaxRunes || !strings.HasPrefix(rep.TopQueries[0].Text, "ab ab") {
		t.Fatalf("%+v", rep.TopQueries)
	}
}

// BenchmarkRecord is what a request pays to record: parallel Record calls
// of 20,000 distinct texts as fast as they go, the aggregating goroutine
// counting them meanwhile — counted/s is its rate; the rest are dropped,
// which costs a caller less than a send.
func BenchmarkRecord(b *testing.B) {
	texts := make([]string, 20_000)
	for i := range texts {
		texts[i] = fmt.Sprint("query number ", i)
	}
	r, err := Open(Options{Store: newMemStore(), FlushEvery: time.Second})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			r.Record(Event{Endpoint: API, Text: texts[i%len(texts)]})
			i++
		}
	})
	b.StopTimer()
	r.sync()
	b.ReportMetric(float64(int64(b.N)-r.Dropped())/b.Elapsed().Seconds(), "counted/s")
}
