package httpapi

import (
	"cmp"
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/fasthttp/router"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/common/expfmt"
	"github.com/valyala/fasthttp"

	"github.com/sift-search/sift/crawl"
	"github.com/sift-search/sift/internal/oai"
)

// Metrics is what GET /metrics serves, in the Prometheus text format: the
// requests of the server (by route pattern, never the raw path, so the
// series stay few), rate-limit refusals and shed questions; the engine's
// sizes, log and snapshot (read when scraped); crawls and imports per source
// (crawl.RunnerOptions.OnResult and OnImport); model-server calls (an
// oai.Client's Observe); the Go runtime and the process. One Metrics serves
// one Server. Safe for concurrent use.
type Metrics struct {
	reg *prometheus.Registry

	requests    *prometheus.CounterVec   // route, method, code
	latency     *prometheus.HistogramVec // route, method, class
	rateLimited prometheus.Counter

	crawls         *prometheus.CounterVec // source, status
	crawlMessages  *prometheus.CounterVec // source
	crawlDocuments *prometheus.CounterVec // source
	crawlFailed    *prometheus.CounterVec // source
	imports        *prometheus.CounterVec // source, status
	importMessages *prometheus.CounterVec // source

	modelCalls   *prometheus.CounterVec   // kind, outcome
	modelLatency *prometheus.HistogramVec // kind
}

// NewMetrics returns the measurements of one server, with the Go runtime's
// and the process's.
func NewMetrics() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		v := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
		m.reg.MustRegister(v)
		return v
	}
	histogram := func(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
		v := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}, labels)
		m.reg.MustRegister(v)
		return v
	}
	m.requests = counter("sift_http_requests_total",
		`HTTP requests answered, by route pattern ("none": no route answered), method and status code.`, "route", "method", "code")
	m.latency = histogram("sift_http_request_duration_seconds",
		"Time to answer an HTTP request (a streamed answer: to its headers), by route pattern, method and status class.",
		[]float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}, "route", "method", "class")
	m.rateLimited = prometheus.NewCounter(prometheus.CounterOpts{Name: "sift_rate_limited_requests_total",
		Help: "Requests the public tier's rate limit refused (429)."})
	m.reg.MustRegister(m.rateLimited)
	m.crawls = counter("sift_crawls_total", "Crawls that ended, by source and status (ok, error, cancelled).", "source", "status")
	m.crawlMessages = counter("sift_crawl_messages_total", "Messages new or changed by crawls, by source.", "source")
	m.crawlDocuments = counter("sift_crawl_documents_total", "Documents new or changed by crawls, by source.", "source")
	m.crawlFailed = counter("sift_crawl_failed_items_total", "Items crawls could not fetch or store, by source.", "source")
	m.imports = counter("sift_imports_total", "Imports of export files that ended, by source and status (ok, error).", "source", "status")
	m.importMessages = counter("sift_import_messages_total", "Messages new or changed by imports, by source.", "source")
	m.modelCalls = counter("sift_model_calls_total",
		"Calls to the model servers, retries included, by kind (chat, embeddings) and outcome (ok, 4xx, 5xx, timeout, canceled, error).", "kind", "outcome")
	m.modelLatency = histogram("sift_model_call_duration_seconds",
		"Time to a model server's answer (a streamed one: to its headers), retries included, by kind.",
		[]float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 20, 30, 60, 120}, "kind")
	m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// ObserveCrawl counts how a crawl ended and what it wrote; it is a
// crawl.RunnerOptions.OnResult. A crawl its connector refused is an error.
func (m *Metrics) ObserveCrawl(sourceID string, r crawl.Result, err error) {
	status := r.Status
	if status == "" {
		status = "error"
	}
	m.crawls.WithLabelValues(sourceID, status).Inc()
	m.crawlMessages.WithLabelValues(sourceID).Add(float64(max(0, r.Messages)))
	m.crawlDocuments.WithLabelValues(sourceID).Add(float64(max(0, r.Documents)))
	m.crawlFailed.WithLabelValues(sourceID).Add(float64(max(0, r.Failed)))
}

// ObserveImport counts how an import ended and what it changed; it is a
// crawl.RunnerOptions.OnImport.
func (m *Metrics) ObserveImport(sourceID string, r crawl.ImportResult, err error) {
	status := "ok"
	if err != nil {
		status = "error"
	}
	m.imports.WithLabelValues(sourceID, status).Inc()
	m.importMessages.WithLabelValues(sourceID).Add(float64(max(0, r.Changed)))
}

