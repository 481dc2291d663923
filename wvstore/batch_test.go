package wvstore

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/sift-search/sift/internal/weaviatetest"
	"github.com/sift-search/sift/record"
)

// TestBatchesFitTheMessageSize: a write of more than a gRPC message's worth
// of objects (Weaviate's GRPC_MAX_MESSAGE_SIZE, 100 MB by default; 1 MB on
// this node, with batchBytes lowered to match) is split into batches that
// fit, so ten 300 KB documents uploaded at once are stored, each whole.
func TestBatchesFitTheMessageSize(t *testing.T) {
	defer func(n int) { batchBytes = n }(batchBytes)
	batchBytes = 400 << 10
	cl := weaviatetest.StartWith(t, 1, weaviatetest.Options{Env: []string{"GRPC_MAX_MESSAGE_SIZE=1000000"}})
	s, err := Open(context.Background(), Options{URL: cl.Nodes[0].URL(), GRPCAddr: cl.Nodes[0].GRPCAddr(), Namespace: "Big"})
	if err != nil {
		t.Fatal(err)
	}
	var docs []record.Document
	for i := range 10 {
		docs = append(docs, record.Document{Title: fmt.Sprint("Big ", i), Content: strings.Repeat(fmt.Sprintf("word%d filler text ", i), 15_000)})
	}
	stored, err := s.PutDocuments(docs)
	if err != nil {
		t.Fatalf("ten 300 KB documents at once: %v", err)
	}
	for _, d := range stored {
		got, ok := s.Document(d.ID)
		if !ok || got.Content != d.Content {
			t.Fatalf("document %s: stored %v, %d bytes of %d", d.Title, ok, len(got.Content), len(d.Content))
		}
	}
}
