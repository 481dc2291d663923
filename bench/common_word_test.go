package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sift-search/sift/analysis"
	"github.com/sift-search/sift/internal/weaviatetest"
	"github.com/sift-search/sift/query"
	"github.com/sift-search/sift/record"
	"github.com/sift-search/sift/wvstore"
)

// BenchmarkCommonWordCost takes apart what a search for a very common
// word costs on a 1-node cluster holding 300k peer-style messages: the
// Weaviate queries wvstore makes for it, timed alone (best of three, raw
// GraphQL), beside the whole Store.Search, for the corpus's most common
// word and for words in about 10,000 and 300 messages.
func BenchmarkCommonWordCost(b *testing.B) {
	const n = 300_000
	if testing.Short() {
		b.Skip("-short: skipping the 300k cluster")
	}
	cl := weaviatetest.Start(b, 1)
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	st, err := wvstore.Open(ctx, wvstore.Options{URL: cl.Nodes[0].URL(), GRPCAddr: cl.Nodes[0].GRPCAddr(), Namespace: "Cost", Replication: 1})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := st.PutSource(record.Source{ID: "synth", Name: "synth", Type: "discord", Enabled: true}); err != nil {
		b.Fatal(err)
	}
	c := synthCorpus(n)
	ingest(b, clusterStore{st}, c)
	words := []string{mostCommon(c.msgs, 0), mostCommon(c.msgs, 10_000), mostCommon(c.msgs, 300)}
	time.Sleep(flushWait) // as BenchmarkStores: BM25 is exact once flushed

	gql := func(q string) time.Duration {
		body, _ := json.Marshal(map[string]string{"query": q})
		var best time.Duration
		for r := range 3 {
			t := time.Now()
			res, err := http.Post(cl.Nodes[0].URL()+"/v1/graphql", "application/json", bytes.NewReader(body))
			if err != nil {
				b.Fatal(err)
			}
			out, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if d := time.Since(t); r == 0 || d < best {
				best = d
			}
			if res.StatusCode != 200 || strings.Contains(string(out), `"errors"`) {
				b.Fatalf("%s: %d %s", q, res.StatusCode, out)
			}
		}
		return best
	}
	b.ResetTimer()
	for range b.N {
		for k, w := range words {
			term := analysis.QueryTerms(w)[0].Text // as analysed into "terms"
			where := fmt.Sprintf(`where:{path:["terms"], operator:Equal, valueText:%q}`, term)
			bm25 := fmt.Sprintf(`bm25:{query:%q, properties:["terms"]}`, term)
			kind := []string{"top", "10k", "300"}[k]
			b.ReportMetric(ms(gql(fmt.Sprintf(`{Aggregate{CostMessage(%s){meta{count}}}}`, where))), kind+"-count-ms")
			b.ReportMetric(ms(gql(fmt.Sprintf(`{Get{CostMessage(%s, %s, limit:1000){ts msgId _additional{id score}}}}`, bm25, where))), kind+"-window-ms")
			b.ReportMetric(ms(gql(fmt.Sprintf(`{Get{CostMessage(%s, %s, limit:10){ts msgId _additional{id score}}}}`, bm25, where))), kind+"-top10-ms")
			t := time.Now()
			res, err := st.Search(query.SearchRequest{Query: w, Limit: 10})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(ms(time.Since(t)), kind+"-search-ms")
			b.ReportMetric(float64(res.TotalMessages), kind+"-matches")
		}
	}
}

// mostCommon returns the word in the most messages when near is 0, else
// the word whose count of messages is nearest to near. Words are taken as
// typed (lower case, split on spaces) and counted once per message.
func mostCommon(msgs []record.Message, near int) string {
	df := map[string]int{}
	seen := map[string]bool{}
	for _, m := range msgs {
		clear(seen)
		for _, w := range strings.Fields(strings.ToLower(m.Content)) {
			if !seen[w] {
				seen[w] = true
				df[w]++
			}
		}
	}
	best, dist := "", 0
	for w, c := range df {
		if len(analysis.QueryTerms(w)) != 1 {
			continue
		}
		d := -c
		if near > 0 {
			d = max(c-near, near-c)
		}
		if best == "" || d < dist || (d == dist && w < best) {
			best, dist = w, d
		}
	}
	return best
}
