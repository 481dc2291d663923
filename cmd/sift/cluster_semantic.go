package main

import (
	"context"
	"log/slog"

	"github.com/sift-search/sift/httpapi"
	"github.com/sift-search/sift/semantic"
	"github.com/sift-search/sift/wvstore"
)

// clusterSemantic makes the semantic layer of a cluster: searches on every
// server, and its indexer, which runs where the lease is held.
func clusterSemantic(st *wvstore.Store, sopts semantic.Options, log *slog.Logger) (httpapi.Semantic, func(context.Context), error) {
	sem := st.Semantic(wvstore.SemanticOptions{Embedder: sopts.Embedder, Hypothesize: sopts.Hypothesize, FreshWait: sopts.FreshWait, Logger: log})
	return sem, sem.Run, nil
}
