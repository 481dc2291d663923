package ask

import (
	"fmt"
	"strings"

	"github.com/sift-search/sift/internal/textcut"
	"github.com/sift-search/sift/llm"
)

// instructions open the system message of every grounded prompt.
const instructions = `You answer questions about a community's chat history and documents, using only the numbered sources below.
- Cite the sources you use by their numbers in square brackets, like [1] or [2][3], right after the statement they support.
- If the sources do not contain the answer, say that the indexed content does not answer the question. Do not guess and do not use outside knowledge.
- Be concise and concrete: give the setting, command, version or error message the sources give.
- Answer in the language of the question.`

// Turn is one message of the conversation so far.
type Turn struct {
	Role    string // "user" or "assistant"
	Content string
}

// MaxTurns bounds the history passed to the model.
const MaxTurns = 20

// fitSources keeps, in rank order, the sources that fit a budget of tokens,
// cutting the last one that fits partly (when at least minSourceTokens
// of it do).
func fitSources(sources []Source, budget int) []Source {
	const minSourceTokens = 60
	out := sources[:0:0]
	for _, s := range sources {
		n := EstimateTokens(s.Text) + EstimateTokens(s.Metadata(true)) + 8
		if n > budget {
			if budget < minSourceTokens {
				break
			}
			// About 3 bytes per token of the remaining budget.
			s.Text = textcut.Prefix(s.Text, budget*3) + " …"
			n = budget
		}
		out = append(out, s)
		budget -= n
	}
	return out
}

// systemPrompt is the instructions and the numbered sources.
func systemPrompt(sources []Source) string {
	var b strings.Builder
	b.WriteString(instructions)
	b.WriteString("\n\nSources:\n")
	if len(sources) == 0 {
		b.WriteString("\n(none: nothing in the indexed content matches the question)\n")
	}
	for i, s := range sources {
		fmt.Fprintf(&b, "\n[%d] %s — %s\n%s\n", i+1, s.Type, s.Metadata(true), strings.TrimSpace(s.Text))
	}
	return b.String()
}

// trimHistory keeps the last MaxTurns turns, then drops the oldest until the
// rest fits budget tokens. Turns with other roles or no content are left
// out.
func trimHistory(history []Turn, budget int) []Turn {
	var kept []Turn
	for _, t := range history {
		if (t.Role == "user" || t.Role == "assistant") && strings.TrimSpace(t.Content) != "" {
			kept = append(kept, t)
		}
	}
	if len(kept) > MaxTurns {
		kept = kept[len(kept)-MaxTurns:]
	}
	total := 0
	for _, t := range kept {
		total += EstimateTokens(t.Content) + messageOverhead
	}
	for len(kept) > 0 && total > budget {
		total -= EstimateTokens(kept[0].Content) + messageOverhead
		kept = kept[1:]
	}
	return kept
}

// buildPrompt is the chat the model answers: the system message with the
// sources, the history, then the question.
func buildPrompt(sources []Source, history []Turn, question string) []llm.Message {
	msgs := []llm.Message{{Role: "system", Content: systemPrompt(sources)}}
	for _, t := range history {
		msgs = append(msgs, llm.Message{Role: t.Role, Content: t.Content})
	}
	return append(msgs, llm.Message{Role: "user", Content: question})
}

// promptTokens estimates the tokens of a prompt.
func promptTokens(msgs []llm.Message) int {
	n := 0
	for _, m := range msgs {
		n += EstimateTokens(m.Content) + messageOverhead
	}
	return n
}
