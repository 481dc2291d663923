package embed

import (
	"context"
	"fmt"
	"math"
	"sync/atomic"

	"github.com/sift-search/sift/ann"
	"github.com/sift-search/sift/internal/oai"
	"github.com/sift-search/sift/internal/textcut"
)

// OpenAI embeds through an OpenAI-compatible POST /v1/embeddings (OpenAI,
// Ollama, llama.cpp server, vLLM), in batches, with retries on 429 and 5xx.
// Results are ordered by their index field and normalised to unit length.
type OpenAI struct {
	c     *oai.Client
	model string
	batch int
	dims  atomic.Int64
}

// maxInputBytes bounds one input, well inside every server's token limit
// for Sift's chunks.
const maxInputBytes = 8000

// NewOpenAI returns a client of the embeddings API at base.
func NewOpenAI(base, key, model string) *OpenAI {
	return &OpenAI{c: oai.New(base, key), model: model, batch: 64}
}

// Client exposes the transport, for tests to shorten its backoff.
func (o *OpenAI) Client() *oai.Client { return o.c }

// Name identifies the vector space: the model at its server.
func (o *OpenAI) Name() string { return "openai:" + o.model + "@" + oai.Redacted(o.c.Base) }

// Dims is the vector dimension, known after the first call (see Probe).
func (o *OpenAI) Dims() int { return int(o.dims.Load()) }

// Probe embeds one text to learn the dimension and check the server.
func (o *OpenAI) Probe(ctx context.Context) error {
	_, err := o.Embed(ctx, []string{"probe"})
	return err
}

type embeddingsRequest struct {
	Model          string   `json:"model"`
	Input          []string `json:"input"`
	EncodingFormat string   `json:"encoding_format"`
}

type embeddingsResponse struct {
	Data []struct {
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
}

// Embed returns one unit vector per text, all of one size. The size is
// learnt from the answers: a server whose model changed answers with
// another size, which Dims then reports, so the engine re-embeds.
func (o *OpenAI) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	dims := 0
	for start := 0; start < len(texts); start += o.batch {
		batch := texts[start:min(start+o.batch, len(texts))]
		in := embeddingsRequest{Model: o.model, Input: make([]string, len(batch)), EncodingFormat: "float"}
		for i, t := range batch {
			in.Input[i] = textcut.Prefix(t, maxInputBytes)
			if in.Input[i] == "" {
				in.Input[i] = " " // some servers refuse empty inputs
			}
		}
		var res embeddingsResponse
		if err := o.c.PostJSON(ctx, "/embeddings", in, &res); err != nil {
			return nil, fmt.Errorf("embeddings: %w", err)
		}
		if len(res.Data) != len(batch) {
			return nil, fmt.Errorf("embeddings: %d vectors for %d inputs", len(res.Data), len(batch))
		}
		for _, d := range res.Data {
			if d.Index < 0 || d.Index >= len(batch) || out[start+d.Index] != nil {
				return nil, fmt.Errorf("embeddings: bad or repeated index %d", d.Index)
			}
			if dims == 0 {
				dims = len(d.Embedding)
			}
			if err := check(d.Embedding, dims); err != nil {
				return nil, err
			}
			out[start+d.Index] = d.Embedding
		}
	}
	if dims > 0 {
		o.dims.Store(int64(dims))
	}
	return out, nil
}

// check validates a vector's size and values, and normalises it.
func check(v []float32, dims int) error {
	if len(v) == 0 || len(v) > ann.MaxDims {
		return fmt.Errorf("embeddings: a vector of %d components", len(v))
	}
	if len(v) != dims {
		return fmt.Errorf("embeddings: vectors of %d and %d components in one answer", dims, len(v))
	}
	var s float64
	for _, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return fmt.Errorf("embeddings: a vector component is not a finite number")
		}
		s += float64(x) * float64(x)
	}
	if s > 0 {
		f := float32(1 / math.Sqrt(s))
		for i := range v {
			v[i] *= f
		}
	}
	return nil
}

var _ Embedder = (*OpenAI)(nil)
