package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/sift-search/sift/internal/weaviatetest"
	"github.com/sift-search/sift/query"
	"github.com/sift-search/sift/record"
	"github.com/sift-search/sift/semantic"
	"github.com/sift-search/sift/semantic/fusion"
	"github.com/sift-search/sift/semantic/training"
)

// The relevance evaluation on a Weaviate cluster (issue 15): the same
// documents and queries as Run, through wvstore's full-text Search and its
// semantic search, scored by Evaluate as the memory store is.

// WeaviateRun is a dataset indexed into a cluster, ready to rank.
type WeaviateRun struct {
	ds     *Dataset
	st     Store
	x      Stepped
	beirID map[string]string // document id -> BEIR id
}

// Stepped is a semantic index whose indexer the caller steps: the
// cluster's (wvstore.Semantic).
type Stepped interface {
	Semantic
	Step(ctx context.Context) (worked bool, err error)
	Status() semantic.Status
}

// IndexWeaviate indexes a dataset into a cluster's store st (opened in a
// namespace of its own) as documents (title and text, through
// PutDocuments in batches of 50 as sift migrate writes them), and steps
// the cluster's semantic indexer x (opened without waiting for freshness:
// the run steps it itself) until it has caught up (chunks written, the
// built-in embedder trained, every chunk embedded).
func IndexWeaviate(ds *Dataset, st Store, x Stepped) (*WeaviateRun, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	r := &WeaviateRun{ds: ds, st: st, x: x, beirID: make(map[string]string, len(ds.Docs))}
	const docBatch = 50
	for start := 0; start < len(ds.Docs); start += docBatch {
		var docs []record.Document
		for _, d := range ds.Docs[start:min(start+docBatch, len(ds.Docs))] {
			docs = append(docs, record.Document{Key: d.ID, Title: d.Title, Content: d.Text})
		}
		stored, err := st.PutDocuments(docs)
		if err != nil {
			return nil, fmt.Errorf("put documents %d-%d: %w", start, start+len(docs), err)
		}
		for _, d := range stored {
			r.beirID[d.ID] = d.Key
		}
	}
	if err := SettleSemantic(ctx, r.x); err != nil {
		return nil, err
	}
	return r, nil
}

// Rank ranks every query three ways as Run does: Store.Search (BM25), and
// the cluster's semantic search by vectors only and fused with
// pseudo-relevance feedback.
func (r *WeaviateRun) Rank() (*Rankings, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	return rankAll(ctx, r.ds, r.st, r.x, r.beirID)
}

// rankAll ranks every query of ds as Run does, through a store's Search
// and a semantic layer's Search.
func rankAll(ctx context.Context, ds *Dataset, st searcher, x Semantic, beirID map[string]string) (*Rankings, error) {
	r := &Rankings{BM25: map[string][]string{}, Vectors: map[string][]string{}, Fused: map[string][]string{}}
	for _, q := range ds.Queries {
		ids, err := searchBM25(st, q.Text, false)
		if err != nil {
			return nil, err
		}
		r.BM25[q.ID] = ids
		for _, m := range []struct {
			mode fusion.Mode
			hyde bool
			out  map[string][]string
		}{{fusion.ModeVectors, false, r.Vectors}, {fusion.ModeFused, true, r.Fused}} {
			sr, err := x.Search(ctx, semantic.Request{Query: q.Text, Limit: semantic.MaxLimit, HyDE: m.hyde, Mode: m.mode})
			if err != nil {
				return nil, fmt.Errorf("semantic search %q: %w", q.Text, err)
			}
			seen := map[string]bool{}
			for _, h := range sr.Hits { // chunks to documents, each once
				if id := beirID[h.DocumentID]; !seen[id] {
					seen[id] = true
					m.out[q.ID] = append(m.out[q.ID], id)
				}
			}
		}
	}
	return r, nil
}

// searcher is a store's full-text search, the engine's or wvstore's.
type searcher interface {
	Search(query.SearchRequest) (*query.SearchResult, error)
}

// searchBM25 ranks a query as GET /api/search does for a caller without
// credentials (q and limit, typos=false when noTypos), returning the BEIR
// ids of the top MaxSearchLimit documents.
func searchBM25(st searcher, q string, noTypos bool) ([]string, error) {
	res, err := st.Search(query.SearchRequest{Query: q, Limit: query.MaxSearchLimit, NoTypos: noTypos})
	if err != nil {
		return nil, fmt.Errorf("search %q: %w", q, err)
	}
	var ids []string
	for _, h := range res.Documents {
		ids = append(ids, h.Key)
	}
	return ids, nil
}

