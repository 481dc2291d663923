// Package ann holds Sift's vector indexes over unit-length float32 vectors,
// scored by inner product (cosine similarity): Flat, an exact scan, and IVF,
// an inverted file of k-means clusters of which a search scans the nprobe
// nearest. Both take an allowed-id bitmap to filter by and fill a
// caller-owned result buffer; both add and delete without a rebuild, and
// encode to bytes that decode bit-identically and are validated on decode.
//
// The inner product runs on viterin/vek's SIMD kernels (AVX2 where the CPU
// has it); the pure-Go reference kernel is what tests compare them against.
// ann imports nothing from the rest of Sift.
package ann
