package ann

import "math"

// Scalar quantisation (optional, IVFOptions.Quantize): each component is
// stored besides as an int8 code with a per-dimension scale, the scan
// scores codes, and the rerank best candidates are scored again with the
// float vectors. Go has no SIMD for int8, so on amd64 this scan is slower
// than vek's float kernel (see the benchmarks); it is off by default.

// quantizer holds the per-dimension scales: x ≈ code × scale.
type quantizer struct {
	scale []float32
}

// newQuantizer fits scales to the largest magnitude of each dimension.
func newQuantizer(data []float32, dims int) *quantizer {
	q := &quantizer{scale: make([]float32, dims)}
	for i, x := range data {
		if a := float32(math.Abs(float64(x))); a > q.scale[i%dims] {
			q.scale[i%dims] = a
		}
	}
	for j := range q.scale {
		if q.scale[j] == 0 {
			q.scale[j] = 1
		}
		q.scale[j] /= 127
	}
	return q
}

// appendCodes appends the codes of v.
func (q *quantizer) appendCodes(dst []int8, v []float32) []int8 {
	for j, x := range v {
		c := math.Round(float64(x / q.scale[j]))
		dst = append(dst, int8(max(-127, min(127, c))))
	}
	return dst
}

// scaled returns the query multiplied by the scales, so that the inner
// product of it with a vector's codes approximates the true one.
func (q *quantizer) scaled(query []float32) []float32 {
	out := make([]float32, len(query))
	for j, x := range query {
		out[j] = x * q.scale[j]
	}
	return out
}

// dotCodes is the approximate inner product of a scaled query and codes.
func dotCodes(q []float32, c []int8) float32 {
	var s0, s1, s2, s3 float32
	j := 0
	for ; j+4 <= len(c); j += 4 {
		s0 += q[j] * float32(c[j])
		s1 += q[j+1] * float32(c[j+1])
		s2 += q[j+2] * float32(c[j+2])
		s3 += q[j+3] * float32(c[j+3])
	}
	for ; j < len(c); j++ {
		s0 += q[j] * float32(c[j])
	}
	return s0 + s1 + s2 + s3
}
