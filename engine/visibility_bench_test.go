package engine

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/sift-search/sift/query"
	"github.com/sift-search/sift/record"
)

// BenchmarkSearchHidden: full-text searches over messages, a quarter of
// them in private channels, from an anonymous caller (who ranks by the
// statistics of public messages) and an authenticated one (by all), over
// corpus sizes. Queries are two words of a Zipf-like vocabulary.
func BenchmarkSearchHidden(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		e := openMem(b)
		rng := rand.New(rand.NewPCG(1, 2))
		word := func() string { return fmt.Sprint("w", int(rng.ExpFloat64()*300)) }
		if _, err := e.PutSource(record.Source{ID: "s", Name: "S", Type: "slack", Enabled: true}); err != nil {
			b.Fatal(err)
		}
		var chans []record.Channel
		for c := range 8 {
			chans = append(chans, record.Channel{SourceID: "s", ID: fmt.Sprint("c", c), Name: fmt.Sprint("room ", c), Private: c%4 == 0})
		}
		if _, err := e.PutChannels(chans); err != nil {
			b.Fatal(err)
		}
		batch := make([]record.Message, 0, 4096)
		for i := range n {
			ws := make([]string, 8+rng.IntN(12))
			for j := range ws {
				ws[j] = word()
			}
			batch = append(batch, record.Message{SourceID: "s", ChannelID: fmt.Sprint("c", i%8), ID: fmt.Sprint(i),
				Content: strings.Join(ws, " "), Timestamp: t0.Add(time.Duration(i) * time.Second)})
			if len(batch) == cap(batch) || i == n-1 {
				putMsgs(b, e, batch)
				batch = batch[:0]
			}
		}
		qs := make([]string, 1000)
		for i := range qs {
			qs[i] = word() + " " + word()
		}
		for _, private := range []bool{false, true} {
			b.Run(fmt.Sprintf("n=%d/private=%v", n, private), func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; b.Loop(); i++ {
					if _, err := e.Search(query.SearchRequest{Query: qs[i%len(qs)], Limit: 20, Private: private}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
