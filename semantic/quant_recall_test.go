package semantic

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sift-search/sift/ann"
	"github.com/sift-search/sift/embed"
	"github.com/sift-search/sift/internal/fakeoai"
)

// TestQuantisedRecall measures what int8 codes cost on the built-in
// embedder's vectors of real text, the Cranfield and CISI collections'
// passages and queries: recall@10 of the quantised IVF index the semantic
// layer keeps against the same index in floats (same clusters, same
// probes), and against an exact float search with every cluster probed.
func TestQuantisedRecall(t *testing.T) {
	if testing.Short() {
		t.Skip("embeds two collections")
	}
	dir := datasets()
	if dir == "" {
		t.Skip("../shared/datasets not available")
	}
	old := ivfMin
	ivfMin = 1 << 30 // keep the float vectors to compare with
	t.Cleanup(func() { ivfMin = old })
	e := openMem(t)
	var queries []string
	for _, name := range []string{"cranfield", "cisi"} {
		var docs []Document
		readLines(t, filepath.Join(dir, name, "corpus.jsonl"), func(b []byte) {
			var d struct {
				ID          string `json:"_id"`
				Title, Text string
			}
			if err := json.Unmarshal(b, &d); err != nil {
				t.Fatal(err)
			}
			key := name + "/" + d.ID
			docs = append(docs, Document{ID: DocumentID(UploadsSourceID, key), SourceID: UploadsSourceID, Key: key, Title: d.Title, Content: d.Text})
		})
		if _, err := e.PutDocuments(docs); err != nil {
			t.Fatal(err)
		}
		readLines(t, filepath.Join(dir, name, "queries.jsonl"), func(b []byte) {
			var q struct{ Text string }
			if err := json.Unmarshal(b, &q); err != nil {
				t.Fatal(err)
			}
			queries = append(queries, q.Text)
		})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := e.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	e.mu.RLock()
	flat, emb := e.st.space.vecs.(*ann.Flat), e.st.space.emb
	e.mu.RUnlock()
	qvs, err := emb.Embed(ctx, queries)
	if err != nil {
		t.Fatal(err)
	}
	floats := ann.BuildIVF(flat, ann.IVFOptions{})
	codes := ann.BuildIVF(flat, ann.IVFOptions{Quantize: true})
	recall := func(a, b ann.Index) float64 {
		var sum float64
		for _, q := range qvs {
			want := a.Search(q, 10, nil, nil)
			hit := 0
			for _, r := range b.Search(q, 10, nil, nil) {
				if slices.ContainsFunc(want, func(w ann.Result) bool { return w.ID == r.ID }) {
					hit++
				}
			}
			sum += float64(hit) / float64(max(1, len(want)))
		}
		return sum / float64(len(qvs))
	}
	againstIVF := recall(floats, codes)
	codes.SetNProbe(codes.NList())
	againstExact := recall(flat, codes)
	t.Logf("%d passages, %d queries, nlist %d: recall@10 of int8 against float IVF %.4f, against exact float (all clusters) %.4f",
		flat.Len(), len(qvs), codes.NList(), againstIVF, againstExact)
	if againstIVF < 0.98 || againstExact < 0.98 {
		t.Errorf("recall@10 %.4f / %.4f, want at least 0.98", againstIVF, againstExact)
	}
}

// datasets finds the shared test collections above the package.
func datasets() string {
	for _, p := range []string{"../../shared/datasets", "../../../shared/datasets"} {
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			return p
		}
	}
	return ""
}

func readLines(t *testing.T, path string, fn func([]byte)) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		fn(sc.Bytes())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
}

// TestFloatIVFLoadsQuantised: a snapshot whose IVF index holds floats (as
// earlier versions wrote it) loads as codes, and searches still find what
// they found.
func TestFloatIVFLoadsQuantised(t *testing.T) {
	old := ivfMin
	ivfMin = 64
	t.Cleanup(func() { ivfMin = old })
	dir := t.TempDir()
	e := openDir(t, dir)
	docs := notes(120)
	if _, err := e.PutDocuments(append(docs, semDocs...)); err != nil {
		t.Fatal(err)
	}
	waitSem(t, e)
	e.mu.Lock()
	ivf, ok := e.st.space.vecs.(*ann.IVF)
	if !ok || !ivf.Quantized() {
		e.mu.Unlock()
		t.Fatalf("vectors in a %T, want a quantised IVF", e.st.space.vecs)
	}
	flat := ann.NewFlat(ivf.Dims())
	ivf.Each(func(id uint32, v []float32) bool { flat.Add(id, v); return true })
	e.st.space.vecs = ann.BuildIVF(flat, ann.IVFOptions{}) // floats, as before
	e.edits.Add(1)
	e.mu.Unlock()
	if err := e.Snapshot(); err != nil {
		t.Fatal(err)
	}
	e.Close()
	e = openDir(t, dir)
	defer e.Close()
	e.mu.RLock()
	got, ok := e.st.space.vecs.(*ann.IVF)
	n := 0
	if ok {
		n = got.Len()
	}
	e.mu.RUnlock()
	if !ok || !got.Quantized() || n != flat.Len() {
		t.Fatalf("loaded a %T of %d vectors (quantised: %v), want %d codes", e.st.space.vecs, n, ok && got.Quantized(), flat.Len())
	}
	if hits := semSearch(t, e, Request{Query: "HMAC signature of the raw body"}); len(hits) == 0 || hits[0].Title != "Webhooks" {
		t.Fatalf("search after loading: %+v", hits)
	}
}

