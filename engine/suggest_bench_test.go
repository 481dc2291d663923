package engine_test

import (
	"testing"

	"github.com/sift-search/sift/engine"
	"github.com/sift-search/sift/internal/demo"
	"github.com/sift-search/sift/query"
)

// BenchmarkSuggest completes queries as they are typed, on the demo
// content, for an anonymous and a privileged caller.
func BenchmarkSuggest(b *testing.B) {
	e, err := engine.Open(engine.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	if err := demo.Load(e, nil); err != nil {
		b.Fatal(err)
	}
	queries := []string{"w", "we", "webh", "how to conf", "retry back", "sched", "dst double r", "cron "}
	for _, private := range []bool{false, true} {
		name := "public"
		if private {
			name = "private"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			n := 0
			for i := 0; b.Loop(); i++ {
				s, err := e.Suggest(query.SuggestRequest{Query: queries[i%len(queries)], Private: private})
				if err != nil {
					b.Fatal(err)
				}
				n += len(s)
			}
			if n == 0 {
				b.Fatal("no suggestions")
			}
		})
	}
}