// ObserveModelCall counts and times a call to a model server; it is an
// oai.Client's Observe.
func (m *Metrics) ObserveModelCall(path string, took time.Duration, err error) {
	kind := "other"
	switch path {
	case "/chat/completions":
		kind = "chat"
	case "/embeddings":
		kind = "embeddings"
	}
	m.modelCalls.WithLabelValues(kind, modelOutcome(err)).Inc()
	m.modelLatency.WithLabelValues(kind).Observe(took.Seconds())
}

func modelOutcome(err error) string {
	var apiErr *oai.APIError
	switch {
	case err == nil:
		return "ok"
	case errors.As(err, &apiErr) && apiErr.Status < 500:
		return "4xx"
	case apiErr != nil:
		return "5xx"
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, context.DeadlineExceeded) || isTimeout(err):
		return "timeout"
	}
	return "error"
}

// instrument counts and times every request by its route's pattern (the
// router saves it: SaveMatchedRoutePath), method and status. It wraps the
// whole server, so requests refused before routing count too.
func (m *Metrics) instrument(next fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		start := time.Now()
		next(ctx)
		route, _ := ctx.UserValue(router.MatchedRoutePathParam).(string)
		if route == "" {
			route = "none"
		}
		method, code := methodLabel(ctx), ctx.Response.StatusCode()
		m.requests.WithLabelValues(route, method, codeLabel(code)).Inc()
		m.latency.WithLabelValues(route, method, classLabels[min(max(code/100, 0), 5)]).Observe(time.Since(start).Seconds())
	}
}

// methodLabel names the request's method; any other than the router's
// counts as "other", so a client cannot make up series.
func methodLabel(ctx *fasthttp.RequestCtx) string {
	switch string(ctx.Method()) {
	case "GET":
		return "GET"
	case "HEAD":
		return "HEAD"
	case "POST":
		return "POST"
	case "PUT":
		return "PUT"
	case "PATCH":
		return "PATCH"
	case "DELETE":
		return "DELETE"
	case "OPTIONS":
		return "OPTIONS"
	}
	return "other"
}

var (
	classLabels = [6]string{"other", "1xx", "2xx", "3xx", "4xx", "5xx"}
	codeLabels  = func() (t [600]string) {
		for i := range t {
			t[i] = strconv.Itoa(i)
		}
		return t
	}()
)

func codeLabel(code int) string {
	if code >= 0 && code < len(codeLabels) {
		return codeLabels[code]
	}
	return strconv.Itoa(code)
}

// bindMetrics returns the server's Metrics (Options.Metrics, or its own)
// with the server's collector registered.
func (s *Server) bindMetrics() *Metrics {
	m := s.opts.Metrics
	if m == nil {
		m = NewMetrics()
	}
	if err := m.reg.Register(serverCollector{s}); err != nil {
		s.log.Warn("metrics of a second server are not served", "err", err)
	}
	return m
}

// metricsAccess applies METRICS_ACCESS to GET /metrics: admin (default) or
// public (not rate limited, like the health check).
func (s *Server) metricsAccess(h fasthttp.RequestHandler) fasthttp.RequestHandler {
	if s.opts.MetricsAccess == "public" {
		return h
	}
	return s.admin(h)
}

// serveMetrics serves GET /metrics in the format the scraper accepts (the
// text format unless it asks for protobuf). A collector that fails leaves
// out its own families only.
func (s *Server) serveMetrics(ctx *fasthttp.RequestCtx) {
	mfs, err := s.metrics.reg.Gather()
	if err != nil {
		s.log.Warn("metrics gathered in part", "err", err)
	}
	accept := http.Header{"Accept": {string(ctx.Request.Header.Peek("Accept"))}}
	format := expfmt.NegotiateAccept(accept, expfmt.DefaultAcceptedFormats()...)
	ctx.SetContentType(string(format))
	ctx.Response.Header.Set("Cache-Control", "no-store")
	enc := expfmt.NewEncoder(ctx, format)
	for _, mf := range mfs {
		if err := enc.Encode(mf); err != nil {
			s.log.Warn("metrics not encoded", "family", mf.GetName(), "err", err)
		}
	}
	if c, ok := enc.(expfmt.Closer); ok {
		c.Close()
	}
}

// serverCollector reads the engine's and the server's figures when scraped.
type serverCollector struct{ s *Server }

func gaugeDesc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, labels, nil)
}

