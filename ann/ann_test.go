package ann

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
)

func TestDotMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, n := range []int{1, 3, 7, 8, 15, 16, 31, 64, 100, 384, 1000} {
		a, b := make([]float32, n), make([]float32, n)
		for i := range a {
			a[i], b[i] = float32(rng.NormFloat64()), float32(rng.NormFloat64())
		}
		got, want := Dot(a, b), dotRef(a, b)
		if math.Abs(float64(got-want)) > 1e-4*math.Max(1, math.Abs(float64(want))) {
			t.Errorf("n=%d: SIMD %v, reference %v", n, got, want)
		}
	}
	if Dot(nil, nil) != 0 {
		t.Error("empty dot")
	}
}

// exact is the brute-force answer: ids by descending reference dot.
func exact(vecs map[uint32][]float32, q []float32, k int, allowed *roaring.Bitmap) []uint32 {
	type r struct {
		id uint32
		s  float32
	}
	var all []r
	for id, v := range vecs {
		if allowed == nil || allowed.Contains(id) {
			all = append(all, r{id, dotRef(q, v)})
		}
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].s != all[j].s {
			return all[i].s > all[j].s
		}
		return all[i].id < all[j].id
	})
	var out []uint32
	for _, x := range all[:min(k, len(all))] {
		out = append(out, x.id)
	}
	return out
}

func ids(rs []Result) []uint32 {
	out := []uint32{}
	for _, r := range rs {
		out = append(out, r.ID)
	}
	return out
}

func TestFlatIsExact(t *testing.T) {
	const dims = 24
	data := Clustered(600, dims, 10, 0.2, 7)
	f := NewFlat(dims)
	model := map[uint32][]float32{}
	rng := rand.New(rand.NewPCG(2, 2))
	for i := 0; i < 600; i++ {
		id := uint32(rng.IntN(400)) // repeats replace
		v := data[i*dims : (i+1)*dims]
		f.Add(id, v)
		model[id] = slices.Clone(v)
		if i%7 == 0 {
			del := uint32(rng.IntN(400))
			if f.Delete(del) != (model[del] != nil) {
				t.Fatalf("Delete(%d) disagrees with the model", del)
			}
			delete(model, del)
		}
	}
	if f.Len() != len(model) {
		t.Fatalf("Len %d, model %d", f.Len(), len(model))
	}
	for id, v := range model {
		if !slices.Equal(f.Vector(id), v) {
			t.Fatalf("Vector(%d) differs", id)
		}
	}
	allowedSmall := roaring.BitmapOf(1, 5, 9, 13, 200, 399)
	allowedBig := roaring.New()
	allowedBig.AddRange(0, 300)
	for qi := 0; qi < 20; qi++ {
		q := data[qi*dims : (qi+1)*dims]
		for _, allowed := range []*roaring.Bitmap{nil, allowedSmall, allowedBig} {
			got := ids(f.Search(q, 10, allowed, nil))
			if want := exact(model, q, 10, allowed); !slices.Equal(got, want) {
				t.Fatalf("query %d: got %v, want %v", qi, got, want)
			}
		}
	}
	buf := make([]Result, 0, 10)
	if res := f.Search(data[:dims], 5, nil, buf); &res[0] != &buf[:1][0] {
		t.Error("Search did not fill the caller's buffer")
	}
}

func recallAt(got []Result, want []uint32) float64 {
	hit := 0
	for _, r := range got {
		if slices.Contains(want, r.ID) {
			hit++
		}
	}
	return float64(hit) / float64(len(want))
}

