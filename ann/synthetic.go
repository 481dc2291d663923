package ann

import "math/rand/v2"

// Clustered returns n unit vectors of dims dimensions around `clusters`
// random centres, each a centre plus Gaussian noise of the given spread per
// component, from a fixed seed: the synthetic data of the tests and
// benchmarks (real embeddings are clustered by topic, not uniform).
func Clustered(n, dims, clusters int, spread float64, seed uint64) []float32 {
	rng := rand.New(rand.NewPCG(seed, 0xA11))
	centres := make([]float32, clusters*dims)
	for i := range centres {
		centres[i] = float32(rng.NormFloat64())
	}
	for c := 0; c < clusters; c++ {
		Normalize(centres[c*dims : (c+1)*dims])
	}
	out := make([]float32, n*dims)
	for i := 0; i < n; i++ {
		c := rng.IntN(clusters)
		v := out[i*dims : (i+1)*dims]
		for j := range v {
			v[j] = centres[c*dims+j] + float32(rng.NormFloat64()*spread)
		}
		Normalize(v)
	}
	return out
}
