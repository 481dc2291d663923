package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/sift-search/sift/engine"
	"github.com/sift-search/sift/internal/demo"
	"github.com/sift-search/sift/record"
	"github.com/sift-search/sift/semantic"
)

// busyCPU keeps the process's one CPU busy (GOMAXPROCS 1 and spinning
// goroutines) until the test ends: the semantic indexer's goroutine gets
// a slice now and then, as on a loaded machine.
func busyCPU(t *testing.T) {
	prev := runtime.GOMAXPROCS(1)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			x := 0
			for {
				select {
				case <-stop:
					return
				default:
					for i := range 10_000 {
						x += i
					}
				}
			}
		})
	}
	t.Cleanup(func() {
		close(stop)
		wg.Wait()
		runtime.GOMAXPROCS(prev)
	})
}

// freshWords names the test's 50 runbooks: words no other text holds.
func freshWords() []string {
	var out []string
	for _, p := range []string{"zor", "quil", "brax", "fen", "mol", "tav", "gri", "vush", "kel", "pim"} {
		for _, s := range []string{"dex", "wick", "tor", "nium", "vax"} {
			out = append(out, p+s)
		}
	}
	return out
}

var citationMark = regexp.MustCompile(`\[(\d+)\]`)

// freshFiller is the bulk of each test runbook: sections of ordinary
// operations prose, some 50 KB.
var freshFiller = func() string {
	var b strings.Builder
	for i := range 75 {
		fmt.Fprintf(&b, "## Section %d\n\nCheck the dashboards for queue depth %d and error rate before any change. "+
			"Announce the maintenance in the team channel, note the ticket number %d, and keep a rollback plan ready. "+
			"Configuration lives in the repository; review every diff with a second person and record who approved it. "+
			"When alerts fire during the window, pause and read the runbook's troubleshooting notes first. "+
			"Capacity planning for quarter %d depends on the traffic report and the storage forecast.\n\n", i, i*7, 1000+i, i%4+1)
	}
	return b.String()
}()

// TestAskSeesFreshWrites: an agent's loop — upload a document, then at
// once ask about it — finds the document every time, with the CPU kept
// busy so the semantic indexer lags: 50 of 50 answers of POST /api/ask
// cite it, 50 of 50 semantic searches find it, none says it is stale.
func TestAskSeesFreshWrites(t *testing.T) {
	eng, idx, err := semantic.Open(engine.Options{}.OpenWith, semantic.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := demo.Load(eng, nil); err != nil { // something else to search among
		t.Fatal(err)
	}
	ts := serve(t, eng, idx, Options{APISecretKey: testKey})
	idx.Wait(t.Context())
	busyCPU(t)
	cited, found := 0, 0
	for _, w := range freshWords() {
		title := "Runbook " + strings.ToUpper(w[:1]) + w[1:]
		// A long runbook: chunking it takes the indexer a while.
		content := freshFiller + fmt.Sprintf("\n\n## Restarting\n\nTo restart the %s service, run svc restart %s --drain and wait for the health check. The %s service keeps its logs for 14 days.\n",
			w, w, w)
		doc, _ := json.Marshal(map[string]string{"title": title, "content": content})
		if r := ts.do(t, "POST", "/api/documents", bytes.NewReader(doc), adminJSON...); r.status != 201 {
			t.Fatalf("upload %s: %d %s", title, r.status, r.body)
		}
		r := ts.do(t, "POST", "/api/ask", strings.NewReader(`{"question":"How do I restart the `+w+` service?"}`), "Content-Type", "application/json")
		var ans askResponseJSON
		if err := json.Unmarshal(r.body, &ans); err != nil || r.status != 200 {
			t.Fatalf("ask about %s: %d %s", w, r.status, r.body)
		}
		if ans.Stale || r.header.Get(staleHeader) != "" {
			t.Errorf("ask about %s: stale", w)
		}
		for _, m := range citationMark.FindAllStringSubmatch(ans.Answer, -1) {
			if n, _ := strconv.Atoi(m[1]); n >= 1 && n <= len(ans.Sources) && strings.Contains(ans.Sources[n-1].Metadata, title) {
				cited++
				break
			}
		}
		r = ts.get(t, "/api/semantic-search?limit=5&q="+url.QueryEscape("restart the "+w+" service"))
		var sem semanticJSON
		if err := json.Unmarshal(r.body, &sem); err != nil || r.status != 200 || sem.Stale {
			t.Fatalf("semantic search for %s: %d %s", w, r.status, r.body)
		}
		for _, h := range sem.Results {
			if strings.HasPrefix(h.Title, title) { // "Runbook Zordex — Restarting"
				found++
				break
			}
		}
	}
	if cited != 50 || found != 50 {
		t.Errorf("of 50 documents asked about right after their upload, %d were cited and %d found by semantic search", cited, found)
	}
}

// TestStaleSaysSo: when the index has not taken in a write acknowledged
// before the request and may not wait (FreshWait negative), the answer
// and the semantic search say so, in their JSON and a header.
func TestStaleSaysSo(t *testing.T) {
	eng, idx, err := semantic.Open(engine.Options{}.OpenWith, semantic.Options{FreshWait: -1})
	if err != nil {
		t.Fatal(err)
	}
	ts := serve(t, eng, idx, Options{APISecretKey: testKey})
	idx.Stop() // the indexer takes nothing in from here on
	if _, err := eng.PutDocuments([]record.Document{{Title: "Late", Content: "quokka feeding schedule"}}); err != nil {
		t.Fatal(err)
	}
	r := ts.get(t, "/api/semantic-search?q=quokka")
	if r.status != 200 || r.header.Get(staleHeader) != "true" || !strings.Contains(string(r.body), `"stale":true`) {
		t.Errorf("semantic search: %d %v %s", r.status, r.header.Get(staleHeader), r.body)
	}
	r = ts.do(t, "POST", "/api/ask", strings.NewReader(`{"question":"when are quokkas fed?"}`), "Content-Type", "application/json")
	if r.status != 200 || r.header.Get(staleHeader) != "true" || !strings.Contains(string(r.body), `"stale":true`) {
		t.Errorf("ask: %d %v %s", r.status, r.header.Get(staleHeader), r.body)
	}
	r = ts.do(t, "POST", "/api/ask", strings.NewReader(`{"question":"when are quokkas fed?"}`), "Content-Type", "application/json", "Accept", "text/event-stream")
	if r.status != 200 || !strings.Contains(string(r.body), `"type":"sources","sources":[],"stale":true`) {
		t.Errorf("ask (stream): %d %s", r.status, r.body)
	}
}
