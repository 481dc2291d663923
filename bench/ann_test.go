package bench

import (
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/viterin/vek/vek32"

	"github.com/sift-search/sift/ann"
)

const annDims = 384

type annSet struct {
	flat    *ann.Flat
	ivf     *ann.IVF
	ivfq    *ann.IVF // quantised, built on first use
	queries []float32
	truth   [][]uint32 // exact top 10 of each query
	flatDur time.Duration
	build   time.Duration
	buildq  time.Duration
}

var (
	annSets   = map[int]*annSet{}
	annSetsMu sync.Mutex
)

// annCorpus builds, once per size, n clustered 384-dimensional vectors
// (n/1000 clusters, noise 0.05 per component) in a Flat index and an IVF
// index (nlist = √n), 200 queries from the same distribution, and their
// exact answers (timing the flat scans on the way).
func annCorpus(b *testing.B, n int) *annSet {
	annSetsMu.Lock()
	defer annSetsMu.Unlock()
	if s, ok := annSets[n]; ok {
		return s
	}
	clear(annSets)
	runtime.GC()
	clusters := max(n/1000, 10)
	data := ann.Clustered(n, annDims, clusters, 0.05, 1)
	s := &annSet{flat: ann.NewFlat(annDims)}
	for i := 0; i < n; i++ {
		s.flat.Add(uint32(i), data[i*annDims:(i+1)*annDims])
	}
	data = nil
	start := time.Now()
	s.ivf = ann.BuildIVF(s.flat, ann.IVFOptions{})
	s.build = time.Since(start)
	// Queries: new points around the same centres (same seed, drawn after
	// the corpus).
	s.queries = ann.Clustered(200+n, annDims, clusters, 0.05, 1)[n*annDims:]
	buf := make([]ann.Result, 0, 10)
	start = time.Now()
	for q := 0; q < 200; q++ {
		res := s.flat.Search(s.queries[q*annDims:(q+1)*annDims], 10, nil, buf)
		var ids []uint32
		for _, r := range res {
			ids = append(ids, r.ID)
		}
		s.truth = append(s.truth, ids)
	}
	s.flatDur = time.Since(start) / 200
	annSets[n] = s
	return s
}

// readBandwidth measures how fast this machine streams memory: the best of
// three passes summing a buffer far larger than the caches.
func readBandwidth(buf []float32) float64 {
	best := 0.0
	var sink float32
	for i := 0; i < 3; i++ {
		start := time.Now()
		sink += vek32.Sum(buf)
		best = max(best, float64(len(buf)*4)/time.Since(start).Seconds())
	}
	_ = sink
	return best
}

// BenchmarkANN compares an exact flat scan with IVF on clustered vectors:
// queries per second of each, IVF's recall@10 against the exact answers,
// and the flat scan's time against the memory-bandwidth bound (the time to
// read every vector once at the measured read bandwidth).
func BenchmarkANN(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		b.Run(fmt.Sprintf("flat/%s", label(n)), func(b *testing.B) {
			skipLarge(b, n)
			s := annCorpus(b, n)
			bufBytes := make([]float32, 256<<20) // 1 GiB, beyond every cache
			for i := range bufBytes {
				bufBytes[i] = 1
			}
			bw := readBandwidth(bufBytes)
			bufBytes = nil
			res := make([]ann.Result, 0, 10)
			b.SetBytes(int64(n * annDims * 4))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				q := s.queries[(i%200)*annDims : (i%200+1)*annDims]
				res = s.flat.Search(q, 10, nil, res)
			}
			perQuery := b.Elapsed().Seconds() / float64(b.N)
			bound := float64(n*annDims*4) / bw
			b.ReportMetric(1/perQuery, "queries/s")
			b.ReportMetric(bw/1e9, "read-GB/s")
			b.ReportMetric(perQuery/bound, "x-bandwidth-bound")
		})
		for _, quant := range []bool{false, true} {
			name := "ivf"
			if quant {
				name = "ivf-int8"
			}
			b.Run(fmt.Sprintf("%s/%s", name, label(n)), func(b *testing.B) {
				skipLarge(b, n)
				s := annCorpus(b, n)
				idx, build := s.ivf, s.build
				if quant {
					if s.ivfq == nil {
						start := time.Now()
						s.ivfq = ann.BuildIVF(s.flat, ann.IVFOptions{Quantize: true})
						s.buildq = time.Since(start)
					}
					idx, build = s.ivfq, s.buildq
				}
				res := make([]ann.Result, 0, 10)
				recall := 0.0
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					q := s.queries[(i%200)*annDims : (i%200+1)*annDims]
					res = idx.Search(q, 10, nil, res)
					if i < 200 {
						hit := 0
						for _, r := range res {
							if slices.Contains(s.truth[i], r.ID) {
								hit++
							}
						}
						recall += float64(hit) / 10
					}
				}
				perQuery := b.Elapsed().Seconds() / float64(b.N)
				b.ReportMetric(1/perQuery, "queries/s")
				b.ReportMetric(recall/float64(min(b.N, 200)), "recall@10")
				b.ReportMetric(s.flatDur.Seconds()/perQuery, "x-flat-speed")
				b.ReportMetric(float64(idx.NList()), "nlist")
				b.ReportMetric(float64(idx.NProbe()), "nprobe")
				b.ReportMetric(build.Seconds(), "build-s")
			})
		}
	}
}
