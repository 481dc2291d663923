package bench

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sift-search/sift/engine"
	"github.com/sift-search/sift/internal/demo"
	"github.com/sift-search/sift/semantic"
)

// mcpQueries are questions about the demo content.
var mcpQueries = []string{
	"how do I retry a failed job", "webhook signature mismatch behind nginx", "too many connections to postgres",
	"what does max_attempts count", "run a job every weekday at 9", "dead letter queue", "wren migrate from 1.x",
	"prometheus metrics for runs", "timezone of cron schedules", "how to pause a queue",
}

// BenchmarkMCPSemanticSearch measures the MCP semantic_search round trip
// (the SDK's client, streamable HTTP on loopback: JSON-RPC, the tool's
// argument decoding and its structured result) on the demo corpus, against
// the same search over GET /api/semantic-search. It reports p50 and p99.
func BenchmarkMCPSemanticSearch(b *testing.B) {
	e, x, err := semantic.Open(engine.Options{}.OpenWith, semantic.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	if err := demo.Load(e, nil); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := x.Wait(ctx); err != nil {
		b.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	srv := newServer(b, e, x, base)
	go srv.Serve(ln)
	defer srv.Shutdown(context.Background())
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}

	b.Run("mcp", func(b *testing.B) {
		client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
		cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: hc}, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		reportLatency(b, func(i int) {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "semantic_search",
				Arguments: map[string]any{"q": mcpQueries[i%len(mcpQueries)], "limit": 10}})
			if err != nil || res.IsError {
				b.Fatalf("semantic_search: %v %v", err, res)
			}
		})
	})
	b.Run("http", func(b *testing.B) {
		reportLatency(b, func(i int) {
			res, err := hc.Get(base + "/api/semantic-search?limit=10&q=" + url.QueryEscape(mcpQueries[i%len(mcpQueries)]))
			if err != nil {
				b.Fatal(err)
			}
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode != 200 {
				b.Fatalf("status %d", res.StatusCode)
			}
		})
	})
}

// reportLatency runs op b.N times and reports its p50 and p99.
func reportLatency(b *testing.B, op func(i int)) {
	b.ReportAllocs()
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t := time.Now()
		op(i)
		lat = append(lat, time.Since(t))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}
