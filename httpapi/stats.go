package httpapi

import (
	"slices"
	"sync"
	"time"

	"github.com/sift-search/sift/internal/textcut"
)

// stats keeps what the dashboard shows of the traffic: the latest queries
// and, per endpoint, the durations of the latest requests. Memory is fixed:
// rings of recentQueries queries and latencySamples durations.
type stats struct {
	started time.Time

	mu      sync.Mutex
	recent  [recentQueries]queryRecord
	next    int // where the next query goes in recent
	queries int // queries recorded in all
	lat     map[string]*durations
}

const (
	recentQueries  = 50
	latencySamples = 1024
)

type queryRecord struct {
	At       time.Time
	Endpoint string
	Query    string
	Results  int
	Took     time.Duration
}

type durations struct {
	d     [latencySamples]time.Duration
	n     int // samples held
	next  int
	total int // requests in all
}

func newStats() *stats {
	return &stats{started: time.Now(), lat: map[string]*durations{}}
}

// record notes one query of an endpoint.
func (s *stats) record(endpoint, query string, results int, took time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recent[s.next] = queryRecord{At: time.Now(), Endpoint: endpoint, Query: textcut.Prefix(query, 200), Results: results, Took: took}
	s.next = (s.next + 1) % recentQueries
	s.queries++
	d, ok := s.lat[endpoint]
	if !ok {
		d = &durations{}
		s.lat[endpoint] = d
	}
	d.d[d.next] = took
	d.next = (d.next + 1) % latencySamples
	d.n = min(d.n+1, latencySamples)
	d.total++
}

// latencyRow is one endpoint's percentiles over its latest requests.
type latencyRow struct {
	Endpoint      string
	Requests      int
	Samples       int
	P50, P90, P99 time.Duration
	Max           time.Duration
}

// report returns the latest queries, newest first, and the latency
// percentiles per endpoint.
func (s *stats) report() ([]queryRecord, []latencyRow) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var recent []queryRecord
	for i := 1; i <= min(s.queries, recentQueries); i++ {
		recent = append(recent, s.recent[(s.next-i+recentQueries)%recentQueries])
	}
	var rows []latencyRow
	for name, d := range s.lat {
		sample := slices.Clone(d.d[:d.n])
		slices.Sort(sample)
		at := func(q float64) time.Duration { return sample[min(len(sample)-1, int(q*float64(len(sample))))] }
		rows = append(rows, latencyRow{Endpoint: name, Requests: d.total, Samples: d.n, P50: at(0.5), P90: at(0.9), P99: at(0.99), Max: sample[len(sample)-1]})
	}
	slices.SortFunc(rows, func(a, b latencyRow) int { return b.Requests - a.Requests })
	return recent, rows
}