func TestIVF(t *testing.T) {
	const dims, n = 32, 5000
	data := Clustered(n, dims, 40, 0.15, 3)
	f := NewFlat(dims)
	model := map[uint32][]float32{}
	for i := 0; i < n; i++ {
		f.Add(uint32(i), data[i*dims:(i+1)*dims])
		model[uint32(i)] = data[i*dims : (i+1)*dims]
	}
	x := BuildIVF(f, IVFOptions{})
	if x.Len() != n || x.NList() != 70 || x.NProbe() != 16 {
		t.Fatalf("built %d vectors in %d lists, nprobe %d", x.Len(), x.NList(), x.NProbe())
	}
	queries := Clustered(50, dims, 40, 0.15, 99)
	var recall float64
	for qi := 0; qi < 50; qi++ {
		q := queries[qi*dims : (qi+1)*dims]
		recall += recallAt(x.Search(q, 10, nil, nil), exact(model, q, 10, nil))
	}
	if recall /= 50; recall < 0.95 {
		t.Errorf("recall@10 %.3f with the default nprobe", recall)
	}
	// Probing every cluster is exact.
	x.SetNProbe(x.NList())
	for qi := 0; qi < 10; qi++ {
		q := queries[qi*dims : (qi+1)*dims]
		if got, want := ids(x.Search(q, 10, nil, nil)), exact(model, q, 10, nil); !slices.Equal(got, want) {
			t.Fatalf("full probe: %v, want %v", got, want)
		}
	}
	// Adds, replacements and deletes without a rebuild.
	for i := 0; i < 500; i++ {
		id := uint32(i * 3)
		if i%2 == 0 {
			x.Delete(id)
			delete(model, id)
		} else {
			v := queries[(i%50)*dims : (i%50+1)*dims]
			x.Add(id, v)
			model[id] = v
		}
	}
	x.Add(100000, queries[:dims])
	model[100000] = queries[:dims]
	if x.Len() != len(model) {
		t.Fatalf("Len %d, model %d", x.Len(), len(model))
	}
	allowed := roaring.New()
	allowed.AddRange(0, 2000)
	for qi := 0; qi < 10; qi++ {
		q := queries[qi*dims : (qi+1)*dims]
		for _, a := range []*roaring.Bitmap{nil, allowed, roaring.BitmapOf(3, 6, 100000)} {
			if got, want := ids(x.Search(q, 10, a, nil)), exact(model, q, 10, a); !slices.Equal(got, want) {
				t.Fatalf("after updates: %v, want %v", got, want)
			}
		}
	}
	if x.Drifted() {
		t.Error("drifted after 5% changes")
	}
	for i := 0; i < n+1500; i++ {
		x.Add(uint32(200000+i), data[(i%n)*dims:(i%n+1)*dims])
	}
	if !x.Drifted() {
		t.Error("not drifted after doubling")
	}
}

func TestQuantizedIVF(t *testing.T) {
	const dims, n = 48, 4000
	data := Clustered(n, dims, 30, 0.12, 11)
	f := NewFlat(dims)
	model := map[uint32][]float32{}
	for i := 0; i < n; i++ {
		f.Add(uint32(i), data[i*dims:(i+1)*dims])
		model[uint32(i)] = data[i*dims : (i+1)*dims]
	}
	x := BuildIVF(f, IVFOptions{Quantize: true})
	for _, l := range x.lists {
		if l.vecs != nil {
			t.Fatal("a quantised index keeps float vectors")
		}
	}
	queries := Clustered(40, dims, 30, 0.12, 12)
	var recall float64
	for qi := 0; qi < 40; qi++ {
		q := queries[qi*dims : (qi+1)*dims]
		got := x.Search(q, 10, nil, nil)
		recall += recallAt(got, exact(model, q, 10, nil))
		for _, r := range got { // close to the float score
			if d := math.Abs(float64(r.Score - Dot(q, model[r.ID]))); d > 0.02 {
				t.Fatalf("score of %d off by %.4f", r.ID, d)
			}
		}
	}
	// These clusters are tight (many near ties); on real text the semantic
	// package measures 0.99 (TestQuantisedRecall).
	if recall /= 40; recall < 0.93 {
		t.Errorf("quantised recall@10 %.3f", recall)
	}
	x.Add(99999, queries[:dims])
	x.Delete(5)
	x.SetNProbe(x.NList())
	decoded := map[uint32][]float32{}
	x.Each(func(id uint32, v []float32) bool {
		decoded[id] = slices.Clone(v)
		if !slices.Equal(v, x.Vector(id)) {
			t.Fatalf("Each and Vector disagree on %d", id)
		}
		return true
	})
	if len(decoded) != n || decoded[5] != nil || decoded[99999] == nil {
		t.Fatalf("%d vectors after one add and one delete", len(decoded))
	}
	q := queries[:dims]
	if got, want := ids(x.Search(q, 10, nil, nil)), exact(decoded, q, 10, nil); !slices.Equal(got, want) {
		t.Fatalf("full probe: %v, want the decoded vectors' %v", got, want)
	}
	allowed := roaring.BitmapOf(1, 2, 3, 99999)
	if got, want := ids(x.Search(q, 10, allowed, nil)), exact(decoded, q, 10, allowed); !slices.Equal(got, want) {
		t.Fatalf("sparse filter: %v, want %v", got, want)
	}
	blocks := encode(t, x)
	y, err := decode(blocks)
	if err != nil || !slices.EqualFunc(blocks, encode(t, y), bytes.Equal) {
		t.Fatalf("quantised round trip: %v", err)
	}
	if !slices.Equal(ids(x.Search(q, 10, nil, nil)), ids(y.Search(q, 10, nil, nil))) {
		t.Fatal("decoded quantised index answers differently")
	}
	// Rebuilt from itself, it keeps its scales and so its codes.
	z := BuildIVF(x, IVFOptions{Quantize: true})
	z.Each(func(id uint32, v []float32) bool {
		if !slices.Equal(v, decoded[id]) {
			t.Fatalf("rebuilding changed vector %d", id)
		}
		return true
	})
}

