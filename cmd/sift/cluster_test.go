package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sift-search/sift/internal/weaviatetest"
	"github.com/sift-search/sift/record"
	"github.com/sift-search/sift/wvstore"
)

// These tests run sift serve with STORE=weaviate against real clusters on
// loopback (internal/weaviatetest).

// clusterEnv is the environment of a server on a cluster node.
func clusterEnv(node *weaviatetest.Node, ns string, replication int, extra ...string) []string {
	return append([]string{"STORE=weaviate", "WEAVIATE_URL=" + node.URL(), "WEAVIATE_NAMESPACE=" + ns,
		fmt.Sprint("WEAVIATE_REPLICATION=", replication)}, extra...)
}

// search returns the ids of the messages and documents a full-text search
// finds (bearer: private content too).
func (p *proc) search(t testing.TB, q string) (msgs, docs []string, err error) {
	req, _ := http.NewRequest("GET", p.url+"/api/search?limit=100&q="+url.QueryEscape(q), nil)
	req.Header.Set("Authorization", "Bearer "+testKey)
	status, body, err := do(req)
	if err != nil {
		return nil, nil, err
	}
	if status != 200 {
		return nil, nil, fmt.Errorf("search %q: %d %s", q, status, body)
	}
	var r struct {
		Messages  []struct{ ID string }
		Documents []struct{ ID string }
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, nil, err
	}
	for _, m := range r.Messages {
		msgs = append(msgs, m.ID)
	}
	for _, d := range r.Documents {
		docs = append(docs, d.ID)
	}
	return msgs, docs, nil
}

