package ann

import (
	"math/rand/v2"
	"runtime"
	"sync"
)

// kmeans runs spherical k-means (clusters by inner product, centroids
// re-normalised) on the n dims-dimensional vectors of data, from a
// k-means++ start with a fixed seed, so equal input gives equal centroids.
// It returns k*dims centroid components.
func kmeans(data []float32, dims, k, iters int, seed uint64) []float32 {
	n := len(data) / dims
	if k > n {
		k = n
	}
	rng := rand.New(rand.NewPCG(seed, 0xC1A5))
	cent := make([]float32, 0, k*dims)
	vec := func(i int) []float32 { return data[i*dims : (i+1)*dims] }
	// k-means++: each next centroid is drawn with probability growing with
	// its distance (1 - best similarity) to the centroids chosen so far.
	cent = append(cent, vec(rng.IntN(n))...)
	dist := make([]float64, n)
	for i := range dist {
		dist[i] = float64(1 - Dot(vec(i), cent[:dims]))
	}
	for c := 1; c < k; c++ {
		var sum float64
		for _, d := range dist {
			sum += max(d, 0)
		}
		pick := rng.IntN(n)
		if sum > 0 {
			r := rng.Float64() * sum
			for i, d := range dist {
				if r -= max(d, 0); r <= 0 {
					pick = i
					break
				}
			}
		}
		cent = append(cent, vec(pick)...)
		newest := cent[c*dims:]
		for i := range dist {
			if d := float64(1 - Dot(vec(i), newest)); d < dist[i] {
				dist[i] = d
			}
		}
	}
	assign := make([]int32, n)
	for it := 0; it < iters; it++ {
		assignAll(data, dims, cent, assign)
		sums := make([]float64, k*dims)
		counts := make([]int, k)
		for i, c := range assign {
			counts[c]++
			row := sums[int(c)*dims:]
			for j, x := range vec(i) {
				row[j] += float64(x)
			}
		}
		for c := 0; c < k; c++ {
			out := cent[c*dims : (c+1)*dims]
			if counts[c] == 0 {
				copy(out, vec(rng.IntN(n))) // an empty cluster restarts at a random point
				continue
			}
			for j := range out {
				out[j] = float32(sums[c*dims+j])
			}
			Normalize(out)
		}
	}
	return cent
}

// assignAll sets assign[i] to the centroid nearest vector i, in parallel.
func assignAll(data []float32, dims int, cent []float32, assign []int32) {
	n := len(data) / dims
	workers := min(runtime.GOMAXPROCS(0), max(n/256, 1))
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			for i := lo; i < hi; i++ {
				assign[i] = int32(nearest(cent, dims, data[i*dims:(i+1)*dims]))
			}
		}(n*w/workers, n*(w+1)/workers)
	}
	wg.Wait()
}

// nearest returns the index of the centroid of highest inner product with v.
func nearest(cent []float32, dims int, v []float32) int {
	best, bestScore := 0, float32(-2)
	for c := 0; c*dims < len(cent); c++ {
		if s := Dot(v, cent[c*dims:(c+1)*dims]); s > bestScore {
			best, bestScore = c, s
		}
	}
	return best
}
