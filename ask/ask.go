// Package ask answers questions from the indexed content (retrieval-
// augmented generation). It retrieves passages with a Retriever's semantic
// search, builds a grounded prompt with numbered sources and the
// conversation so far, and streams a chat model's answer — or, with no
// model configured, composes an extractive answer from the sources' best
// sentences. Answers are delivered piece by piece to a Sink, which the
// HTTP layer turns into server-sent events or one JSON body.
package ask

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"

	"github.com/sift-search/sift/internal/textcut"
	"github.com/sift-search/sift/llm"
	"github.com/sift-search/sift/semantic"
)

// ChatModel streams a chat completion; *llm.Client is one.
type ChatModel interface {
	Stream(ctx context.Context, msgs []llm.Message, maxTokens int, onToken func(string) error) (*llm.Usage, error)
}

// Retriever finds the passages closest in meaning to a query; the
// semantic index (*semantic.Index) is one.
type Retriever interface {
	Search(ctx context.Context, req semantic.Request) (*semantic.Result, error)
}

// Options configure an Asker.
type Options struct {
	Model         ChatModel // nil: the extractive answerer
	Sources       int       // passages retrieved per question
	SourceTokens  int       // prompt budget for the sources
	HistoryTokens int       // prompt budget for the conversation so far
	AnswerTokens  int       // the model's answer, at most
	MaxConcurrent int       // model calls at once
	MaxQueued     int       // questions waiting for a model call; more are refused (ErrBusy)
	Logger        *slog.Logger
	// Link names a passage's links: its deep link (the platform's message,
	// or the document's origin with the text fragment) and Sift's own page
	// of it. nil: sources have no links.
	Link func(h *semantic.Hit) (url, page string)
	// Correct returns the misspelled words of a question, each with its
	// likeliest correction (as full-text search's typo tolerance matches
	// them: the store's words); nil takes questions as written.
	Correct func(question string, private bool) map[string]string
}

// DefaultOptions fit a model with a 4,096-token context.
func DefaultOptions() Options {
	return Options{Sources: 6, SourceTokens: 2200, HistoryTokens: 800, AnswerTokens: 700, MaxConcurrent: 4, MaxQueued: 16}
}

// Usage counts the tokens of an answer.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// Request is a question and the conversation before it.
type Request struct {
	Question string
	History  []Turn
	// Private lets the answer draw on content callers without credentials
	// may not see.
	Private bool
}

// Sink receives an answer as it is made: the sources once, first, then the
// pieces of the answer in order. An error from the sink (the client left)
// stops the answer and cancels the model call. Sources' stale is set when
// the passages were retrieved before the index had taken in every write
// acknowledged before the question (semantic.Result.Stale): the answer
// may miss the latest content, and the caller should say so.
type Sink interface {
	Sources(sources []Source, stale bool) error
	Token(string) error
}

var (
	// ErrBusy means MaxQueued questions already wait for the model.
	ErrBusy = errors.New("too many questions are waiting for the model; try again shortly")
	// ErrModel wraps a failure of the model server.
	ErrModel = errors.New("the model server failed")
)

// Asker answers questions from what a Retriever finds. Safe for
// concurrent use.
type Asker struct {
	ret    Retriever
	opts   Options
	log    *slog.Logger
	slots  chan struct{} // model calls running
	admits chan struct{} // questions admitted: running or waiting
	busy   atomic.Int64  // questions Admit refused
}

// New returns an Asker retrieving from ret; zero options take
// DefaultOptions' values.
func New(ret Retriever, opts Options) *Asker {
	def := DefaultOptions()
	for _, f := range []struct {
		v *int
		d int
	}{
		{&opts.Sources, def.Sources}, {&opts.SourceTokens, def.SourceTokens}, {&opts.HistoryTokens, def.HistoryTokens},
		{&opts.AnswerTokens, def.AnswerTokens}, {&opts.MaxConcurrent, def.MaxConcurrent}, {&opts.MaxQueued, def.MaxQueued},
	} {
		if *f.v <= 0 {
			*f.v = f.d
		}
	}
	a := &Asker{ret: ret, opts: opts, log: opts.Logger,
		slots: make(chan struct{}, opts.MaxConcurrent), admits: make(chan struct{}, opts.MaxConcurrent+opts.MaxQueued)}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	return a
}

// UsesModel reports whether answers come from a chat model.
func (a *Asker) UsesModel() bool { return a.opts.Model != nil }

// Admit reserves a place for one question, without waiting: ErrBusy when
// MaxConcurrent answers are being written and MaxQueued more wait. The
// caller calls release when the answer is done. Extractive answers are
// always admitted.
func (a *Asker) Admit() (release func(), err error) {
	if a.opts.Model == nil {
		return func() {}, nil
	}
	select {
	case a.admits <- struct{}{}:
		return func() { <-a.admits }, nil
	default:
		a.busy.Add(1)
		return nil, ErrBusy
	}
}

// Refused counts the questions Admit has refused with ErrBusy.
func (a *Asker) Refused() int64 { return a.busy.Load() }

