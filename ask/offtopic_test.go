package ask

import (
	"context"
	"testing"
)

// TestOffTopicQuestions: a question about what the content does not hold
// gets the no-answer sentence, not an answer made of passages that share
// the product's name and a common word ("run"); with the closest sources.
func TestOffTopicQuestions(t *testing.T) {
	a := New(demoIndex(t), Options{Link: testLink, Correct: demoCorrect})
	for _, q := range []string{
		"Can I run wren on a raspberry pi?", "Does Wren integrate with Salesforce?", "Who won the 2018 world cup?",
		"What is the capital of Australia?", "How do I bake sourdough bread?",
	} {
		var r recorder
		if _, err := a.Ask(context.Background(), Request{Question: q}, &r); err != nil {
			t.Fatal(err)
		}
		if r.answer() != NoAnswer || len(r.sources) == 0 {
			t.Errorf("%q: %d sources, answer %q", q, len(r.sources), r.answer())
		}
	}
}
