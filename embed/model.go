package embed

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
	"slices"
	"strings"

	"github.com/viterin/vek/vek32"

	"github.com/sift-search/sift/tokenizer"
)

// The built-in embedder is random indexing (Kanerva et al.; Sahlgren 2005):
//
//   - every term has a fixed sparse random "index vector" (8 components of
//     ±1 among 384, drawn from a hash of the term);
//   - training sums, for every occurrence of a term, the idf-weighted index
//     vectors of the other terms of its text: the term's context vector,
//     which approximates its row of a co-occurrence matrix projected to 384
//     dimensions, so terms used in the same texts get similar vectors;
//   - a term's embedding is its normalised context vector plus its own
//     normalised index vector (which keeps exact words distinct);
//   - a text's embedding is the idf-weighted sum of its terms' embeddings,
//     normalised, with the corpus's common component removed (Arora et al.,
//     "A simple but tough-to-beat baseline for sentence embeddings", 2017).
//
// Terms outside the trained vocabulary (or every term, before training)
// contribute their index vector alone, which is plain word hashing.
const (
	// Dims is the dimension of the built-in embedder's vectors.
	Dims = 384
	// indexNonzeros is the number of ±1 components of an index vector.
	indexNonzeros = 8
	// maxVocab bounds the trained vocabulary: the terms of highest
	// document frequency (those seen in at least two texts).
	maxVocab = 50_000
	// pcSample bounds the texts the common component is computed on.
	pcSample = 20_000
)

// Model is the built-in embedder: deterministic, pure Go, nothing
// downloaded. Its methods are safe for concurrent use.
type Model struct {
	name    string
	vocab   map[string]int32
	rows    []uint16     // len(vocab)*Dims: idf-weighted term embeddings, bfloat16
	oovIDF  float32      // weight of a term outside the vocabulary
	pc      []float32    // common component, unit length; nil when untrained
	texts   int          // texts trained on
	workers chan *worker // idle workers; a channel, not a sync.Pool, so their caches outlive a GC
}

type worker struct {
	an   *tokenizer.Analyzer
	toks []tokenizer.Token
	idx  [indexNonzeros]sparse
}

type sparse struct {
	i int
	v float32
}

// Untrained returns the built-in embedder before any training: word
// hashing, every term weighted alike.
func Untrained() *Model {
	m := &Model{vocab: map[string]int32{}, oovIDF: 1, workers: make(chan *worker, maxIdleWorkers)}
	m.name = "builtin-ri1-untrained"
	return m
}

// Name identifies the model: vectors of two models with different names
// are not comparable.
func (m *Model) Name() string { return m.name }

// Dims is the vector dimension.
func (m *Model) Dims() int { return Dims }

// Trained reports how many texts the model was trained on (0 = untrained).
func (m *Model) Trained() int { return m.texts }

// Vocab is the number of trained terms.
func (m *Model) Vocab() int { return len(m.vocab) }

func (m *Model) worker() *worker {
	select {
	case w := <-m.workers:
		return w
	default:
	}
	opts := tokenizer.DefaultOptions()
	opts.StemCacheSize = 1 << 16
	return &worker{an: tokenizer.New(opts)}
}

func (m *Model) release(w *worker) {
	select {
	case m.workers <- w:
	default:
	}
}

// maxIdleWorkers bounds the analyzers a model keeps warm.
const maxIdleWorkers = 8

// terms appends to w.toks the terms of text that carry meaning: not stop
// words, not compounds kept whole (their parts are there).
func (w *worker) terms(text string) []tokenizer.Token {
	w.toks = w.an.Append(w.toks[:0], text, 0)
	out := w.toks[:0]
	for _, t := range w.toks {
		if t.Flags&(tokenizer.Stop|tokenizer.Whole) == 0 {
			out = append(out, t)
		}
	}
	w.toks = out
	return out
}

// indexVector fills dst with term's sparse random index vector: positions
// and signs drawn by SplitMix64 from the term's FNV-1a hash. It allocates
// nothing.
func indexVector(dst *[indexNonzeros]sparse, term string) {
	state := uint64(14695981039346656037)
	for i := 0; i < len(term); i++ {
		state ^= uint64(term[i])
		state *= 1099511628211
	}
	for k := 0; k < indexNonzeros; {
		state += 0x9e3779b97f4a7c15
		z := state
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
		z = (z ^ (z >> 27)) * 0x94d049bb133111eb
		z ^= z >> 31
		i := int(z % Dims)
		dup := false
		for _, s := range dst[:k] {
			dup = dup || s.i == i
		}
		if dup {
			continue
		}
		v := float32(1)
		if z>>63 == 0 {
			v = -1
		}
		dst[k] = sparse{i, v}
		k++
	}
}

// indexScale normalises an index vector (its norm is √indexNonzeros).
var indexScale = float32(1 / math.Sqrt(indexNonzeros))

// Embed returns the embeddings of texts.
func (m *Model) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = make([]float32, Dims)
		m.EmbedInto(out[i], t)
	}
	return out, nil
}

// EmbedInto writes the embedding of text into dst (Dims long). A text with
// no meaningful term gets the zero vector.
func (m *Model) EmbedInto(dst []float32, text string) {
	clear(dst)
	w := m.worker()
	defer m.release(w)
	for _, t := range w.terms(text) {
		if r, ok := m.vocab[t.Term]; ok {
			addBF16(dst, m.rows[int(r)*Dims:int(r+1)*Dims])
			continue
		}
		indexVector(&w.idx, t.Term)
		for _, s := range w.idx {
			dst[s.i] += m.oovIDF * indexScale * s.v
		}
	}
	m.finish(dst)
}