func TestQuantizeInPlace(t *testing.T) {
	const dims, n = 32, 3000
	data := Clustered(n, dims, 20, 0.1, 3)
	f := NewFlat(dims)
	for i := 0; i < n; i++ {
		f.Add(uint32(i), data[i*dims:(i+1)*dims])
	}
	x := BuildIVF(f, IVFOptions{})
	x.SetNProbe(x.NList())
	x.Quantize()
	if !x.Quantized() {
		t.Fatal("not quantised")
	}
	var worst float64
	x.Each(func(id uint32, v []float32) bool {
		for j, c := range v {
			worst = max(worst, math.Abs(float64(c-f.Vector(id)[j])))
		}
		return true
	})
	if worst > 0.02 {
		t.Errorf("a component moved by %.4f", worst)
	}
	queries := Clustered(20, dims, 20, 0.1, 4)
	var recall float64
	for qi := 0; qi < 20; qi++ {
		q := queries[qi*dims : (qi+1)*dims]
		recall += recallAt(x.Search(q, 10, nil, nil), ids(f.Search(q, 10, nil, nil)))
	}
	if recall /= 20; recall < 0.95 {
		t.Errorf("recall@10 %.3f after quantising in place", recall)
	}
}

// TestDecodeLegacyQuantised loads an index written by the version that kept
// floats beside codes (quantised flag 1): it comes back as codes.
func TestDecodeLegacyQuantised(t *testing.T) {
	const dims = 8
	data := Clustered(500, dims, 5, 0.1, 9)
	f := NewFlat(dims)
	for i := 0; i < 500; i++ {
		f.Add(uint32(i), data[i*dims:(i+1)*dims])
	}
	x := BuildIVF(f, IVFOptions{NList: 4})
	q := newQuantizer(data, dims)
	b := append([]byte{kindIVF}, binary.AppendUvarint(nil, dims)...)
	for _, v := range []int{500, x.nprobe, x.trained, len(x.lists)} {
		b = binary.AppendUvarint(b, uint64(v))
	}
	b = appendF32s(b, x.cent)
	b = append(b, quantLegacy, 40) // rerank 40
	b = appendF32s(b, q.scale)
	blocks := [][]byte{b}
	for c := range x.lists {
		if err := encodeFloats(c, dims, x.lists[c].ids, x.lists[c].vecs, func(b []byte) error {
			blocks = append(blocks, bytes.Clone(b))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	idx, err := decode(blocks)
	if err != nil {
		t.Fatal(err)
	}
	y := idx.(*IVF)
	if !y.Quantized() || y.Len() != 500 {
		t.Fatalf("quantised %v, %d vectors", y.Quantized(), y.Len())
	}
	for id := uint32(0); id < 500; id++ {
		want := make([]float32, dims)
		q.decode(want, q.appendCodes(nil, f.Vector(id)))
		if !slices.Equal(y.Vector(id), want) {
			t.Fatalf("vector %d: %v, want %v", id, y.Vector(id), want)
		}
	}
}

func TestDotCodesMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{0, 1, 15, 16, 17, 31, 32, 33, 48, 100, 384, 385, 1024} {
		for trial := 0; trial < 20; trial++ {
			w, c := make([]int16, n), make([]int8, n+trial%3)
			for j := range w {
				w[j] = int16(rng.IntN(65535) - 32767)
			}
			for j := range c {
				c[j] = int8(rng.IntN(255) - 127)
			}
			if trial == 0 { // the extremes
				for j := range w {
					w[j], c[j] = 32767, -127
				}
			}
			if got, want := dotCodes(w, c), dotCodesRef(w, c); got != want {
				t.Fatalf("n=%d: %d, want %d", n, got, want)
			}
		}
	}
}

func FuzzDotCodes(f *testing.F) {
	f.Add([]byte{1, 2, 3}, []byte{4, 5, 6})
	f.Fuzz(func(t *testing.T, a, b []byte) {
		n := min(len(a)/2, len(b))
		w, c := make([]int16, n), make([]int8, n)
		for j := range w {
			w[j] = int16(binary.LittleEndian.Uint16(a[2*j:]))
			if c[j] = int8(b[j]); c[j] == math.MinInt8 {
				c[j] = -127
			}
		}
		if got, want := dotCodes(w, c), dotCodesRef(w, c); got != want {
			t.Fatalf("%d, want %d", got, want)
		}
	})
}

func TestKmeansIsDeterministic(t *testing.T) {
	data := Clustered(2000, 16, 8, 0.2, 5)
	a, b := kmeans(data, 16, 8, 5, 42), kmeans(data, 16, 8, 5, 42)
	if !slices.Equal(a, b) {
		t.Fatal("same input, different centroids")
	}
}

func encode(t testing.TB, idx Index) [][]byte {
	var blocks [][]byte
	if err := Encode(idx, func(b []byte) error { blocks = append(blocks, bytes.Clone(b)); return nil }); err != nil {
		t.Fatal(err)
	}
	return blocks
}

func decode(blocks [][]byte) (Index, error) {
	i := 0
	return Decode(func() ([]byte, error) {
		if i == len(blocks) {
			return nil, errors.New("no more blocks")
		}
		i++
		return blocks[i-1], nil
	})
}

func TestCodecRoundTrip(t *testing.T) {
	const dims = 16
	data := Clustered(3000, dims, 12, 0.2, 8)
	f := NewFlat(dims)
	for i := 0; i < 3000; i++ {
		f.Add(uint32(i*2), data[i*dims:(i+1)*dims])
	}
	f.Delete(10)
	x := BuildIVF(f, IVFOptions{NProbe: 5})
	for _, idx := range []Index{f, x} {
		blocks := encode(t, idx)
		got, err := decode(blocks)
		if err != nil {
			t.Fatalf("%T: %v", idx, err)
		}
		if again := encode(t, got); !slices.EqualFunc(blocks, again, bytes.Equal) {
			t.Fatalf("%T: re-encoding changed the bytes", idx)
		}
		idx.Each(func(id uint32, v []float32) bool {
			w := got.Vector(id)
			for i := range v {
				if math.Float32bits(v[i]) != math.Float32bits(w[i]) {
					t.Fatalf("%T: vector %d not bit-identical", idx, id)
				}
			}
			return true
		})
		q := data[:dims]
		if !slices.Equal(ids(idx.Search(q, 10, nil, nil)), ids(got.Search(q, 10, nil, nil))) {
			t.Fatalf("%T: decoded index answers differently", idx)
		}
	}
}

func TestDecodeRejectsDamage(t *testing.T) {
	f := NewFlat(4)
	f.Add(1, []float32{1, 0, 0, 0})
	f.Add(2, []float32{0, 1, 0, 0})
	blocks := encode(t, f)
	nan := slices.Clone(blocks)
	nan[1] = slices.Clone(nan[1])
	copy(nan[1][len(nan[1])-4:], []byte{0, 0, 0xc0, 0x7f}) // NaN
	dup := slices.Clone(blocks)
	dup[1] = slices.Clone(dup[1])
	copy(dup[1][2+4+16:], dup[1][2:6]) // second id = first id
	for name, bad := range map[string][][]byte{
		"nan": nan, "dup": dup, "short": {blocks[0], blocks[1][:len(blocks[1])-1]},
		"missing": {blocks[0]}, "kind": {{9, 4, 2}, blocks[1]}, "dims": {{1, 0, 2}, blocks[1]},
	} {
		if _, err := decode(bad); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func FuzzDecode(f *testing.F) {
	flat := NewFlat(4)
	flat.Add(1, []float32{1, 0, 0, 0})
	flat.Add(7, []float32{0, 0.6, 0.8, 0})
	b := encode(f, flat)
	f.Add(b[0], b[1])
	x := BuildIVF(flat, IVFOptions{NList: 2})
	b = encode(f, x)
	f.Add(b[0], bytes.Join(b[1:], nil))
	b = encode(f, BuildIVF(flat, IVFOptions{NList: 1, Quantize: true}))
	f.Add(b[0], bytes.Join(b[1:], nil))
	// An IVF header whose cluster count times its dimensions wraps around.
	huge := binary.AppendUvarint([]byte{kindIVF}, 4096)
	huge = binary.AppendUvarint(huge, 1)     // vectors
	huge = binary.AppendUvarint(huge, 1)     // nprobe
	huge = binary.AppendUvarint(huge, 1)     // trained
	huge = binary.AppendUvarint(huge, 1<<52) // clusters
	f.Add(huge, []byte{})
	f.Fuzz(func(t *testing.T, hdr, block []byte) {
		idx, err := decode([][]byte{hdr, block})
		if err != nil {
			return
		}
		q := []float32{0.5, 0.5, 0.5, 0.5}
		if idx.Dims() == 4 {
			idx.Search(q, 3, nil, nil)
			idx.Search(q, 3, roaring.BitmapOf(1), nil)
		}
		encode(t, idx)
	})
}

// TestUnevenClustersAreNotDrift: data with one dense clump (near-duplicate
// texts) leaves one list far above the mean after every build; that is not
// drift, or the owner would rebuild forever. Twice that clump is.
func TestUnevenClustersAreNotDrift(t *testing.T) {
	const dims, n = 32, 6000
	data := Clustered(n, dims, 40, 0.15, 5)
	clump := data[:dims]
	f := NewFlat(dims)
	for i := 0; i < n; i++ {
		v := data[i*dims : (i+1)*dims]
		if i%3 == 0 { // a third at one point
			v = clump
		}
		f.Add(uint32(i), v)
	}
	x := BuildIVF(f, IVFOptions{Quantize: true})
	if b := x.biggest(); b <= 16*(n/x.NList()+1) {
		t.Fatalf("the clump's list holds %d, not uneven enough for this test", b)
	}
	if x.Drifted() {
		t.Fatal("drifted right after a build")
	}
	y, err := decode(encode(t, x))
	if err != nil {
		t.Fatal(err)
	}
	if y.(*IVF).Drifted() {
		t.Fatal("drifted right after loading")
	}
	for i := 0; i < n && x.biggest() <= 2*x.skew; i++ { // the clump more than doubles, the index does not
		if i%3 != 0 {
			x.Delete(uint32(i))
			x.Add(uint32(n+i), clump)
		}
	}
	if !x.Drifted() {
		t.Fatalf("not drifted with the largest list at %d, %d when built", x.biggest(), x.skew)
	}
}
