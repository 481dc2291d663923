package wvstore

import (
	"context"
	"slices"
	"sync"

	"github.com/weaviate/weaviate-go-client/v5/weaviate/data/replication"
	"github.com/weaviate/weaviate/entities/models"

	"github.com/sift-search/sift/record"
)

// PlainImport writes msgs as Message objects — the ids and properties
// PutMessages writes, without vectors — in batches of size objects,
// workers batches in flight, at Weaviate's default consistency (QUORUM),
// and nothing else: no reads of what is stored, no change log, no
// catalog. It is Weaviate's own import speed on the cluster, which
// BenchmarkStores measures beside Sift's ingest; it is not a way to write
// records (their channels and the change log would not know of them).
func (s *bulk) PlainImport(ctx context.Context, msgs []record.Message, size, workers int) error {
	objs := make([]*models.Object, len(msgs))
	for i := range msgs {
		objs[i] = s.messageObject(&msgs[i])
	}
	parts := make(chan []*models.Object)
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	for range max(workers, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for part := range parts {
				if err := s.upsertBatch(ctx, part, replication.ConsistencyLevel.QUORUM); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	for part := range slices.Chunk(objs, max(size, 1)) {
		parts <- part
	}
	close(parts)
	wg.Wait()
	return firstErr
}