// Ask answers req through sink and returns the token usage: the model's
// own count when it reports one, else the estimate of EstimateTokens.
func (a *Asker) Ask(ctx context.Context, req Request, sink Sink) (Usage, error) {
	question := strings.TrimSpace(req.Question)
	search := question // retrieved with, and read by the extractive answerer: typos corrected
	if a.opts.Correct != nil {
		search = corrected(question, a.opts.Correct(question, req.Private))
	}
	historyBudget, sourceBudget := a.budgets(question)
	history := trimHistory(req.History, historyBudget)
	pool, stale, err := a.retrieve(ctx, search, history, req.Private)
	if err != nil {
		return Usage{}, err
	}
	if a.opts.Model == nil {
		answer, sources := answerFrom(search, pool, a.opts.Sources)
		if err := sink.Sources(sources, stale); err != nil {
			return Usage{}, err
		}
		return a.extractive(question, answer, sources, sink)
	}
	sources := fitSources(pool, sourceBudget)
	if err := sink.Sources(sources, stale); err != nil {
		return Usage{}, err
	}
	return a.generate(ctx, question, history, sources, sink)
}

// maxQueryBytes bounds the retrieval query built from the question.
const maxQueryBytes = 2048

// retrieve finds the passages for a question: the semantic-search ranking
// of the question, with the previous question when there is a history (a
// follow-up such as "and on 2.0.1?" needs it); stale as the search says.
// The extractive answerer gets poolFactor times as many passages as it
// keeps: it keeps those its answer quotes.
func (a *Asker) retrieve(ctx context.Context, question string, history []Turn, private bool) ([]Source, bool, error) {
	query := textcut.Prefix(question, maxQueryBytes)
	if other := otherSpellings(query); len(other) > 0 {
		query = textcut.Prefix(query+" "+strings.Join(other, " "), maxQueryBytes)
	}
	for i := len(history) - 1; i >= 0; i-- {
		if history[i].Role == "user" {
			// The question leads; the previous one fills what room is left.
			if room := maxQueryBytes - len(query) - 1; room > 0 {
				query += "\n" + textcut.Prefix(history[i].Content, room)
			}
			break
		}
	}
	// Pseudo-relevance feedback helps and costs nothing; a hypothetical
	// answer from the model would delay the real one, so not with a model.
	limit := a.opts.Sources
	if a.opts.Model == nil {
		limit = min(poolFactor*limit, semantic.MaxLimit)
	}
	res, err := a.ret.Search(ctx, semantic.Request{Query: query, Limit: limit, HyDE: a.opts.Model == nil, Private: private})
	if err != nil {
		return nil, false, err
	}
	sources := make([]Source, 0, len(res.Hits))
	for i := range res.Hits {
		sources = append(sources, newSource(&res.Hits[i], a.opts.Link))
	}
	return sources, res.Stale, nil
}

// poolFactor is how many more passages than it keeps the extractive
// answerer chooses from.
const poolFactor = 3

// questionTokens is the room a question has in the prompt beside the
// budgets; a longer one takes its excess from the history, then from the
// sources, so the prompt still fits the model's context.
const questionTokens = 200

// budgets returns the prompt budgets of history and sources for question.
func (a *Asker) budgets(question string) (history, sources int) {
	history, sources = a.opts.HistoryTokens, a.opts.SourceTokens
	excess := EstimateTokens(question) - questionTokens
	if excess <= 0 {
		return history, sources
	}
	take := min(excess, history)
	history -= take
	sources = max(sources-(excess-take), 0)
	return history, sources
}

// extractive streams the extractive answer word by word.
func (a *Asker) extractive(question, answer string, sources []Source, sink Sink) (Usage, error) {
	for _, piece := range pieces(answer) {
		if err := sink.Token(piece); err != nil {
			return Usage{}, err
		}
	}
	prompt := EstimateTokens(question)
	for _, s := range sources {
		prompt += EstimateTokens(s.Text)
	}
	out := EstimateTokens(answer)
	return Usage{PromptTokens: prompt, CompletionTokens: out, TotalTokens: prompt + out}, nil
}

// pieces cuts text after each run of spaces, as models stream words; the
// pieces concatenate to text.
func pieces(text string) []string {
	var out []string
	for _, p := range strings.SplitAfter(text, " ") {
		switch {
		case p == "":
		case strings.TrimSpace(p) == "" && len(out) > 0:
			out[len(out)-1] += p
		default:
			out = append(out, p)
		}
	}
	return out
}

// generate streams the model's answer to the grounded prompt.
func (a *Asker) generate(ctx context.Context, question string, history []Turn, sources []Source, sink Sink) (Usage, error) {
	select {
	case a.slots <- struct{}{}:
		defer func() { <-a.slots }()
	case <-ctx.Done():
		return Usage{}, ctx.Err()
	}
	msgs := buildPrompt(sources, history, question)
	var answer strings.Builder
	var sinkErr error
	u, err := a.opts.Model.Stream(ctx, msgs, a.opts.AnswerTokens, func(piece string) error {
		answer.WriteString(piece)
		if sinkErr = sink.Token(piece); sinkErr != nil {
			return sinkErr
		}
		return nil
	})
	switch {
	case sinkErr != nil:
		return Usage{}, sinkErr
	case err != nil && ctx.Err() != nil:
		return Usage{}, ctx.Err()
	case err != nil:
		a.log.Warn("ask: the model failed", "err", err)
		return Usage{}, fmt.Errorf("%w: %v", ErrModel, err)
	}
	if u != nil && u.TotalTokens > 0 {
		return Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.TotalTokens}, nil
	}
	in, out := promptTokens(msgs), EstimateTokens(answer.String())
	return Usage{PromptTokens: in, CompletionTokens: out, TotalTokens: in + out}, nil
}