// finish normalises v and removes the common component.
func (m *Model) finish(v []float32) {
	if !normalize(v) || m.pc == nil {
		return
	}
	p := vek32.Dot(v, m.pc)
	for i := range v {
		v[i] -= p * m.pc[i]
	}
	normalize(v)
}

func normalize(v []float32) bool {
	n := vek32.Norm(v)
	if n == 0 || math.IsNaN(float64(n)) || math.IsInf(float64(n), 0) {
		clear(v)
		return false
	}
	vek32.MulNumber_Inplace(v, 1/n)
	return true
}

// Train builds a model from a corpus, which each calls fn for every text
// (the same texts in the same order both times: training makes two passes).
// Equal corpora give equal models.
func Train(each func(fn func(text string))) *Model {
	m := &Model{vocab: map[string]int32{}, workers: make(chan *worker, maxIdleWorkers)}
	w := m.worker()
	// Pass 1: document frequencies.
	df := map[string]int{}
	seen := map[string]bool{}
	each(func(text string) {
		m.texts++
		clear(seen)
		for _, t := range w.terms(text) {
			if !seen[t.Term] {
				seen[t.Term] = true
				df[strings.Clone(t.Term)]++
			}
		}
	})
	if m.texts == 0 {
		return Untrained()
	}
	n := float64(m.texts)
	idf := func(d int) float32 { return float32(math.Log(1 + (n-float64(d)+0.5)/(float64(d)+0.5))) }
	m.oovIDF = idf(1)
	var vocab []string
	for t, d := range df {
		if d >= 2 {
			vocab = append(vocab, t)
		}
	}
	slices.SortFunc(vocab, func(a, b string) int {
		if df[a] != df[b] {
			return df[b] - df[a]
		}
		return strings.Compare(a, b)
	})
	vocab = vocab[:min(len(vocab), maxVocab)]
	for i, t := range vocab {
		m.vocab[t] = int32(i)
	}
	// Pass 2: context vectors. S is a text's idf-weighted sum of index
	// vectors; each occurrence of a vocabulary term adds S less itself.
	ctx := make([]float32, len(vocab)*Dims)
	sum := make([]float32, Dims)
	var iv [indexNonzeros]sparse
	each(func(text string) {
		toks := w.terms(text)
		clear(sum)
		for _, t := range toks {
			indexVector(&iv, t.Term)
			wt := m.oovIDF
			if d, ok := df[t.Term]; ok {
				wt = idf(d)
			}
			for _, s := range iv {
				sum[s.i] += wt * s.v
			}
		}
		for _, t := range toks {
			r, ok := m.vocab[t.Term]
			if !ok {
				continue
			}
			row := ctx[int(r)*Dims : int(r+1)*Dims]
			vek32.Add_Inplace(row, sum)
			indexVector(&iv, t.Term)
			wt := idf(df[t.Term])
			for _, s := range iv {
				row[s.i] -= wt * s.v
			}
		}
	})
	// Term embeddings: normalised context + normalised index vector,
	// weighted by idf, kept as bfloat16.
	m.rows = make([]uint16, len(ctx))
	for i, t := range vocab {
		row := ctx[i*Dims : (i+1)*Dims]
		normalize(row)
		indexVector(&iv, t)
		for _, s := range iv {
			row[s.i] += indexScale * s.v
		}
		vek32.MulNumber_Inplace(row, idf(df[t]))
		for j, x := range row {
			m.rows[i*Dims+j] = toBF16(x)
		}
	}
	m.release(w)
	m.pc = m.commonComponent(each)
	m.name = fmt.Sprintf("builtin-ri1-%08x", m.checksum())
	return m
}

// commonComponent is the first principal direction (uncentred) of the text
// embeddings of up to pcSample texts, by power iteration.
func (m *Model) commonComponent(each func(fn func(text string))) []float32 {
	step := max(1, m.texts/pcSample)
	var vecs []float32
	i := 0
	each(func(text string) {
		if i%step == 0 && len(vecs) < pcSample*Dims {
			v := make([]float32, Dims)
			m.EmbedInto(v, text)
			vecs = append(vecs, v...)
		}
		i++
	})
	pc := make([]float32, Dims)
	for j := range pc {
		pc[j] = 1
	}
	normalize(pc)
	next := make([]float32, Dims)
	for it := 0; it < 30; it++ {
		clear(next)
		for k := 0; k+Dims <= len(vecs); k += Dims {
			v := vecs[k : k+Dims]
			p := vek32.Dot(v, pc)
			for j := range next {
				next[j] += p * v[j]
			}
		}
		if !normalize(next) {
			return nil
		}
		copy(pc, next)
	}
	return pc
}

// checksum is a CRC-32C of the model's contents, for its name.
func (m *Model) checksum() uint32 {
	h := crc32.New(crc32.MakeTable(crc32.Castagnoli))
	var b [4]byte
	terms := make([]string, len(m.vocab))
	for t, r := range m.vocab {
		terms[r] = t
	}
	for _, t := range terms {
		h.Write([]byte(t))
		h.Write([]byte{0})
	}
	for _, x := range m.rows {
		binary.LittleEndian.PutUint32(b[:], uint32(x)<<16)
		h.Write(b[:])
	}
	for _, x := range m.pc {
		binary.LittleEndian.PutUint32(b[:], math.Float32bits(x))
		h.Write(b[:])
	}
	return h.Sum32()
}
