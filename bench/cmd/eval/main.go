// Command eval measures Sift's ranking on every BEIR-layout collection in
// ../shared/datasets: nDCG@10, recall@100 and MRR@10 per dataset, for
// full-text search (BM25), the built-in embedder alone, and the fused
// ranking of semantic search. With -weaviate (or -weaviate-url) it ranks
// the same way on a Weaviate cluster (wvstore) too and prints both stores
// side by side. Unless -typos=false it also ranks each dataset's queries
// with typos in them (bench.TypoQueries, seeded by -typo-seed) by BM25,
// with the engine's typo tolerance and without, next to the clean BM25
// ranking; -print-typos shows a dataset's typo'd queries.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/sift-search/sift/bench"
	"github.com/sift-search/sift/embed"
	"github.com/sift-search/sift/engine"
	"github.com/sift-search/sift/semantic"
	"github.com/sift-search/sift/wvstore"
)

func main() {
	dir := flag.String("datasets", "", "folder of BEIR datasets (default: ../shared/datasets, searched upwards)")
	k1 := flag.Float64("k1", 0, "BM25 k1 (default: the engine's)")
	b := flag.Float64("b", -1, "BM25 b (default: the engine's)")
	tw := flag.Int("title-weight", 0, "title weight (default: the engine's)")
	hashing := flag.Bool("hashing", false, "replace the trained built-in embedder by plain word hashing (its untrained form), to measure what training adds")
	wv := flag.Bool("weaviate", false, "also rank on a 1-node Weaviate cluster started on loopback (the tests' pinned weaviate-server), memory and Weaviate side by side")
	wvURL := flag.String("weaviate-url", "", "also rank on the Weaviate cluster at this REST address (collections Eval<dataset><time>, dropped afterwards)")
	wvWait := flag.Duration("weaviate-wait", 0, "with -weaviate: rank again this long after indexing (Weaviate v1.35.2's BM25 with a limit misses top hits until its memtables are flushed, about a minute)")
	typos := flag.Bool("typos", true, "also rank the queries with typos (bench.TypoQueries) by BM25, with typo tolerance and without (memory store only)")
	typoSeed := flag.Int64("typo-seed", 23, "seed of the typos")
	printTypos := flag.String("print-typos", "", "print this dataset's queries and their typo'd forms, and exit")
	flag.Parse()
	if (*wv || *wvURL != "") && (*hashing || *tw > 0) {
		fmt.Fprintln(os.Stderr, "eval: -hashing and -title-weight apply to the memory store only; not with -weaviate")
		os.Exit(2)
	}
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
	if *printTypos != "" {
		os.Exit(showTypos(sets, *printTypos, *typoSeed))
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
	if *wv || *wvURL != "" {
		stop := func() {}
		if *wvURL == "" {
			cl, stopCluster, err := bench.StartWeaviate(1)
			if err != nil {
				fmt.Fprintln(os.Stderr, "eval: start weaviate:", err)
				os.Exit(1)
			}
			*wvURL, stop = cl.Nodes[0].URL(), stopCluster
		}
		code := sideBySide(sets, opts, sopts, wvstore.Options{URL: *wvURL, K1: float32(opts.Index.K1), B: float32(opts.Index.B)}, *wvWait)
		stop()
		os.Exit(code)
	}
	header := fmt.Sprintf("%-10s %-22s %6s %8s %8s %10s %8s", "dataset", "ranking", "docs", "queries", "nDCG@10", "recall@100", "MRR@10")
	if *typos {
		header += fmt.Sprintf(" %12s", "nDCG/clean")
		typoStats(sets, *typoSeed)
	}
	fmt.Println(header)
	for _, ds := range sets {
		var typoed []bench.BEIRQuery
		if *typos {
			typoed = bench.TypoQueries(ds.Queries, *typoSeed)
		}
		r, err := runMemory(ds, opts, sopts, typoed)
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
		if !*typos {
			continue
		}
		clean := bench.Evaluate(ds.Qrels, r.BM25)
		for _, row := range []struct {
			name string
			run  map[string][]string
		}{{"bm25, typos", r.Typos}, {"bm25, typos off", r.TyposOff}} {
			m := bench.Evaluate(ds.Qrels, row.run)
			ratio := 0.0
			if clean.NDCG10 > 0 {
				ratio = m.NDCG10 / clean.NDCG10
			}
			fmt.Printf("%-10s %-22s %6d %8d %8.4f %10.4f %8.4f %12.3f\n", ds.Name, row.name, len(ds.Docs), m.Queries, m.NDCG10, m.Recall100, m.MRR10, ratio)
		}
	}
}

// typoStats tells on stderr how many queries and words get typos.
func typoStats(sets []*bench.Dataset, seed int64) {
	for _, ds := range sets {
		queries, words := 0, 0
		for _, q := range ds.Queries {
			if _, edits := bench.TypoQuery(q.ID, q.Text, seed); len(edits) > 0 {
				queries++
				words += len(edits)
			}
		}
		fmt.Fprintf(os.Stderr, "eval: %s: typos (seed %d) in %d of %d queries, %d words\n", ds.Name, seed, queries, len(ds.Queries), words)
	}
}

// showTypos prints the queries of the dataset named name, each with its
// typo'd form and the edits, and returns the exit code.
func showTypos(sets []*bench.Dataset, name string, seed int64) int {
	for _, ds := range sets {
		if ds.Name != name {
			continue
		}
		for _, q := range ds.Queries {
			typoed, edits := bench.TypoQuery(q.ID, q.Text, seed)
			fmt.Printf("%-5s %s\n%-5s %s\n", q.ID, q.Text, "→", typoed)
			for _, e := range edits {
				fmt.Printf("%-5s %s → %s (%s at %d)\n", "", e.Word, e.Typo, e.Kind, e.Pos)
			}
		}
		return 0
	}
	fmt.Fprintf(os.Stderr, "eval: no dataset %q; there are %v\n", name, bench.SortedNames(sets))
	return 2
}

// sideBySide ranks every dataset on the memory store and on the cluster
// (each dataset in a namespace of its own, dropped afterwards) and prints
// the metrics of both; it returns the exit code.
func sideBySide(sets []*bench.Dataset, opts engine.Options, sopts semantic.Options, wo wvstore.Options, wait time.Duration) int {
	fmt.Printf("%-10s %-30s %6s %8s | %-25s | %-25s | %8s\n", "", "", "", "", "memory", "weaviate", "")
	fmt.Printf("%-10s %-30s %6s %8s | %7s %9s %7s | %7s %9s %7s | %8s\n", "dataset", "ranking", "docs", "queries",
		"nDCG@10", "recall@100", "MRR@10", "nDCG@10", "recall@100", "MRR@10", "ΔnDCG@10")
	for _, ds := range sets {
		mem, err := runMemory(ds, opts, sopts, nil)
		if err != nil {
			fmt.Fprintln(os.Stderr, "eval:", ds.Name, err)
			return 1
		}
		o := wo
		o.Namespace = "Eval" + bench.NamespaceWord(ds.Name) + strconv.FormatInt(time.Now().Unix()%1e6, 36)
		start := time.Now()
		err = rankWeaviate(ds, o, wait, func(when string, wv *bench.Rankings) {
			for _, row := range []struct {
				name     string
				mem, wvr map[string][]string
			}{{"bm25 (/api/search)", mem.BM25, wv.BM25}, {"built-in embedder", mem.Vectors, wv.Vectors},
				{"fused (semantic-search)", mem.Fused, wv.Fused}} {
				m, w := bench.Evaluate(ds.Qrels, row.mem), bench.Evaluate(ds.Qrels, row.wvr)
				fmt.Printf("%-10s %-30s %6d %8d | %7.4f %9.4f %7.4f | %7.4f %9.4f %7.4f | %+8.4f\n", ds.Name, row.name+when, len(ds.Docs), m.Queries,
					m.NDCG10, m.Recall100, m.MRR10, w.NDCG10, w.Recall100, w.MRR10, w.NDCG10-m.NDCG10)
			}
		})
		if derr := bench.DropNamespace(o.URL, o.Namespace); derr != nil {
			fmt.Fprintln(os.Stderr, "eval:", ds.Name, derr)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "eval:", ds.Name, "weaviate:", err)
			return 1
		}
		fmt.Fprintf(os.Stderr, "eval: %s on weaviate took %s\n", ds.Name, time.Since(start).Round(time.Second))
	}
	return 0
}