// SettleSemantic runs the cluster's semantic indexer until it has nothing
// left to do — twice idle, the second time after writes paused longer
// than a due training waits for — and checks that its status says so:
// nothing pending, every chunk embedded by the current embedder.
func SettleSemantic(ctx context.Context, x Stepped) error {
	for idle := 0; idle < 2; {
		worked, err := x.Step(ctx)
		if err != nil {
			return fmt.Errorf("semantic indexer: %w", err)
		}
		if worked {
			idle = 0
			continue
		}
		idle++
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(1500 * time.Millisecond): // a training waits a second of quiet
		}
	}
	st := x.Status()
	switch {
	case st.Error != "":
		return fmt.Errorf("semantic indexer: %s", st.Error)
	case st.Pending != 0 || st.Vectors+st.Skipped != st.Chunks:
		return fmt.Errorf("semantic indexer idle with %d pending, %d of %d chunks embedded by %q", st.Pending, st.Vectors, st.Chunks, st.Embedder)
	case st.Embedder == "" && st.Chunks >= training.MinChunks:
		return fmt.Errorf("semantic indexer idle with %d chunks and no trained embedder", st.Chunks)
	}
	return nil
}

// DropNamespace deletes every collection of namespace ns from the cluster
// at url (a store opened in it is unusable afterwards).
func DropNamespace(url, ns string) error {
	res, err := http.Get(url + "/v1/schema")
	if err != nil {
		return fmt.Errorf("read the schema: %w", err)
	}
	defer res.Body.Close()
	var schema struct {
		Classes []struct {
			Class string `json:"class"`
		} `json:"classes"`
	}
	if err := json.NewDecoder(res.Body).Decode(&schema); err != nil {
		return fmt.Errorf("read the schema: %w", err)
	}
	for _, c := range schema.Classes {
		if !strings.HasPrefix(c.Class, ns) {
			continue
		}
		req, _ := http.NewRequest(http.MethodDelete, url+"/v1/schema/"+c.Class, nil)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return fmt.Errorf("drop %s: %w", c.Class, err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			return fmt.Errorf("drop %s: %s", c.Class, res.Status)
		}
	}
	return nil
}

// StartWeaviate starts an n-node cluster on loopback as the tests do
// (weaviatetest.Start), for a command; stop kills its nodes and removes
// their data.
func StartWeaviate(n int) (cl *weaviatetest.Cluster, stop func(), err error) {
	dir, err := os.MkdirTemp("", "sift-weaviate-")
	if err != nil {
		return nil, nil, err
	}
	tb := &cmdTB{dir: dir}
	stop = func() {
		for i := len(tb.cleanups) - 1; i >= 0; i-- {
			tb.cleanups[i]()
		}
		os.RemoveAll(dir)
	}
	defer func() {
		if r := recover(); r != nil {
			f, ok := r.(tbFailure)
			if !ok {
				panic(r)
			}
			stop()
			cl, stop, err = nil, nil, errors.New(string(f))
		}
	}()
	return weaviatetest.Start(tb, n), stop, nil
}

// cmdTB is the part of testing.TB weaviatetest uses, outside a test: a
// failure panics with a tbFailure, which StartWeaviate recovers. Any other
// method of testing.TB panics (the embedded interface is nil).
type cmdTB struct {
	testing.TB
	dir      string
	cleanups []func()
}

type tbFailure string

func (t *cmdTB) Helper()                         {}
func (t *cmdTB) Logf(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }
func (t *cmdTB) Fatal(args ...any)               { panic(tbFailure(fmt.Sprint(args...))) }
func (t *cmdTB) Fatalf(format string, args ...any) {
	panic(tbFailure(fmt.Sprintf(format, args...)))
}
func (t *cmdTB) Cleanup(f func()) { t.cleanups = append(t.cleanups, f) }
func (t *cmdTB) TempDir() string {
	d, err := os.MkdirTemp(t.dir, "")
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// NamespaceWord makes a part of a Weaviate namespace of name: its letters
// and digits, the first upper-cased.
func NamespaceWord(name string) string {
	var b strings.Builder
	for _, r := range name {
		if r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			b.WriteRune(r)
		}
	}
	w := b.String()
	if w == "" {
		return "X"
	}
	return strings.ToUpper(w[:1]) + w[1:]
}
