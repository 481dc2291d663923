// Package bench holds Sift's benchmarks and its relevance evaluation: a
// reader of BEIR-layout test collections, the standard ranking metrics, and
// a fixed-seed generator of synthetic chat messages.
package bench

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Dataset is a BEIR-layout test collection.
type Dataset struct {
	Name    string
	Docs    []BEIRDoc
	Queries []BEIRQuery
	Qrels   map[string]map[string]int // query id -> doc id -> graded gain
}

// BEIRDoc is a line of corpus.jsonl.
type BEIRDoc struct {
	ID    string `json:"_id"`
	Title string `json:"title"`
	Text  string `json:"text"`
}

// BEIRQuery is a line of queries.jsonl.
type BEIRQuery struct {
	ID   string `json:"_id"`
	Text string `json:"text"`
}

// DatasetsDir is where the shared test collections live, relative to the
// repository root; bench code runs from bench/, hence the search upwards.
func DatasetsDir() (string, bool) {
	for _, p := range []string{"../shared/datasets", "../../shared/datasets", "../../../shared/datasets"} {
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			abs, _ := filepath.Abs(p)
			return abs, true
		}
	}
	return "", false
}

// LoadBEIRDatasets loads every folder of dir that holds the BEIR layout.
func LoadBEIRDatasets(dir string) ([]*Dataset, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []*Dataset
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		if _, err := os.Stat(filepath.Join(p, "qrels", "test.tsv")); err != nil {
			continue
		}
		ds, err := LoadBEIR(p)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", e.Name(), err)
		}
		out = append(out, ds)
	}
	return out, nil
}

// LoadBEIR loads one collection.
func LoadBEIR(dir string) (*Dataset, error) {
	ds := &Dataset{Name: filepath.Base(dir), Qrels: map[string]map[string]int{}}
	if err := readJSONL(filepath.Join(dir, "corpus.jsonl"), func(b []byte) error {
		var d BEIRDoc
		err := json.Unmarshal(b, &d)
		ds.Docs = append(ds.Docs, d)
		return err
	}); err != nil {
		return nil, err
	}
	if err := readJSONL(filepath.Join(dir, "queries.jsonl"), func(b []byte) error {
		var q BEIRQuery
		err := json.Unmarshal(b, &q)
		ds.Queries = append(ds.Queries, q)
		return err
	}); err != nil {
		return nil, err
	}
	f, err := os.Open(filepath.Join(dir, "qrels", "test.tsv"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for line := 0; sc.Scan(); line++ {
		fields := strings.Split(sc.Text(), "\t")
		if line == 0 || len(fields) != 3 {
			continue // header
		}
		gain, err := strconv.Atoi(strings.TrimSpace(fields[2]))
		if err != nil {
			return nil, fmt.Errorf("qrels line %d: %w", line+1, err)
		}
		if gain <= 0 {
			continue
		}
		if ds.Qrels[fields[0]] == nil {
			ds.Qrels[fields[0]] = map[string]int{}
		}
		ds.Qrels[fields[0]][fields[1]] = gain
	}
	return ds, sc.Err()
}

func readJSONL(path string, fn func([]byte) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for n := 1; sc.Scan(); n++ {
		if len(strings.TrimSpace(sc.Text())) == 0 {
			continue
		}
		if err := fn(sc.Bytes()); err != nil {
			return fmt.Errorf("%s line %d: %w", path, n, err)
		}
	}
	return sc.Err()
}

// Metrics are averages over the judged queries.
type Metrics struct {
	NDCG10    float64
	Recall100 float64
	MRR10     float64
	Queries   int
}

// Evaluate scores rankings (query id -> doc ids best first) against the
// qrels: nDCG@10 with gain 2^g-1 and log2 discount, recall@100 and MRR@10,
// averaged over the queries present in the qrels (a query with no ranking
// scores 0).
func Evaluate(qrels map[string]map[string]int, rankings map[string][]string) Metrics {
	var m Metrics
	for qid, rel := range qrels {
		ranked := rankings[qid]
		m.NDCG10 += ndcg(ranked, rel, 10)
		m.Recall100 += recall(ranked, rel, 100)
		m.MRR10 += mrr(ranked, rel, 10)
		m.Queries++
	}
	if m.Queries > 0 {
		n := float64(m.Queries)
		m.NDCG10, m.Recall100, m.MRR10 = m.NDCG10/n, m.Recall100/n, m.MRR10/n
	}
	return m
}

func ndcg(ranked []string, rel map[string]int, k int) float64 {
	dcg := 0.0
	for i, id := range ranked[:min(k, len(ranked))] {
		if g := rel[id]; g > 0 {
			dcg += (math.Pow(2, float64(g)) - 1) / math.Log2(float64(i+2))
		}
	}
	gains := make([]int, 0, len(rel))
	for _, g := range rel {
		gains = append(gains, g)
	}
	sort.Sort(sort.Reverse(sort.IntSlice(gains)))
	ideal := 0.0
	for i, g := range gains[:min(k, len(gains))] {
		ideal += (math.Pow(2, float64(g)) - 1) / math.Log2(float64(i+2))
	}
	if ideal == 0 {
		return 0
	}
	return dcg / ideal
}

func recall(ranked []string, rel map[string]int, k int) float64 {
	if len(rel) == 0 {
		return 0
	}
	hit := 0
	for _, id := range ranked[:min(k, len(ranked))] {
		if rel[id] > 0 {
			hit++
		}
	}
	return float64(hit) / float64(len(rel))
}

func mrr(ranked []string, rel map[string]int, k int) float64 {
	for i, id := range ranked[:min(k, len(ranked))] {
		if rel[id] > 0 {
			return 1 / float64(i+1)
		}
	}
	return 0
}

// SortedNames returns the dataset names in order.
func SortedNames(ds []*Dataset) []string {
	var names []string
	for _, d := range ds {
		names = append(names, d.Name)
	}
	slices.Sort(names)
	return names
}