// TestClusterTwoServers: two servers on one cluster serve the same
// content — a write through one is found through the other — and exactly
// one of them runs scheduled crawls; when it is killed, the other takes
// the lease over and runs the next one.
func TestClusterTwoServers(t *testing.T) {
	cl := weaviatetest.Start(t, 1)
	// A web site to crawl, which tells the crawlers apart by the
	// User-Agent (each names its server's BASE_URL).
	var mu sync.Mutex
	crawledBy := map[string]int{}
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		mu.Lock()
		crawledBy[r.UserAgent()]++
		mu.Unlock()
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<html><head><title>Lease page</title></head><body><p>The lease holder crawls this page.</p></body></html>")
	}))
	defer site.Close()

	env := clusterEnv(cl.Nodes[0], "Two", 1, "SIFT_LEASE_TTL=3s", "SIFT_SCHEDULE_TICK=500ms")
	a := startSiftEnv(t, t.TempDir(), env)
	b := startSiftEnv(t, t.TempDir(), env)
	defer a.kill()
	defer b.kill()

	// A write through one is found through the other.
	if status, body, err := a.post("/api/documents", map[string]string{"title": "Written through A", "content": "quokka migration notes"}); err != nil || status != 201 {
		t.Fatalf("upload through A: %d %s %v", status, body, err)
	}
	_, docs, err := b.search(t, "quokka")
	if err != nil || len(docs) != 1 {
		t.Fatalf("search through B: %v %v", docs, err)
	}
	checkLowerBounds(t, a, b)
	// On nodes with Weaviate's default settings, phrases and query
	// metacharacters answer 200 (or 400 for a query that is not one),
	// never 500.
	if _, docs, err := b.search(t, `"quokka migration"`); err != nil || len(docs) != 1 {
		t.Fatalf("a phrase through B: %v %v", docs, err)
	}
	for _, q := range []string{`"drop table"`, `"to the"`, `a"b`, `"unbalanced`, `foo*`, `(a OR b)`, `\`, `%`, `'; DROP TABLE x; --`, `:`, `source:x "p q"`} {
		req, _ := http.NewRequest("GET", a.url+"/api/search?q="+url.QueryEscape(q), nil)
		if status, body, err := do(req); err != nil || status != 200 {
			t.Errorf("search %q: %d %s %v", q, status, body, err)
		}
	}

	// A source crawled every 2 s, written straight into the cluster (the
	// API asks for at least a minute).
	st, err := wvstore.Open(context.Background(), wvstore.Options{URL: cl.Nodes[0].URL(), Namespace: "Two"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.PutSource(record.Source{ID: "site", Name: "Site", Type: "web", Enabled: true, Schedule: "2s",
		Config: map[string]any{"urls": []any{site.URL + "/"}, "maxPages": 1.0, "allowPrivate": true}}); err != nil {
		t.Fatal(err)
	}
	// The User-Agent names BASE_URL, http://localhost:PORT by default.
	port := func(p *proc) string { return p.url[strings.LastIndexByte(p.url, ':'):] + ")" }
	agentOf := map[*proc]string{a: port(a), b: port(b)}
	crawls := func(p *proc) int {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for ua, c := range crawledBy {
			if strings.Contains(ua, agentOf[p]) {
				n += c
			}
		}
		return n
	}
	waitFor := func(what string, d time.Duration, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(d)
		for !ok() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within %v (crawls: %v)\nA:\n%s\nB:\n%s", what, d, crawledBy, a.stderr, b.stderr)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	waitFor("a first scheduled crawl", 30*time.Second, func() bool { return crawls(a)+crawls(b) > 0 })
	holder, other := a, b
	if crawls(b) > 0 {
		holder, other = b, a
	}
	// Only the holder crawls while it lives.
	time.Sleep(5 * time.Second)
	if n := crawls(other); n != 0 {
		t.Fatalf("the server without the lease crawled %d times", n)
	}
	if crawls(holder) < 2 {
		t.Fatalf("the holder crawled %d times in 5 s of a 2 s schedule", crawls(holder))
	}
	holder.kill()
	waitFor("the other server's first crawl after the holder died", 30*time.Second, func() bool { return crawls(other) > 0 })
	// And the crawled page is searchable through it.
	waitFor("the crawled page in a search", 10*time.Second, func() bool {
		_, docs, err := other.search(t, "lease holder crawls")
		return err == nil && len(docs) == 1
	})
}

// checkLowerBounds: 300 messages saying "bulk" imported through a; a
// search of the word through b reads fewer than match, so its total is a
// lower bound, which the API (totalExact) and the search page ("more
// than") say; a rarer word's total is exact.
func checkLowerBounds(t *testing.T, a, b *proc) {
	t.Helper()
	if status, body, err := a.post("/api/sources", map[string]any{"id": "bulk", "name": "Bulk", "type": "discord", "config": map[string]any{}}); err != nil || status != 201 {
		t.Fatalf("create the source: %d %s %v", status, body, err)
	}
	body, _ := discordExport("950", 0, 300)
	req, _ := http.NewRequest("POST", a.url+"/api/sources/bulk/import", strings.NewReader(string(body)))
	req.Header.Set("Authorization", "Bearer "+testKey)
	if status, out, err := do(req); err != nil || status != 200 {
		t.Fatalf("import: %d %s %v", status, out, err)
	}
	type totals struct {
		Messages      []struct{ ID string }
		TotalMessages int
		TotalExact    *bool
	}
	get := func(q string) totals {
		req, _ := http.NewRequest("GET", b.url+"/api/search?limit=5&q="+url.QueryEscape(q), nil)
		req.Header.Set("Authorization", "Bearer "+testKey)
		status, body, err := do(req)
		var r totals
		if err != nil || status != 200 || json.Unmarshal(body, &r) != nil || r.TotalExact == nil {
			t.Fatalf("search %q: %d %s %v", q, status, body, err)
		}
		return r
	}
	if r := get("bulk"); *r.TotalExact || r.TotalMessages < 5 || r.TotalMessages >= 300 || len(r.Messages) != 5 {
		t.Errorf("a common word: %d hits, total %d, exact %v; want a lower bound below 300", len(r.Messages), r.TotalMessages, *r.TotalExact)
	}
	if r := get("bulktok7 bulktok8"); !*r.TotalExact || r.TotalMessages != 2 {
		t.Errorf("two tokens: total %d, exact %v", r.TotalMessages, *r.TotalExact)
	}
	req, _ = http.NewRequest("GET", b.url+"/?q=bulk", nil)
	if status, page, err := do(req); err != nil || status != 200 || !strings.Contains(string(page), `<span class="n">more than `) {
		t.Errorf("the search page does not say \"more than\": %d %v\n%.3000s", status, err, page)
	}
}

// discordExport returns a DiscordChatExporter file of n messages in one
// channel, each holding its token, of lengths that differ (so that a
// common word's scores do).
func discordExport(channel string, first, n int) (body []byte, tokens map[string]string) {
	tokens = map[string]string{}
	type author struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	}
	type msg struct {
		ID        string `json:"id"`
		Type      string `json:"type"`
		Timestamp string `json:"timestamp"`
		Content   string `json:"content"`
		Author    author `json:"author"`
	}
	var msgs []msg
	t0 := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	for i := first; i < first+n; i++ {
		id := fmt.Sprint(1500000000000000000 + i)
		tok := fmt.Sprintf("bulktok%d", i)
		tokens[id] = tok
		msgs = append(msgs, msg{ID: id, Type: "Default", Timestamp: t0.Add(time.Duration(i) * time.Second).Format(time.RFC3339),
			Content: fmt.Sprintf("message %d about the bulk import, token %s%s", i, tok, strings.Repeat(" and so on", i%5)), Author: author{ID: "42", Name: fmt.Sprint("user", i%17)}})
	}
	body, _ = json.Marshal(map[string]any{
		"guild":    map[string]string{"id": "1", "name": "Bulk"},
		"channel":  map[string]string{"id": channel, "type": "GuildTextChat", "name": "bulk-" + channel},
		"messages": msgs,
	})
	return body, tokens
}

// TestClusterNodeKilledDuringImport: one of three Weaviate nodes (with
// replication 3) is killed with SIGKILL while a bulk import runs through
// Sift and documents are uploaded: no acknowledged write is lost, searches
// keep answering, and the node, restarted, catches up with the others.
func TestClusterNodeKilledDuringImport(t *testing.T) {
	cl := weaviatetest.Start(t, 3)
	p := startSiftEnv(t, t.TempDir(), clusterEnv(cl.Nodes[0], "Kill", 3))
	defer p.kill()
	if status, body, err := p.post("/api/sources", map[string]any{"id": "bulk", "name": "Bulk", "type": "discord", "config": map[string]any{}}); err != nil || status != 201 {
		t.Fatalf("create the source: %d %s %v", status, body, err)
	}

	stop := make(chan struct{})
	var wg sync.WaitGroup
	// Imports, one file after another; each acknowledged file's messages
	// must all be there.
	var importedMu sync.Mutex
	imported := map[string]string{}
	importedChans := map[string]bool{}
	importErrs := 0
	wg.Add(1)
	go func() {
		defer wg.Done()
		for f := 0; ; f++ {
			select {
			case <-stop:
				return
			default:
			}
			channel := fmt.Sprint(900 + f%3)
			body, tokens := discordExport(channel, f*500, 500)
			req, _ := http.NewRequest("POST", p.url+"/api/sources/bulk/import", strings.NewReader(string(body)))
			req.Header.Set("Authorization", "Bearer "+testKey)
			status, out, err := do(req)
			if err != nil || status != 200 {
				importedMu.Lock()
				importErrs++
				importedMu.Unlock()
				t.Logf("import %d: %d %s %v%s", f, status, out, err, p.logOf(out))
				continue
			}
			importedMu.Lock()
			for id, tok := range tokens {
				imported[id] = tok
			}
			importedChans[channel] = true
			importedMu.Unlock()
		}
	}()
	// Uploads, each acknowledged one recorded.
	led := &ledger{present: map[string]string{}, deleted: map[string]bool{}, inflight: map[string]string{}}
	for w := range 2 {
		wg.Add(1)
		go func() { defer wg.Done(); led.write(p, 0, w, rand.Uint64(), stop) }()
	}
	// Searches, all of which must answer.
	var searches, failed atomic.Int64
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			searches.Add(1)
			if _, _, err := p.search(t, "bulk import token"); err != nil {
				failed.Add(1)
				t.Logf("search failed: %v", err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()

	time.Sleep(4 * time.Second)
	cl.Kill(2)
	killedAt := time.Now()
	// At least 8 s with the node down, and until enough is written for
	// the checks below: on a loaded machine an import of 500 messages
	// takes seconds, and one in flight at the kill may fail.
	time.Sleep(8 * time.Second)
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		importedMu.Lock()
		n := len(imported)
		importedMu.Unlock()
		led.mu.Lock()
		docs := len(led.present)
		led.mu.Unlock()
		if n >= 1000 && docs >= 10 {
			break
		}
	}
	close(stop)
	wg.Wait()
	t.Logf("%d messages imported, %d documents uploaded, %d searches (%d failed), %d import failures; node 3 killed %v into the run",
		len(imported), len(led.present), searches.Load(), failed.Load(), importErrs, killedAt)
	if failed.Load() > 0 {
		t.Errorf("%d of %d searches failed while a node was down", failed.Load(), searches.Load())
	}
	if len(imported) < 1000 || len(led.present) < 10 {
		t.Fatalf("too little written: %d messages, %d documents", len(imported), len(led.present))
	}

	// No acknowledged write lost: every imported message is in the
	// cluster, a sample is found through Sift, and every acknowledged
	// upload is listed.
	st, err := wvstore.Open(context.Background(), wvstore.Options{URL: cl.Nodes[0].URL(), Namespace: "Kill", Replication: 3})
	if err != nil {
		t.Fatal(err)
	}
	checkAll := func(through *proc) {
		t.Helper()
		led.verify(t, through, 0)
		have := map[string]bool{}
		for ch := range importedChans {
			ids, err := st.MessageIDs("bulk", ch)
			if err != nil {
				t.Fatalf("messages of channel %s: %v", ch, err)
			}
			for _, id := range ids {
				have[id] = true
			}
		}
		sampled := 0
		for id, tok := range imported {
			if !have[id] {
				t.Fatalf("imported message %s (%s) lost", id, tok)
			}
			if sampled < 30 {
				sampled++
				msgs, _, err := through.search(t, `"`+tok+`"`)
				if err != nil || !slices.Contains(msgs, id) {
					t.Fatalf("imported message %s (%s): a search found %v, %v", id, tok, msgs, err)
				}
			}
		}
	}
	checkAll(p)

	// The node comes back and catches up: its replicas hold as many
	// objects as the others', and a server on it sees everything.
	cl.Restart(2)
	back := time.Now()
	deadline := back.Add(5 * time.Minute) // make test runs other clusters beside it
	for {
		counts, err := weaviatetest.ObjectCounts(cl.Nodes[2].URL(), "KillMessage")
		if err == nil && counts[cl.Nodes[2].Name] >= len(imported) && counts[cl.Nodes[2].Name] == counts[cl.Nodes[0].Name] {
			t.Logf("node 3 caught up %s after it was ready", time.Since(back).Round(time.Second))
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("node 3 did not catch up: %v %v (want %d messages)", counts, err, len(imported))
		}
		time.Sleep(time.Second)
	}
	// Equal counts are not yet proof: /v1/nodes counts are estimates, and
	// a search on a node just back reads its own replica, which async
	// replication may still be repairing (seen in CI). So wait until a
	// server on it finds every imported message and acknowledged document:
	// a deadline of its own, since a pass over some 3,000 searches takes
	// minutes under make test's load (once, 2 of them were still missing
	// when a deadline shared with the catch-up above ran out).
	deadline = time.Now().Add(5 * time.Minute)
	q := startSiftEnv(t, t.TempDir(), clusterEnv(cl.Nodes[2], "Kill", 3))
	defer q.kill()
	pending := map[string]string{}
	for id, tok := range imported {
		pending["m"+id] = tok
	}
	led.mu.Lock()
	for id, tok := range led.present {
		pending["d"+id] = tok
	}
	led.mu.Unlock()
	for pass := 0; len(pending) > 0; pass++ {
		for key, tok := range pending {
			msgs, docs, err := q.search(t, `"`+tok+`"`)
			if err == nil && (slices.Contains(msgs, key[1:]) || slices.Contains(docs, key[1:])) {
				delete(pending, key)
			}
		}
		if len(pending) == 0 {
			t.Logf("a server on node 3 finds everything %s after the node was ready", time.Since(back).Round(time.Second))
			break
		}
		if pass == 0 {
			// The first pass searches every write, minutes under -race
			// and make test's load; what it missed gets two more.
			if d := time.Now().Add(2 * time.Minute); d.After(deadline) {
				deadline = d
			}
		}
		if time.Now().After(deadline) {
			for key, tok := range pending {
				msgs, docs, err := p.search(t, `"`+tok+`"`)
				t.Logf("not found on node 3: %s (%s); through node 1: messages %v, documents %v, %v", key, tok, msgs, docs, err)
			}
			t.Fatalf("a server on node 3 does not find %d of the writes within 5 minutes", len(pending))
		}
		time.Sleep(time.Second)
	}
	checkAll(q)
}