// runMemory ranks ds (bench.RunTypos) on a memory store opened with opts
// and a semantic index following it, as sift serve runs them: the index
// and title weight follow opts.
func runMemory(ds *bench.Dataset, opts engine.Options, sopts semantic.Options, typoed []bench.BEIRQuery) (*bench.Rankings, error) {
	sopts.Index, sopts.TitleWeight = opts.Index, opts.TitleWeight
	e, x, err := semantic.Open(opts.OpenWith, sopts)
	if err != nil {
		return nil, err
	}
	defer e.Close()
	return bench.RunTypos(ds, e, x, typoed)
}

// rankWeaviate indexes ds into the cluster and ranks it at once and, when
// wait is set, again after wait; show gets each ranking.
func rankWeaviate(ds *bench.Dataset, o wvstore.Options, wait time.Duration, show func(when string, r *bench.Rankings)) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	st, err := wvstore.Open(ctx, o)
	if err != nil {
		return err
	}
	// The run steps the indexer itself: its searches do not wait for one.
	run, err := bench.IndexWeaviate(ds, st, st.Semantic(wvstore.SemanticOptions{FreshWait: -1}))
	if err != nil {
		return err
	}
	r, err := run.Rank()
	if err != nil {
		return err
	}
	show("", r)
	if wait <= 0 {
		return nil
	}
	time.Sleep(wait)
	if r, err = run.Rank(); err != nil {
		return err
	}
	show(" +"+wait.String(), r)
	return nil
}
