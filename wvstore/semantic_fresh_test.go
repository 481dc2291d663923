package wvstore

import (
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sift-search/sift/ask"
	"github.com/sift-search/sift/internal/weaviatetest"
	"github.com/sift-search/sift/record"
	"github.com/sift-search/sift/semantic"
)

// burnCPU keeps the machine's CPUs busy with other processes (a shell
// loop per CPU) until the test ends, as other work on a loaded machine
// would: the cluster, the indexer and the searches all get less.
func burnCPU(t *testing.T) {
	for range runtime.NumCPU() {
		cmd := exec.Command("sh", "-c", "while :; do :; done")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			cmd.Process.Kill()
			cmd.Wait()
		})
	}
}

// answer is an ask.Sink keeping the answer and its sources.
type answer struct {
	sources []ask.Source
	stale   bool
	text    strings.Builder
}

func (a *answer) Sources(s []ask.Source, stale bool) error { a.sources, a.stale = s, stale; return nil }
func (a *answer) Token(t string) error                     { a.text.WriteString(t); return nil }

var citation = regexp.MustCompile(`\[(\d+)\]`)

// cites reports whether the answer cites a source whose title starts with
// title.
func (a *answer) cites(title string) bool {
	for _, m := range citation.FindAllStringSubmatch(a.text.String(), -1) {
		if n, _ := strconv.Atoi(m[1]); n >= 1 && n <= len(a.sources) && strings.HasPrefix(a.sources[n-1].Title, title) {
			return true
		}
	}
	return false
}

// testFreshWrites: with the indexer running in the background, as the
// lease holder runs it, an agent's loop — upload a document, then at once
// ask about it and search for it — finds the document 50 times of 50, with
// the machine's CPUs kept busy; no answer says it is stale.
func testFreshWrites(t *testing.T, cl *weaviatetest.Cluster) {
	s := openNS(t, cl, "SemF")
	corpusStart(t, s)
	// A generous bound: under the race detector a pass of the indexer
	// takes a while; what is checked is that nothing is missed or stale.
	x := s.Semantic(SemanticOptions{FreshWait: 30 * time.Second})
	settle(t, x)
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() { defer close(ran); x.Run(ctx) }()
	defer func() { cancel(); <-ran }()
	asker := ask.New(x, ask.Options{})
	burnCPU(t)
	cited, found := 0, 0
	for i := range 50 {
		w := fmt.Sprintf("%s%s", []string{"zor", "quil", "brax", "fen", "mol", "tav", "gri", "vush", "kel", "pim"}[i/5],
			[]string{"dex", "wick", "tor", "nium", "vax"}[i%5])
		title := "Runbook " + strings.ToUpper(w[:1]) + w[1:]
		if _, err := s.PutDocuments([]record.Document{{Title: title,
			Content: fmt.Sprintf("To restart the %s service, run svc restart %s --drain and wait for the health check. The %s service keeps its logs for 14 days.", w, w, w)}}); err != nil {
			t.Fatal(err)
		}
		var a answer
		if _, err := asker.Ask(ctx, ask.Request{Question: "How do I restart the " + w + " service?"}, &a); err != nil {
			t.Fatal(err)
		}
		if a.stale {
			t.Errorf("the answer about %s is stale", w)
		}
		if a.cites(title) {
			cited++
		}
		res := search(t, x, semantic.Request{Query: "restart the " + w + " service", Limit: 5})
		if res.Stale {
			t.Errorf("the search for %s is stale", w)
		}
		for _, h := range res.Hits {
			if strings.HasPrefix(h.Title, title) {
				found++
				break
			}
		}
	}
	if cited != 50 || found != 50 {
		t.Errorf("of 50 documents asked about right after their upload, %d were cited and %d found by semantic search", cited, found)
	}
}
