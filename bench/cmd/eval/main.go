// Command eval measures Sift's ranking on every BEIR-layout collection in
// ../shared/datasets: nDCG@10, recall@100 and MRR@10 per dataset, for
// full-text search (BM25), the built-in embedder alone, and the fused
// ranking of semantic search.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/sift-search/sift/bench"
	"github.com/sift-search/sift/embed"
	"github.com/sift-search/sift/engine"
	"github.com/sift-search/sift/semantic"
)

func main() {
	dir := flag.String("datasets", "", "folder of BEIR datasets (default: ../shared/datasets, searched upwards)")
	k1 := flag.Float64("k1", 0, "BM25 k1 (default: the engine's)")
	b := flag.Float64("b", -1, "BM25 b (default: the engine's)")
	tw := flag.Int("title-weight", 0, "title weight (default: the engine's)")
	hashing := flag.Bool("hashing", false, "replace the trained built-in embedder by plain word hashing (its untrained form), to measure what training adds")
	flag.Parse()
	if *dir == "" {
		d, ok := bench.DatasetsDir()
		if !ok {
			fmt.Fprintln(os.Stderr, "eval: ../shared/datasets not found; pass -datasets")
			os.Exit(2)
		}
		*dir = d
	}
	sets, err := bench.LoadBEIRDatasets(*dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "eval:", err)
		os.Exit(1)
	}
	opts := engine.DefaultOptions()
	if *k1 > 0 {
		opts.Index.K1 = *k1
	}
	if *b >= 0 {
		opts.Index.B = *b
	}
	if *tw > 0 {
		opts.TitleWeight = uint8(*tw)
	}
	var sopts semantic.Options // the index and title weight follow opts
	vecName := "built-in embedder"
	if *hashing {
		sopts.Embedder = embed.Untrained()
		vecName = "word hashing"
	}
	fmt.Printf("%-10s %-22s %6s %8s %8s %10s %8s\n", "dataset", "ranking", "docs", "queries", "nDCG@10", "recall@100", "MRR@10")
	for _, ds := range sets {
		r, err := bench.Run(ds, opts, sopts)
		if err != nil {
			fmt.Fprintln(os.Stderr, "eval:", ds.Name, err)
			os.Exit(1)
		}
		for _, row := range []struct {
			name string
			run  map[string][]string
		}{{"bm25 (/api/search)", r.BM25}, {vecName, r.Vectors}, {"fused (semantic-search)", r.Fused}} {
			m := bench.Evaluate(ds.Qrels, row.run)
			fmt.Printf("%-10s %-22s %6d %8d %8.4f %10.4f %8.4f\n", ds.Name, row.name, len(ds.Docs), m.Queries, m.NDCG10, m.Recall100, m.MRR10)
		}
	}
}
