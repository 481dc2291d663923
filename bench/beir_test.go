package bench

import (
	"math"
	"testing"
)

func TestMetrics(t *testing.T) {
	qrels := map[string]map[string]int{
		"q1": {"a": 2, "b": 1},
		"q2": {"x": 1},
		"q3": {"z": 1}, // never retrieved
	}
	runs := map[string][]string{
		"q1": {"b", "c", "a"},
		"q2": {"y", "x"},
	}
	m := Evaluate(qrels, runs)
	// q1: DCG = 1/log2(2) + 3/log2(4) = 2.5; ideal = 3/1 + 1/log2(3).
	q1 := 2.5 / (3 + 1/math.Log2(3))
	q2 := 1 / math.Log2(3)
	if want := (q1 + q2) / 3; math.Abs(m.NDCG10-want) > 1e-9 {
		t.Errorf("nDCG@10 %v, want %v", m.NDCG10, want)
	}
	if want := (1.0 + 1.0 + 0) / 3; math.Abs(m.Recall100-want) > 1e-9 {
		t.Errorf("recall@100 %v, want %v", m.Recall100, want)
	}
	if want := (1.0 + 0.5 + 0) / 3; math.Abs(m.MRR10-want) > 1e-9 {
		t.Errorf("MRR@10 %v, want %v", m.MRR10, want)
	}
	if m.Queries != 3 {
		t.Errorf("queries %d", m.Queries)
	}
}

func TestSynthIsDeterministic(t *testing.T) {
	a, b := NewSynth(1, 1000, 5), NewSynth(1, 1000, 5)
	for i := 0; i < 200; i++ {
		ma, mb := a.Next(), b.Next()
		if ma != mb {
			t.Fatalf("message %d differs: %+v vs %+v", i, ma, mb)
		}
		if q, r := a.Query(ma), b.Query(mb); q != r {
			t.Fatalf("query %d differs", i)
		}
	}
}
