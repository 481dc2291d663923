package semantic

import (
	"github.com/RoaringBitmap/roaring/v2"

	"github.com/sift-search/sift/ann"
	"github.com/sift-search/sift/embed"
)

// A space is the vectors of every chunk under one embedder: searches use
// the index's current space; when the embedder changes (a newly trained
// built-in model, or another model server) a next space is filled in the
// background and replaces the current one when complete, so search keeps
// serving throughout. Only the semantic indexer's goroutine adds or drops
// chunks, so only it changes vecs and pending (under both locks).
type space struct {
	emb     embed.Embedder
	model   *embed.Model    // the built-in embedder's model, saved with snapshots; nil for a server's
	name    string          // emb.Name() when the vectors were made
	vecs    ann.Index       // nil until the dimension is known
	pending *roaring.Bitmap // live chunks without a vector here yet
	usable  bool            // queries can be embedded: false for a restored space whose server is not configured
}

// Vector indexes switch from exact to IVF above ivfMin vectors, and back
// below ivfMin/2. A variable for tests.
var ivfMin = 20_000

func newSpace(emb embed.Embedder) *space {
	sp := &space{emb: emb, name: emb.Name(), pending: roaring.New(), usable: true}
	if m, ok := emb.(*embed.Model); ok {
		sp.model = m
	}
	if d := emb.Dims(); d > 0 {
		sp.vecs = ann.NewFlat(d)
	}
	return sp
}

// holds reports whether sp is a usable space of emb's vectors: same name
// and, once both are known, same size.
func (sp *space) holds(emb embed.Embedder) bool {
	if sp == nil || !sp.usable || sp.name != emb.Name() {
		return false
	}
	d := emb.Dims()
	return d == 0 || sp.vecs == nil || sp.vecs.Dims() == d
}

// addChunk notes a new chunk to embed.
func (sp *space) addChunk(id uint32) {
	if sp != nil {
		sp.pending.Add(id)
	}
}

// dropChunk forgets a deleted chunk.
func (sp *space) dropChunk(id uint32) {
	if sp == nil {
		return
	}
	sp.pending.Remove(id)
	if sp.vecs != nil {
		sp.vecs.Delete(id)
	}
}

// vector returns a chunk's vector, or nil.
func (sp *space) vector(id uint32) []float32 {
	if sp == nil || sp.vecs == nil {
		return nil
	}
	return sp.vecs.Vector(id)
}
