package httpapi

import (
	"strings"

	"github.com/sift-search/sift/record"
	"github.com/valyala/fasthttp"
)

// statusData is the status page: /healthz for people.
type statusData struct {
	Head     head
	Version  string
	Counts   record.Counts
	Semantic struct {
		Embedder         string
		Chunks, Vectors  int
		Pending, Skipped int
		Index, Building  string
		Failed           bool
	}
	Answers string // who answers questions
}

// statusPage serves GET /status: whether the service is up, what it holds
// (what the caller may see), and the state of its semantic index, as
// /healthz says in JSON.
func (s *pages) statusPage(ctx *fasthttp.RequestCtx) {
	data := statusData{Version: s.opts.Version, Counts: s.eng.Counts(s.privileged(ctx)),
		Head: head{Title: s.title("Status"), NoIndex: true}, Answers: "the built-in extractive answerer (quotes the sources)"}
	sem := s.semantic.Status()
	d := &data.Semantic
	d.Embedder, _, _ = strings.Cut(sem.Embedder, "@") // public: no model server's address
	d.Building, _, _ = strings.Cut(sem.Building, "@")
	d.Chunks, d.Vectors, d.Pending, d.Skipped, d.Index, d.Failed = sem.Chunks, sem.Vectors, sem.Pending, sem.Skipped, sem.Index, sem.Error != ""
	if s.asker != nil && s.asker.UsesModel() {
		data.Answers = "a language model, grounded in the sources it cites"
	}
	s.render(ctx, "status.html", pageOpts{private: true}, data)
}
