package embed

import "golang.org/x/sys/cpu"

var hasAVX2 = cpu.X86.HasAVX2

// addBF16AVX2 adds n widened bfloat16s at row to the float32s at dst, n a
// multiple of 8.
//
//go:noescape
func addBF16AVX2(dst *float32, row *uint16, n int)

func addBF16(dst []float32, row []uint16) {
	n := len(row) &^ 7
	if !hasAVX2 || n == 0 {
		addBF16Ref(dst, row)
		return
	}
	dst = dst[:len(row)]
	addBF16AVX2(&dst[0], &row[0], n)
	addBF16Ref(dst[n:], row[n:])
}