var (
	descSources       = gaugeDesc("sift_sources", "Sources.")
	descChannels      = gaugeDesc("sift_channels", "Channels, private ones included; threads not.")
	descThreads       = gaugeDesc("sift_threads", "Threads of channels, private ones included.")
	descMessages      = gaugeDesc("sift_messages", "Messages indexed, private ones included.")
	descDocuments     = gaugeDesc("sift_documents", "Documents indexed, private ones included.")
	descTerms         = gaugeDesc("sift_index_terms", "Distinct terms of a full-text index.", "index")
	descChunks        = gaugeDesc("sift_semantic_chunks", "Passages of the semantic index.")
	descVectors       = gaugeDesc("sift_semantic_vectors", "Passages with a vector.")
	descPending       = gaugeDesc("sift_semantic_pending_chunks", "Passages waiting for a vector: the semantic backlog.")
	descSkipped       = gaugeDesc("sift_semantic_skipped_chunks", "Passages the embedder refused since start-up (searchable by words only).")
	descWALSegments   = gaugeDesc("sift_wal_segments", "Segment files of the write-ahead log.")
	descWALBytes      = gaugeDesc("sift_wal_size_bytes", "Size of the write-ahead log's segments.")
	descSeq           = gaugeDesc("sift_wal_sequence", "Sequence number of the last change applied.")
	descSnapBytes     = gaugeDesc("sift_snapshot_size_bytes", "Size of the newest snapshot.")
	descSnapTook      = gaugeDesc("sift_snapshot_duration_seconds", "Time the newest snapshot took to write (0: loaded at start-up).")
	descSnapSeq       = gaugeDesc("sift_snapshot_sequence", "Sequence number the newest snapshot holds up to.")
	descSnapAt        = gaugeDesc("sift_snapshot_timestamp_seconds", "When the newest snapshot was written, in Unix seconds.")
	descSnapFailed    = gaugeDesc("sift_snapshot_last_attempt_failed", "1 when the last snapshot attempt failed, else 0.")
	descAskShed       = prometheus.NewDesc("sift_ask_refused_total", "Questions refused with 503 because too many wait for the chat model (load shedding).", nil, nil)
	descBuild         = gaugeDesc("sift_build_info", "The running version; always 1.", "version")
	serverCollectorDs = []*prometheus.Desc{descSources, descChannels, descThreads, descMessages, descDocuments, descTerms, descChunks,
		descVectors, descPending, descSkipped, descWALSegments, descWALBytes, descSeq, descSnapBytes, descSnapTook,
		descSnapSeq, descSnapAt, descSnapFailed, descAskShed, descBuild}
)

func (c serverCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range serverCollectorDs {
		ch <- d
	}
}

func (c serverCollector) Collect(ch chan<- prometheus.Metric) {
	eng := c.s.eng
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	n := eng.Counts(true)
	gauge(descSources, float64(n.Sources))
	gauge(descChannels, float64(n.Channels))
	gauge(descThreads, float64(n.Threads))
	gauge(descMessages, float64(n.Messages))
	gauge(descDocuments, float64(n.Documents))
	gauge(descTerms, float64(n.MessageTerms), "messages")
	gauge(descTerms, float64(n.DocumentTerms), "documents")
	sem := c.s.semantic.Status()
	gauge(descChunks, float64(sem.Chunks))
	gauge(descVectors, float64(sem.Vectors))
	gauge(descPending, float64(sem.Pending))
	gauge(descSkipped, float64(sem.Skipped))
	lg := eng.LogStatus()
	if !lg.InMemory {
		gauge(descWALSegments, float64(lg.Segments))
		gauge(descWALBytes, float64(lg.Bytes))
	}
	gauge(descSeq, float64(lg.Seq))
	snap := eng.LastSnapshot()
	if snap != nil && !snap.At.IsZero() {
		gauge(descSnapBytes, float64(snap.Bytes))
		gauge(descSnapTook, snap.Took.Seconds())
		gauge(descSnapSeq, float64(snap.Seq))
		gauge(descSnapAt, float64(snap.At.UnixMilli())/1e3)
	}
	failed := 0.0
	if snap != nil && snap.Err != "" {
		failed = 1
	}
	gauge(descSnapFailed, failed)
	ch <- prometheus.MustNewConstMetric(descAskShed, prometheus.CounterValue, float64(c.s.asker.Refused()))
	gauge(descBuild, 1, cmp.Or(c.s.opts.Version, "dev"))
}
