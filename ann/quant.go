package ann

import "math"

// Scalar quantisation (IVFOptions.Quantize): each vector is stored as
// dims int8 codes, x[j] ≈ code[j] × scale[j], with one scale per dimension
// fitted to the largest magnitude the training sample holds in it — a
// quarter of the float vectors' memory, and no float copy kept. A search
// multiplies the float query by the scales and rounds it to int16 (an
// error of 1/65,534 of its largest component), so the scores are inner
// products of the float query with the quantised vectors ("asymmetric"
// distance): only the vectors' rounding is lost. bench's BenchmarkANN and
// semantic's recall test measure what that costs in recall@10.
type quantizer struct {
	scale []float32
}

// newQuantizer fits scales to the largest magnitude of each dimension.
func newQuantizer(data []float32, dims int) *quantizer {
	q := &quantizer{scale: make([]float32, dims)}
	q.widen(data)
	q.fit()
	return q
}

// widen raises each scale to the largest magnitude data holds in its
// dimension (before fit).
func (q *quantizer) widen(data []float32) {
	for i, x := range data {
		j := i % len(q.scale)
		q.scale[j] = max(q.scale[j], float32(math.Abs(float64(x))))
	}
}

// fit turns the largest magnitudes into scales: ±127 codes span them.
func (q *quantizer) fit() {
	for j := range q.scale {
		if q.scale[j] == 0 {
			q.scale[j] = 1
		}
		q.scale[j] /= 127
	}
}

// appendCodes appends the codes of v, clamped to ±127 (a component beyond
// the trained range keeps its sign and the largest magnitude).
func (q *quantizer) appendCodes(dst []int8, v []float32) []int8 {
	for j, x := range v {
		c := math.Round(float64(x / q.scale[j]))
		dst = append(dst, int8(max(-127, min(127, c))))
	}
	return dst
}

// decode writes the vector codes stand for into dst.
func (q *quantizer) decode(dst []float32, codes []int8) {
	for j, c := range codes {
		dst[j] = float32(c) * q.scale[j]
	}
}

// query is a query prepared for scoring codes: Σ w[j]·code[j] × unit is
// its inner product with the quantised vector.
type query struct {
	w    []int16
	unit float32
}

// prepare multiplies q by the scales and rounds the products to int16.
func (q *quantizer) prepare(v []float32) query {
	f := make([]float32, len(v))
	var big float32
	for j, x := range v {
		f[j] = x * q.scale[j]
		big = max(big, float32(math.Abs(float64(f[j]))))
	}
	out := query{w: make([]int16, len(v)), unit: 1}
	if big == 0 {
		return out
	}
	// 32767·127·dims fits an int32 for dims up to 516; beyond that the
	// query is rounded more coarsely so that sums cannot overflow.
	top := float32(math.MaxInt16)
	if lim := float32(math.MaxInt32 / (127 * len(v))); lim < top {
		top = lim
	}
	out.unit = big / top
	for j, x := range f {
		out.w[j] = int16(math.Round(float64(x / out.unit)))
	}
	return out
}

// score is the query's inner product with a vector's codes.
func (p query) score(codes []int8) float32 {
	return float32(dotCodes(p.w, codes)) * p.unit
}

// dotCodesRef is the pure-Go inner product of w and the codes (len(c) ≥
// len(w)); dotCodes is the same with the machine's vector instructions.
func dotCodesRef(w []int16, c []int8) int32 {
	c = c[:len(w)]
	var s0, s1, s2, s3 int32
	j := 0
	for ; j+4 <= len(w); j += 4 {
		s0 += int32(w[j]) * int32(c[j])
		s1 += int32(w[j+1]) * int32(c[j+1])
		s2 += int32(w[j+2]) * int32(c[j+2])
		s3 += int32(w[j+3]) * int32(c[j+3])
	}
	for ; j < len(w); j++ {
		s0 += int32(w[j]) * int32(c[j])
	}
	return s0 + s1 + s2 + s3
}

// scanCodes scores each allowed vector of a contiguous run of codes
// (ids[i]'s at codes[i*d:(i+1)*d]) and keeps the best in top.
func scanCodes(q query, ids []uint32, codes []int8, d int, flt *filter, top *topK) {
	for p, id := range ids {
		if !flt.ok(id) {
			continue
		}
		score := q.score(codes[p*d : p*d+d])
		if !top.full() || score > top.h[0].Score {
			top.push(id, score)
		}
	}
}
