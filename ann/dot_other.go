//go:build !amd64

package ann

func dotCodes(w []int16, c []int8) int32 { return dotCodesRef(w, c) }