// TestSpaceBeingFilledIsPacked: vectors filling a new space (here for a
// model server replacing the built-in embedder) move to int8 codes as
// soon as they pass ivfMin, not only after the swap, so a long catch-up
// never holds every chunk's floats; the clusters are trained once, when
// the space is complete.
func TestSpaceBeingFilledIsPacked(t *testing.T) {
	old := ivfMin
	ivfMin = 64
	t.Cleanup(func() { ivfMin = old; testHookPack = nil })
	srv := fakeoai.New()
	defer srv.Close()
	dir := t.TempDir()
	e := openDir(t, dir)
	if _, err := e.PutDocuments(notes(300)); err != nil {
		t.Fatal(err)
	}
	waitSem(t, e)
	e.Close()

	var filling atomic.Int32 // packs of the space being filled, before it was full
	testHookPack = func() {
		e.mu.RLock()
		defer e.mu.RUnlock()
		if nx := e.st.next; nx != nil {
			if x, ok := nx.vecs.(*ann.IVF); ok && x.Quantized() && x.NList() == 1 && x.Len() < 300 {
				filling.Add(1)
			}
		}
	}
	remote := embed.NewOpenAI(srv.URL, "", "fake-embed")
	remote.Client().Backoff = time.Millisecond
	e = openDir(t, dir, func(o *Options) { o.Embedder = remote })
	defer e.Close()
	waitSem(t, e)
	e.mu.RLock()
	name, vecs := e.st.space.name, e.st.space.vecs
	e.mu.RUnlock()
	x, ok := vecs.(*ann.IVF)
	if name != remote.Name() || !ok || x.Len() != 300 || !x.Quantized() || x.NList() < 2 {
		t.Fatalf("space %q holds a %T", name, vecs)
	}
	if filling.Load() == 0 {
		t.Error("the space being filled stayed an exact index until it was complete")
	}
	if hits := semSearch(t, e, Request{Query: "webhooks signatures"}); len(hits) == 0 {
		t.Fatal("no hits after the switch")
	}
}

// TestPackedSpaceIsClustered: a current space left packed (codes in one
// list, as a snapshot taken mid-clustering holds it) reports "packed",
// the indexer trains its clusters, and Wait returns only after that.
func TestPackedSpaceIsClustered(t *testing.T) {
	old := ivfMin
	ivfMin = 64
	t.Cleanup(func() { ivfMin = old })
	e := openMem(t)
	if _, err := e.PutDocuments(notes(300)); err != nil {
		t.Fatal(err)
	}
	waitSem(t, e)
	if st := e.Index.Status(); st.Index != "ivf" {
		t.Fatalf("index %q after catching up, want ivf", st.Index)
	}
	e.stepMu.Lock()
	e.mu.Lock()
	e.st.space.vecs = ann.BuildIVF(e.st.space.vecs, ann.IVFOptions{NList: 1, Sample: 300, Quantize: true})
	e.mu.Unlock()
	e.stepMu.Unlock()
	if st := e.Index.Status(); st.Index != "packed" || st.Vectors != 300 {
		t.Fatalf("status %+v, want a packed index of 300", st)
	}
	e.Index.Changed()
	waitSem(t, e)
	e.mu.RLock()
	x, ok := e.st.space.vecs.(*ann.IVF)
	e.mu.RUnlock()
	if !ok || x.NList() < 2 || x.Len() != 300 {
		t.Fatalf("after Wait: a %T, not clustered", e.st.space.vecs)
	}
	if st := e.Index.Status(); st.Index != "ivf" {
		t.Fatalf("index %q after clustering", st.Index)
	}
}

// TestTrainedSpaceFilledFirst: on a first catch-up the trained embedder's
// space, which will replace the untrained one, gets its vectors first;
// the untrained space's chunks are not all embedded only to be dropped.
func TestTrainedSpaceFilledFirst(t *testing.T) {
	var untrained, trained atomic.Int64
	testHookEmbedded = func(space string, n int) {
		if space == embed.Untrained().Name() {
			untrained.Add(int64(n))
		} else {
			trained.Add(int64(n))
		}
	}
	t.Cleanup(func() { testHookEmbedded = nil })
	e := openMem(t)
	if _, err := e.PutDocuments(notes(1000)); err != nil {
		t.Fatal(err)
	}
	waitSem(t, e)
	e.mu.RLock()
	name, n := e.st.space.name, e.st.space.vecs.Len()
	e.mu.RUnlock()
	if name == embed.Untrained().Name() || n != 1000 {
		t.Fatalf("space %q with %d vectors", name, n)
	}
	if u := untrained.Load(); u >= 500 || trained.Load() < 1000 {
		t.Fatalf("embedded %d chunks for the untrained space and %d for the trained one", u, trained.Load())
	}
}
