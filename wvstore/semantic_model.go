package wvstore

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"sync"
	"time"

	"github.com/go-openapi/strfmt"
	"github.com/weaviate/weaviate/entities/models"

	"github.com/sift-search/sift/embed"
	"github.com/sift-search/sift/semantic/training"
)

// The built-in embedder's model lives in Meta, so every process embeds
// queries with the model the indexer trained. The head (key
// "semantic:model") names the model and says how many parts it has, how
// many bytes and their CRC-32C; the parts ("semantic:model:<name>:<i>")
// hold its encoding — embed.Model.Encode's blocks, each preceded by its
// length as a uvarint — cut into modelPartBytes pieces, in base64. The
// indexer writes the parts, then the head. A process re-reads the head at
// most once a modelCheck and loads the model when its name changed. The
// previous model's parts are kept, so a process that read the old head can
// still load it; the one before that is deleted.

const (
	modelKey       = "semantic:model"
	modelPartBytes = 256 << 10
	modelCheck     = time.Second
)

// modelHead is the head's value.
type modelHead struct {
	Name    string     `json:"name"`
	Parts   int        `json:"parts"`
	Bytes   int        `json:"bytes"`
	CRC     uint32     `json:"crc"`
	Trained int        `json:"trained"`
	Prev    *modelHead `json:"prev,omitempty"` // name and parts only
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func modelPartKey(name string, i int) string { return fmt.Sprintf("%s:%s:%d", modelKey, name, i) }

// modelCache is a process's copy of the current model.
type modelCache struct {
	mu      sync.Mutex
	checked time.Time
	head    modelHead
	model   *embed.Model
}

// current returns the embedder whose vectors searches compare: the
// configured one, or the built-in model stored in the cluster (re-read
// when fresh or modelCheck passed), or nil before the first training.
func (x *Semantic) current(ctx context.Context, fresh bool) (embed.Embedder, error) {
	if x.opts.Embedder != nil {
		return x.opts.Embedder, nil
	}
	c := &x.model
	c.mu.Lock()
	defer c.mu.Unlock()
	if fresh || time.Since(c.checked) >= modelCheck {
		head, ok, err := x.s.readModelHead(ctx)
		if err != nil {
			return nil, err
		}
		switch {
		case !ok:
			c.head, c.model = modelHead{}, nil
		case head.Name != c.head.Name:
			m, err := x.s.loadModel(ctx, head)
			if err != nil {
				return nil, err
			}
			c.head, c.model = head, m
			x.log.Info("loaded the built-in embedding model", "model", head.Name, "trained", head.Trained)
		}
		c.checked = time.Now()
	}
	if c.model == nil {
		return nil, nil
	}
	return c.model, nil
}

func (s *chunks) readModelHead(ctx context.Context) (modelHead, bool, error) {
	p, ok, err := getProps(ctx, s.c, s.class("Meta"), metaID(s.opts.Namespace, modelKey))
	if err != nil || !ok {
		return modelHead{}, false, err
	}
	var h modelHead
	v, _ := p["value"].(string)
	if err := json.Unmarshal([]byte(v), &h); err != nil || h.Name == "" || h.Parts <= 0 {
		return modelHead{}, false, fmt.Errorf("the embedding model's head %q: damaged", v)
	}
	return h, true, nil
}

// saveModel stores m as the current model after prev (nil when none) and
// deletes the model before prev.
func (s *chunks) saveModel(ctx context.Context, m *embed.Model, prev *modelHead) (modelHead, error) {
	var b []byte
	err := m.Encode(func(block []byte) error {
		b = binary.AppendUvarint(b, uint64(len(block)))
		b = append(b, block...)
		return nil
	})
	if err != nil {
		return modelHead{}, fmt.Errorf("encode the embedding model: %w", err)
	}
	h := modelHead{Name: m.Name(), Parts: (len(b) + modelPartBytes - 1) / modelPartBytes, Bytes: len(b),
		CRC: crc32.Checksum(b, castagnoli), Trained: m.Trained()}
	var objs []*models.Object
	for i := range h.Parts {
		part := b[i*modelPartBytes : min((i+1)*modelPartBytes, len(b))]
		key := modelPartKey(h.Name, i)
		objs = append(objs, &models.Object{Class: s.class("Meta"), ID: strfmt.UUID(metaID(s.opts.Namespace, key)),
			Properties: map[string]any{"key": key, "value": base64.StdEncoding.EncodeToString(part)}})
		if len(objs) == 4 || i == h.Parts-1 { // about 1.4 MB a request
			if err := s.upsert(ctx, objs); err != nil {
				return modelHead{}, fmt.Errorf("store the embedding model: %w", err)
			}
			objs = objs[:0]
		}
	}
	var gone *modelHead
	if prev != nil {
		h.Prev, gone = &modelHead{Name: prev.Name, Parts: prev.Parts}, prev.Prev
	}
	v, err := json.Marshal(h)
	if err != nil {
		return modelHead{}, fmt.Errorf("store the embedding model: %w", err)
	}
	err = s.upsert(ctx, []*models.Object{{Class: s.class("Meta"), ID: strfmt.UUID(metaID(s.opts.Namespace, modelKey)),
		Properties: map[string]any{"key": modelKey, "value": string(v)}}})
	if err != nil {
		return modelHead{}, fmt.Errorf("store the embedding model's head: %w", err)
	}
	if gone != nil && gone.Name != h.Name {
		for i := range gone.Parts {
			if err := s.deleteObject(ctx, s.class("Meta"), metaID(s.opts.Namespace, modelPartKey(gone.Name, i))); err != nil {
				return h, fmt.Errorf("delete an old embedding model: %w", err)
			}
		}
	}
	return h, nil
}

// loadModel reads and decodes the model h names.
func (s *chunks) loadModel(ctx context.Context, h modelHead) (*embed.Model, error) {
	parts := make([]string, h.Parts)
	keys := make([]string, h.Parts)
	for i := range keys {
		keys[i] = modelPartKey(h.Name, i)
	}
	at := map[string]int{}
	for i, k := range keys {
		at[k] = i
	}
	for start := 0; start < len(keys); start += 8 {
		part := keys[start:min(start+8, len(keys))]
		objs, err := s.get(ctx, getQuery{class: s.class("Meta"), fields: []string{"key", "value"}, where: anyText("key", part), limit: len(part)})
		if err != nil {
			return nil, fmt.Errorf("load the embedding model %s: %w", h.Name, err)
		}
		for _, o := range objs {
			k, _ := o["key"].(string)
			v, _ := o["value"].(string)
			if i, ok := at[k]; ok {
				parts[i] = v
			}
		}
	}
	b := make([]byte, 0, h.Bytes)
	for i, p := range parts {
		raw, err := base64.StdEncoding.DecodeString(p)
		if err != nil || p == "" {
			return nil, fmt.Errorf("load the embedding model %s: part %d of %d missing or damaged", h.Name, i, h.Parts)
		}
		b = append(b, raw...)
	}
	if len(b) != h.Bytes || crc32.Checksum(b, castagnoli) != h.CRC {
		return nil, fmt.Errorf("load the embedding model %s: %w: %d bytes, checksum mismatch", h.Name, embed.ErrCorrupt, len(b))
	}
	m, err := embed.DecodeModel(func() ([]byte, error) {
		n, w := binary.Uvarint(b)
		if w <= 0 || n > uint64(len(b)-w) {
			return nil, fmt.Errorf("%w: a truncated block", embed.ErrCorrupt)
		}
		block := b[w : w+int(n)]
		b = b[w+int(n):]
		return block, nil
	})
	if err != nil {
		return nil, fmt.Errorf("load the embedding model %s: %w", h.Name, err)
	}
	if m.Name() != h.Name {
		return nil, fmt.Errorf("load the embedding model %s: %w: it is named %s", h.Name, embed.ErrCorrupt, m.Name())
	}
	return m, nil
}

// trainIfDue trains the built-in embedder when the chunks are many enough
// or have grown enough since it last trained (training.Due), once
// writes pause, and makes it the current model: every chunk is embedded
// again (reembed).
func (x *Semantic) trainIfDue(ctx context.Context) (bool, error) {
	if x.opts.Embedder != nil {
		return false, nil
	}
	cur, err := x.current(ctx, true)
	if err != nil {
		return false, err
	}
	live, err := x.s.count(ctx, x.s.class("Chunk"), nil)
	if err != nil {
		return false, err
	}
	trained := 0
	if m, ok := cur.(*embed.Model); ok {
		trained = m.Trained()
	}
	lastWrite := time.UnixMicro(int64(x.s.Seq()))
	if !training.Due(live, trained) || training.Waits(lastWrite, live, trained) {
		return false, nil
	}
	start := time.Now()
	var readErr error
	model := embed.Train(func(fn func(string)) {
		if readErr == nil {
			readErr = x.eachChunkText(ctx, fn)
		}
	})
	if readErr != nil {
		return false, fmt.Errorf("train the embedder: %w", readErr)
	}
	if model.Trained() == 0 {
		return false, nil
	}
	x.model.mu.Lock()
	defer x.model.mu.Unlock()
	var prev *modelHead
	if x.model.head.Name != "" {
		p := x.model.head
		prev = &p
	}
	head, err := x.s.saveModel(ctx, model, prev)
	if head.Name != "" {
		x.model.head, x.model.model, x.model.checked = head, model, time.Now()
	}
	if err != nil {
		return true, err
	}
	x.log.Info("trained the built-in embedder", "chunks", model.Trained(), "vocabulary", model.Vocab(), "took", time.Since(start))
	return true, nil
}

// eachChunkText calls fn with the text of every chunk, in the order of
// their ids (the same order each time: training reads them three times).
func (x *Semantic) eachChunkText(ctx context.Context, fn func(string)) error {
	after := ""
	for {
		objs, err := x.s.get(ctx, getQuery{class: x.s.class("Chunk"), fields: []string{"record", "_id"}, limit: 500, after: after})
		if err != nil {
			return err
		}
		for _, o := range objs {
			rec, _ := o["record"].(string)
			r, err := decodeChunkRecord(rec)
			if err != nil {
				return err
			}
			fn(r.embedText())
		}
		if len(objs) < 500 {
			return nil
		}
		id, _ := objs[len(objs)-1]["_id"].(string)
		if id == "" {
			return errors.New("read the chunks: an object without id")
		}
		after = id
	}
}
