//go:build !amd64

package embed

func addBF16(dst []float32, row []uint16) { addBF16Ref(dst, row) }
