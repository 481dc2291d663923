package ann

import "golang.org/x/sys/cpu"

var hasAVX2 = cpu.X86.HasAVX2

// dotI16I8AVX2 sums w[j]·c[j] over n components, n a multiple of 16.
//
//go:noescape
func dotI16I8AVX2(w *int16, c *int8, n int) int32

// dotCodes is dotCodesRef with AVX2 when the processor has it: 16
// components an instruction, on codes a quarter the size of floats.
func dotCodes(w []int16, c []int8) int32 {
	n := len(w) &^ 15
	if !hasAVX2 || n == 0 {
		return dotCodesRef(w, c)
	}
	c = c[:len(w)]
	return dotI16I8AVX2(&w[0], &c[0], n) + dotCodesRef(w[n:], c[n:])
}
