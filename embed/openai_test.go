package embed

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sift-search/sift/internal/fakeoai"
	"github.com/sift-search/sift/internal/oai"
)

func newClient(t *testing.T, srv *fakeoai.Server) *OpenAI {
	t.Helper()
	o := NewOpenAI(srv.URL+"/", "k3y", "test-embed") // trailing slash and no /v1: normalised
	o.Client().Backoff = time.Millisecond
	return o
}

func TestOpenAIEmbeddings(t *testing.T) {
	srv := fakeoai.New()
	defer srv.Close()
	o := newClient(t, srv)
	var texts []string
	for i := 0; i < 150; i++ { // three batches of at most 64
		texts = append(texts, fmt.Sprintf("text number %d about cron", i))
	}
	vecs, err := o.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if o.Dims() != 8 || len(vecs) != 150 {
		t.Fatalf("dims %d, %d vectors", o.Dims(), len(vecs))
	}
	near := func(a, b []float32) bool {
		return slices.EqualFunc(a, b, func(x, y float32) bool { return x-y < 1e-6 && y-x < 1e-6 })
	}
	for i, v := range vecs {
		if !near(v, fakeoai.Vector(texts[i], 8)) {
			t.Fatalf("vector %d does not belong to its text: results must be ordered by index", i)
		}
	}
	reqs := srv.Received()
	if len(reqs) != 3 || len(reqs[0].Input) != 64 || reqs[0].Auth != "Bearer k3y" || reqs[0].Path != "/v1/embeddings" ||
		reqs[0].Body["model"] != "test-embed" || reqs[0].Body["encoding_format"] != "float" {
		t.Fatalf("requests: %d, first %+v", len(reqs), reqs[0])
	}
	if !strings.HasPrefix(o.Name(), "openai:test-embed@") {
		t.Errorf("name %q", o.Name())
	}
}

func TestOpenAIRetries(t *testing.T) {
	srv := fakeoai.New()
	defer srv.Close()
	o := newClient(t, srv)
	srv.Fail(429, 503, 500)
	if _, err := o.Embed(context.Background(), []string{"x"}); err != nil {
		t.Fatalf("three transient failures then success: %v", err)
	}
	if n := len(srv.Received()); n != 4 {
		t.Errorf("%d attempts, want 4", n)
	}
	srv.Fail(500, 500, 500, 500)
	_, err := o.Embed(context.Background(), []string{"x"})
	var apiErr *oai.APIError
	if !errors.As(err, &apiErr) || apiErr.Status != 500 || !strings.Contains(err.Error(), "scripted failure") {
		t.Fatalf("persistent failure: %v", err)
	}
	before := len(srv.Received())
	srv.Fail(400)
	if _, err := o.Embed(context.Background(), []string{"x"}); err == nil {
		t.Fatal("400 accepted")
	}
	if n := len(srv.Received()) - before; n != 1 {
		t.Errorf("a 400 was retried: %d attempts", n)
	}
}

func TestOpenAIRejectsBadAnswers(t *testing.T) {
	srv := fakeoai.New()
	defer srv.Close()
	o := newClient(t, srv)
	if _, err := o.Embed(context.Background(), []string{"a"}); err != nil {
		t.Fatal(err)
	}
	srv.SetDims(16) // the model changed under us: the new size is reported
	if v, err := o.Embed(context.Background(), []string{"a"}); err != nil || len(v[0]) != 16 || o.Dims() != 16 {
		t.Fatalf("after a size change: %v, dims %d", err, o.Dims())
	}
	mixed := fakeoai.NewRaw()
	defer mixed.Close()
	mixed.Set([]byte(`{"data":[{"index":0,"embedding":[1,0]},{"index":1,"embedding":[0,1,0]}]}`))
	if _, err := NewOpenAI(mixed.URL, "", "m").Embed(context.Background(), []string{"a", "b"}); err == nil || !strings.Contains(err.Error(), "components in one answer") {
		t.Fatalf("mixed sizes accepted: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := o.Embed(ctx, []string{"a"}); err == nil {
		t.Fatal("cancelled context ignored")
	}
}

// FuzzOpenAIAnswer feeds arbitrary answers of a model server to the
// embeddings client: an error or exactly one finite, unit (or zero)
// vector per input of one dimension — never a panic.
func FuzzOpenAIAnswer(f *testing.F) {
	srv := fakeoai.NewRaw()
	f.Cleanup(srv.Close)
	f.Add([]byte(`{"data":[{"index":1,"embedding":[1,0]},{"index":0,"embedding":[0,2]}]}`))
	f.Add([]byte(`{"data":[{"index":0,"embedding":[1,0]},{"index":0,"embedding":[0,2]}]}`))
	f.Add([]byte(`{"data":[{"index":0,"embedding":[1e39,0]},{"index":1,"embedding":[0]}]}`))
	f.Add([]byte(`{"data":null}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		srv.Set(b)
		o := NewOpenAI(srv.URL, "", "m")
		o.Client().MaxRetries = 0
		vecs, err := o.Embed(context.Background(), []string{"a", "b"})
		if err != nil {
			return
		}
		if len(vecs) != 2 {
			t.Fatalf("%d vectors for 2 inputs", len(vecs))
		}
		for _, v := range vecs {
			if len(v) != o.Dims() || len(v) == 0 {
				t.Fatalf("a %d-dimensional vector, dims %d", len(v), o.Dims())
			}
			var s float64
			for _, x := range v {
				if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
					t.Fatalf("component %v", x)
				}
				s += float64(x) * float64(x)
			}
			if s != 0 && math.Abs(s-1) > 1e-3 {
				t.Fatalf("norm² %v", s)
			}
		}
	})
}
