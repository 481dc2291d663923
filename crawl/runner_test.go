package crawl

import (
	"errors"
	"maps"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sift-search/sift/record"
)

// waitFor polls cond for up to 10 seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting for " + what)
		}
	}
}

func TestScheduledCrawls(t *testing.T) {
	site := newTestSite(t)
	eng := webEngine(t)
	cfg, _ := CheckConfig("web", map[string]any{"urls": []any{site.URL + "/"}, "allowPrivate": true, "delayMs": quickDelay})
	for _, s := range []record.Source{
		{ID: "due", Name: "Due", Type: "web", Enabled: true, Schedule: "1h", Config: cfg},
		{ID: "manual", Name: "Manual", Type: "web", Enabled: true, Config: cfg},
		{ID: "off", Name: "Off", Type: "web", Enabled: false, Schedule: "1h", Config: cfg},
	} {
		if _, err := eng.PutSource(s); err != nil {
			t.Fatal(err)
		}
	}
	r := NewRunner(eng, RunnerOptions{Tick: time.Hour})
	defer r.Close()
	r.startDue(time.Now())
	waitFor(t, "the scheduled crawl", func() bool {
		s, _ := eng.Source("due")
		_, _, running := r.Running("due") // the job ends just after it records its result
		return s.LastCrawl != nil && s.LastCrawl.Status == "ok" && !running
	})
	for _, id := range []string{"manual", "off"} {
		if s, _ := eng.Source(id); s.LastCrawl != nil {
			t.Fatalf("%s was crawled by the scheduler", id)
		}
	}
	// Not due again within its interval; due once it has passed.
	first, _ := eng.Source("due")
	r.startDue(time.Now().Add(30 * time.Minute))
	if _, _, running := r.Running("due"); running {
		t.Fatal("crawled again before its interval")
	}
	r.startDue(time.Now().Add(61 * time.Minute))
	waitFor(t, "the second scheduled crawl", func() bool {
		s, _ := eng.Source("due")
		return s.LastCrawl.JobID != first.LastCrawl.JobID && s.LastCrawl.Status == "ok"
	})
}

// TestDeleteCancelsCrawl deletes a source while its crawl waits on a slow
// page: the crawl stops, and nothing of it is written after the delete.
func TestDeleteCancelsCrawl(t *testing.T) {
	release := make(chan struct{})
	var served atomic.Int32
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		served.Add(1)
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(`<html><head><title>Slow</title></head><body><p>slow page text</p></body></html>`))
	}))
	defer site.Close()
	defer close(release)
	eng := webEngine(t)
	r := webSource(t, eng, map[string]any{"urls": []any{site.URL + "/"}, "allowPrivate": true, "delayMs": quickDelay}, Env{})
	job, err := r.Start("site", false)
	if err != nil || job == "" {
		t.Fatal(err)
	}
	if _, err := r.Start("site", false); !errors.Is(err, ErrBusy) {
		t.Fatalf("a second crawl: %v", err)
	}
	waitFor(t, "the page request", func() bool { return served.Load() > 0 })
	if err := r.Delete("site"); err != nil {
		t.Fatal(err)
	}
	if _, ok := eng.Source("site"); ok || len(eng.SourceDocuments("site")) != 0 {
		t.Fatal("the source or its documents outlived the delete")
	}
	if _, _, running := r.Running("site"); running {
		t.Fatal("the crawl still runs")
	}
}

func TestInterruptedCrawlIsMarked(t *testing.T) {
	eng := webEngine(t)
	eng.PutSource(record.Source{ID: "s", Name: "S", Type: "web", Enabled: true,
		LastCrawl: &record.CrawlInfo{JobID: "j_1", Status: "running", StartedAt: time.Now()}})
	r := NewRunner(eng, RunnerOptions{})
	defer r.Close()
	s, _ := eng.Source("s")
	if s.LastCrawl.Status != "error" || !strings.Contains(s.LastCrawl.Error, "interrupted") {
		t.Fatalf("%+v", s.LastCrawl)
	}
}

// TestRunnerNotCrawlable: a source that cannot be crawled as it stands (a
// type without a crawler, a discord or slack source without a token) is
// refused by Crawl, Start, Test and the scheduler alike, and its record,
// a previous crawl's included, is left as it was.
func TestRunnerNotCrawlable(t *testing.T) {
	eng := webEngine(t)
	earlier := &record.CrawlInfo{JobID: "j_old", Status: "ok", StartedAt: time.Now().Add(-48 * time.Hour).UTC()}
	cases := []struct {
		src record.Source
		why string
	}{
		{record.Source{ID: "dc", Type: "discord", Config: map[string]any{"guildId": "1"}, LastCrawl: earlier}, "config.token"},
		{record.Source{ID: "sl", Type: "slack", Config: map[string]any{}}, "config.token"},
		{record.Source{ID: "tg", Type: "telegram", Config: map[string]any{}}, "nothing to crawl"},
		{record.Source{ID: "up", Type: "upload", Config: map[string]any{}}, "nothing to crawl"},
	}
	for _, c := range cases {
		c.src.Name, c.src.Enabled, c.src.Schedule = c.src.ID, true, "1m"
		if _, err := eng.PutSource(c.src); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	failed := map[string]int{} // what OnResult learns
	r := NewRunner(eng, RunnerOptions{Tick: time.Hour, OnResult: func(id string, res Result, err error) {
		mu.Lock()
		defer mu.Unlock()
		if res.Status == "" && errors.Is(err, ErrNotCrawlable) {
			failed[id]++
		}
	}})
	defer r.Close()
	for _, c := range cases {
		t.Run(c.src.ID, func(t *testing.T) {
			before, _ := eng.Source(c.src.ID)
			if err := CanCrawl(before); !errors.Is(err, ErrNotCrawlable) || !strings.Contains(err.Error(), c.why) {
				t.Fatalf("CanCrawl: %v", err)
			}
			if _, err := r.Crawl(c.src.ID, false); !errors.Is(err, ErrNotCrawlable) || !strings.Contains(err.Error(), c.why) {
				t.Fatalf("Crawl: %v", err)
			}
			if _, err := r.Start(c.src.ID, true); !errors.Is(err, ErrNotCrawlable) {
				t.Fatalf("Start: %v", err)
			}
			if tr, err := r.Test(t.Context(), c.src.ID); err != nil || tr.OK || !strings.Contains(tr.Error, c.why) {
				t.Fatalf("Test: %+v %v", tr, err)
			}
			r.startDue(time.Now())
			if _, _, running := r.Running(c.src.ID); running {
				t.Fatal("the scheduler started a crawl")
			}
			after, _ := eng.Source(c.src.ID)
			if !reflect.DeepEqual(before, after) {
				t.Fatalf("the record changed:\n%+v\n%+v", before, after)
			}
		})
	}
	// Metrics count the refused crawls of types that have a crawler.
	mu.Lock()
	if want := map[string]int{"dc": 2, "sl": 2}; !maps.Equal(failed, want) {
		t.Errorf("OnResult learnt of %v, want %v", failed, want)
	}
	mu.Unlock()

	// With a token, the same discord source can be crawled.
	dc, _ := eng.Source("dc")
	dc.Config["token"] = "t"
	if err := CanCrawl(dc); err != nil {
		t.Fatalf("with a token: %v", err)
	}
}
