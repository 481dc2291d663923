package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// BenchmarkAskFirstEvent measures POST /api/ask with Accept:
// text/event-stream and the extractive answerer over 100k chat messages
// (windows, chunk index and vectors built): the time from sending the
// question to reading the first event (the sources, after retrieval), and
// to the end of the answer. Questions are drawn from the corpus like the
// search benchmarks' queries.
func BenchmarkAskFirstEvent(b *testing.B) {
	n := 100_000
	if testing.Short() {
		n = 10_000
	}
	c := builtEngine(b, n)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := newServer(b, c.e, c.x, "http://"+ln.Addr().String())
	go srv.Serve(ln)
	defer srv.Shutdown(context.Background())
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	qs := NewSynth(9, vocabSize, channels)
	bodies := make([]string, 500)
	for i := range bodies {
		q, _ := json.Marshal(map[string]string{"question": qs.Query(c.sample[qs.rng.IntN(len(c.sample))])})
		bodies[i] = string(q)
	}
	first := make([]time.Duration, 0, b.N)
	whole := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		req, _ := http.NewRequest("POST", "http://"+ln.Addr().String()+"/api/ask", strings.NewReader(bodies[i%len(bodies)]))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "text/event-stream")
		t := time.Now()
		res, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		if res.StatusCode != 200 {
			b.Fatalf("status %d", res.StatusCode)
		}
		rd := bufio.NewReader(res.Body)
		got, done := false, false
		for !done {
			line, err := rd.ReadString('\n')
			if err != nil {
				b.Fatalf("stream ended without done: %v", err)
			}
			if strings.HasPrefix(line, "data: ") {
				if !got {
					first, got = append(first, time.Since(t)), true
				}
				done = strings.Contains(line, `"type":"done"`) || strings.Contains(line, `"type":"error"`)
			}
		}
		whole = append(whole, time.Since(t))
		res.Body.Close()
	}
	b.StopTimer()
	slices.Sort(first)
	slices.Sort(whole)
	b.ReportMetric(float64(first[len(first)/2].Microseconds())/1000, "first-p50-ms")
	b.ReportMetric(float64(first[len(first)*99/100].Microseconds())/1000, "first-p99-ms")
	b.ReportMetric(float64(whole[len(whole)/2].Microseconds())/1000, "answer-p50-ms")
	b.ReportMetric(float64(c.x.Status().Chunks), "chunks")
}
