package fusion

import (
	"math"
	"testing"
)

func TestScores(t *testing.T) {
	type cand struct {
		bm, cos float32
		hasV    bool
	}
	cands := []cand{{4, 0.9, true}, {2, 0.5, true}, {0, 0.7, true}, {1, 0, false}}
	run := func(mode Mode, vectors bool) []float64 {
		out := make([]float64, len(cands))
		Scores(len(cands), mode, vectors, func(i int) (float32, float32, bool) { return cands[i].bm, cands[i].cos, cands[i].hasV },
			func(i int, s float64) { out[i] = s })
		return out
	}
	for _, c := range []struct {
		name    string
		mode    Mode
		vectors bool
		want    []float64
	}{
		{"fused", ModeFused, true, []float64{0.5 + 0.5, 0.25 + 0, 0 + 0.25, 0.125}},
		{"lexical", ModeLexical, true, []float64{1, 0.5, 0, 0.25}},
		{"vectors", ModeVectors, true, []float64{1, 0, 0.5, 0}},
		{"no vectors", ModeFused, false, []float64{1, 0.5, 0, 0.25}},
	} {
		got := run(c.mode, c.vectors)
		for i := range got {
			if math.Abs(got[i]-c.want[i]) > 1e-6 {
				t.Errorf("%s: scores %v, want %v", c.name, got, c.want)
				break
			}
		}
	}
}

func TestFeedback(t *testing.T) {
	if Feedback(nil) != nil || Feedback([][]float32{nil, nil}) != nil {
		t.Error("feedback of no vectors")
	}
	// The first vector's dimension wins; only the FeedbackDocs best count:
	// (1,0) + (0,1) + (1,0), normalised.
	vecs := [][]float32{nil, {1, 0}, {0, 1, 0}, {0, 1}, {1, 0}, {1, 0}, {0, 1}}
	got := Feedback(vecs)
	w0, w1 := float32(2/math.Sqrt(5)), float32(1/math.Sqrt(5))
	if len(got) != 2 || math.Abs(float64(got[0]-w0)) > 1e-6 || math.Abs(float64(got[1]-w1)) > 1e-6 {
		t.Errorf("feedback %v, want [%v %v]", got, w0, w1)
	}
}
