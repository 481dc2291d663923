package wvstore

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"time"

	"github.com/sift-search/sift/record"
	"github.com/weaviate/weaviate-go-client/v5/weaviate"
	"github.com/weaviate/weaviate-go-client/v5/weaviate/auth"
	"github.com/weaviate/weaviate-go-client/v5/weaviate/grpc"
)

// Store is Sift's store in a Weaviate cluster. Its methods are those of the
// types it embeds, each one role: the object layer (core) and, written on
// it, the catalog, the content, full-text search, the instance's state,
// the operators' decisions, bulk export and migration, and the store's
// side of semantic search. Every role but core embeds the Store in turn,
// and so reaches the others' methods as the Store's own.
type Store struct {
	core
	sources
	content
	searcher
	instance
	operator
	bulk
	chunks
}

// core is the Weaviate object layer every role reads and writes through:
// the client and options, object ids and class names, batched writes and
// deletions, queries and the paging past their bounds (objects.go,
// paging.go, listing.go), and the steps and leases that coordinate
// processes (step.go, lease.go).
type core struct {
	opts Options
	c    *weaviate.Client
	// pairs: every message and document of the cluster carries its
	// pairs of words (schema.go, pairsMetaKey), so each write adds them
	// and phrases filter their candidates by them.
	pairs bool
}

// sources is the catalog of sources and channels (catalog.go): the
// versions of each source record and of the settings (sources.go), the
// crawl cursors (cursors.go), this process's copy of the catalog and the
// token that says it is current, and the slug claims of channels and
// documents.
type sources struct {
	*Store
	cache catalogCache
}

// content is the channels, messages and documents (channels.go,
// messages.go, documents.go): written by crawls and uploads, read by slug
// for the pages and the reading API (reads.go), each write of a record
// logged for the semantic indexer (changes.go).
type content struct {
	*Store
	// dropped holds threads of excluded channels that PutChannels
	// skipped, so their messages are kept out rather than refused.
	droppedMu sync.Mutex
	dropped   map[chanKey]bool
}

// searcher ranks messages and documents by words (search.go) and completes
// a query being typed (suggest.go). It keeps the collections' lengths a
// phrase's score needs until the next write.
type searcher struct {
	*Store
	lens lengthsCache
}

// instance is the state of the whole store, for health, metrics and the
// dashboard, and the instance's settings (instance.go). It keeps this
// process's reading of the write stamp every write leaves.
type instance struct {
	*Store
	stamp stamp
}

// operator carries out what operators decide about a source's content
// (operator.go): channel visibility, excluded channels and opt-outs, and
// the deletions a changed or deleted source demands of what is stored.
type operator struct{ *Store }

// bulk moves records into and out of the cluster whole: the export a copy
// reads (export.go; transfer.Source), and what `sift migrate` needs beyond
// the catalog's and content's methods — a migration's identity and
// progress, sources that keep their creation time, slugs given with the
// records (migrate.go).
type bulk struct{ *Store }

// chunks is the store's side of semantic search (semantic*.go): the
// chunk objects and their queries, the change log the indexer follows
// with its watermark, and the built-in embedder's stored model. Semantic,
// which it makes, searches and indexes through it.
type chunks struct{ *Store }

// Open connects to the cluster at opts.URL and creates or migrates Sift's
// collections.
func Open(ctx context.Context, opts Options) (*Store, error) {
	opts.defaults()
	u, err := url.Parse(opts.URL)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("WEAVIATE_URL %q: give http(s)://host:port", opts.URL)
	}
	cfg := weaviate.Config{Host: u.Host, Scheme: u.Scheme, Timeout: time.Minute}
	if opts.GRPCAddr != "" {
		cfg.GrpcConfig = &grpc.Config{Host: opts.GRPCAddr, Secured: u.Scheme == "https"}
	}
	if opts.APIKey != "" {
		cfg.AuthConfig = auth.ApiKey{Value: opts.APIKey}
	}
	c, err := weaviate.NewClient(cfg)
	if err != nil {
		return nil, fmt.Errorf("weaviate client: %w", err)
	}
	pairs, err := migrate(ctx, c, opts)
	if err != nil {
		return nil, err
	}
	s := &Store{core: core{opts: opts, c: c, pairs: pairs}}
	s.sources.Store = s
	s.content = content{Store: s, dropped: map[chanKey]bool{}}
	s.searcher.Store = s
	s.instance.Store = s
	s.operator.Store = s
	s.bulk.Store = s
	s.chunks.Store = s
	if err := s.ensureUploads(); err != nil {
		return nil, err
	}
	return s, nil
}

// ensureUploads creates the built-in uploads source on a new cluster (a
// process starting beside another that created it meanwhile is fine).
func (s *sources) ensureUploads() error {
	if _, ok := s.Source(record.UploadsSourceID); ok {
		return nil
	}
	_, err := s.CreateSource(record.Source{ID: record.UploadsSourceID, Name: "Uploads", Type: "upload",
		Enabled: true, Visibility: record.VisibilityPublic, Config: map[string]any{}})
	if err != nil && !errors.Is(err, record.ErrConflict) {
		return fmt.Errorf("create the uploads source: %w", err)
	}
	return nil
}
