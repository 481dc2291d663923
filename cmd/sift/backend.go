package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/sift-search/sift/crawl"
	"github.com/sift-search/sift/engine"
	"github.com/sift-search/sift/httpapi"
	"github.com/sift-search/sift/index"
	"github.com/sift-search/sift/insights"
	"github.com/sift-search/sift/semantic"
	"github.com/sift-search/sift/wvstore"
)

// backend is the store a server runs on, the memory store on the data dir
// or the Weaviate-backed one, with its semantic layer.
type backend struct {
	store interface {
		httpapi.Store
		crawl.Sink
	}
	sem httpapi.Semantic
	// insights keeps the insights table: the engine; nil on a cluster,
	// where each server keeps its own in memory.
	insights insights.Store
	// shared runs the jobs one process does for every process of a
	// cluster (scheduled crawls, the semantic indexer), until ctx ends:
	// on the memory store at once; on a cluster while this process holds
	// the lease, taken over by another when it dies.
	shared func(ctx context.Context, jobs ...func(context.Context))
	close  func() error
}

// leaseTTL is how long a cluster's lease outlives its holder's last
// renewal: the time another server takes over scheduled crawls and
// indexing after the holder dies (SIFT_LEASE_TTL in tests).
const leaseTTL = 30 * time.Second

// testKnob reads a duration the tests shorten (SIFT_LEASE_TTL,
// SIFT_SCHEDULE_TICK): not settings an operator needs, so not in the
// configuration table.
func testKnob(env string, def time.Duration) time.Duration {
	if d, err := time.ParseDuration(os.Getenv(env)); err == nil && d >= 100*time.Millisecond {
		return d
	}
	return def
}

func openBackend(cfg *config, opts engine.Options, sopts semantic.Options, log *slog.Logger) (*backend, error) {
	if cfg.Store == "weaviate" {
		return openCluster(cfg, sopts, log)
	}
	eng, idx, err := openFollowed(opts, sopts)
	if err != nil {
		return nil, fmt.Errorf("open data dir %s: %w", cfg.DataDir, err)
	}
	return &backend{store: eng, sem: idx, insights: eng, close: eng.Close, shared: runAll}, nil
}

// runAll runs jobs until ctx ends and they return.
func runAll(ctx context.Context, jobs ...func(context.Context)) {
	var wg sync.WaitGroup
	for _, j := range jobs {
		wg.Add(1)
		go func() { defer wg.Done(); j(ctx) }()
	}
	wg.Wait()
}

// openCluster opens the store in a Weaviate cluster, creating or
// migrating Sift's collections.
func openCluster(cfg *config, sopts semantic.Options, log *slog.Logger) (*backend, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	st, err := wvstore.Open(ctx, wvstore.Options{URL: cfg.WeaviateURL, GRPCAddr: cfg.WeaviateGRPCAddr, APIKey: cfg.WeaviateAPIKey,
		Namespace: cfg.WeaviateNamespace, Replication: cfg.WeaviateReplication, Shards: cfg.WeaviateShards,
		NoPhrasePairs: cfg.WeaviateNoPairs})
	if err != nil {
		return nil, fmt.Errorf("open the Weaviate store at %s: %w", cfg.WeaviateURL, err)
	}
	sem, indexer, err := clusterSemantic(st, sopts, log)
	if err != nil {
		return nil, err
	}
	ttl := testKnob("SIFT_LEASE_TTL", leaseTTL)
	host, _ := os.Hostname()
	holder := host + ":" + strconv.Itoa(os.Getpid()) + ":" + strconv.FormatInt(time.Now().UnixNano(), 36)
	lease := st.Lease("shared", holder, ttl)
	b := &backend{store: clusterStore{st}, sem: sem, close: func() error { return nil }}
	b.shared = func(ctx context.Context, jobs ...func(context.Context)) {
		if indexer != nil {
			jobs = append(jobs, indexer)
		}
		lease.Hold(ctx, func(ctx context.Context) {
			log.Info("this server holds the cluster's lease: it runs scheduled crawls and indexing")
			runAll(ctx, jobs...)
		})
		rctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		lease.Release(rctx)
		cancel()
	}
	return b, nil
}

// clusterStore is the cluster store with the backup the HTTP API serves,
// written as `sift backup` writes one (backupCluster).
type clusterStore struct{ *wvstore.Store }

func (c clusterStore) Backup(w io.Writer) (uint64, error) { return backupCluster(c.Store, w) }

// openFollowed opens the memory store with eo and a semantic index
// following it, given the store's logger, index parameters and title
// weight unless so sets its own.
func openFollowed(eo engine.Options, so semantic.Options) (*engine.Engine, *semantic.Index, error) {
	if so.Logger == nil {
		so.Logger = eo.Logger
	}
	if so.Index == (index.Options{}) {
		so.Index = eo.Index
	}
	if so.TitleWeight == 0 {
		so.TitleWeight = eo.TitleWeight
	}
	return semantic.Open(eo.OpenWith, so)
}
