package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/sift-search/sift/ask"
	"github.com/sift-search/sift/crawl"
	"github.com/sift-search/sift/embed"
	"github.com/sift-search/sift/engine"
	"github.com/sift-search/sift/httpapi"
	"github.com/sift-search/sift/insights"
	"github.com/sift-search/sift/internal/demo"
	"github.com/sift-search/sift/internal/oai"
	"github.com/sift-search/sift/llm"
	"github.com/sift-search/sift/semantic"
)

// askOptions configures question answering: the chat model when one is
// configured, else the extractive answerer; sources link to the pages at
// BASE_URL.
func askOptions(cfg *config, chat *llm.Client, store httpapi.Searcher, log *slog.Logger) ask.Options {
	opts := ask.Options{MaxConcurrent: cfg.LLMMaxConcurrent, MaxQueued: 4 * cfg.LLMMaxConcurrent,
		Link: httpapi.HitLinks(cfg.BaseURL), Correct: ask.TypoFixes(store), Logger: log}
	if chat != nil {
		opts.Model = chat
	}
	return opts
}

// shutdownGrace is how long running requests get to finish on SIGTERM.
const shutdownGrace = 30 * time.Second

func serve(args []string) error {
	cfg, err := parseServe(args)
	if err != nil {
		return err
	}
	log := newLogger(cfg.LogLevel)
	metrics := httpapi.NewMetrics()
	opts := engine.Options{DataDir: cfg.DataDir, SnapshotInterval: cfg.SnapshotInterval, Logger: log, AcceptDataLoss: cfg.AcceptDataLoss}
	sopts := semantic.Options{FreshWait: cfg.FreshWait}
	if sopts.FreshWait == 0 {
		sopts.FreshWait = -1 // FRESH_WAIT=0: never wait
	}
	if cfg.EmbedBaseURL != "" {
		emb := embed.NewOpenAI(cfg.EmbedBaseURL, cfg.EmbedAPIKey, cfg.EmbedModel)
		emb.Client().Observe = metrics.ObserveModelCall
		pctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if err := emb.Probe(pctx); err != nil {
			log.Warn("the embeddings server does not answer yet; semantic search uses BM25 until it does", "err", err)
		}
		cancel()
		sopts.Embedder = emb
	}
	var chat *llm.Client
	if cfg.LLMBaseURL != "" {
		chat = llm.New(cfg.LLMBaseURL, cfg.LLMAPIKey, cfg.LLMModel)
		chat.Transport().Observe = metrics.ObserveModelCall
		sopts.Hypothesize = chat.Hypothesize
	}
	b, err := openBackend(cfg, opts, sopts, log)
	if err != nil {
		return err
	}
	eng, idx := b.store, b.sem
	if cfg.Demo {
		if err := demo.Load(eng, log); err != nil {
			b.close()
			return fmt.Errorf("load demo content: %w", err)
		}
	}
	var rec *insights.Recorder
	if cfg.Insights == "on" {
		if rec, err = insights.Open(insights.Options{Store: b.insights, Retention: cfg.InsightsRetention, Logger: log,
			FlushEvery: testKnob("SIFT_INSIGHTS_FLUSH", 30*time.Second)}); err != nil {
			b.close()
			return fmt.Errorf("open insights: %w", err)
		}
	}
	runner := crawl.NewRunner(eng, crawl.RunnerOptions{Logger: log, Env: crawl.Env{UserAgent: httpapi.UserAgent(version, cfg.BaseURL)},
		OnResult: metrics.ObserveCrawl, OnImport: metrics.ObserveImport, Tick: testKnob("SIFT_SCHEDULE_TICK", 0)})
	hopts := httpapi.Options{
		BaseURL: cfg.BaseURL, APISecretKey: cfg.APISecretKey, AdminUser: cfg.AdminUser,
		AdminPassword: cfg.AdminPassword, SearchAccess: cfg.SearchAccess,
		SiteName: cfg.SiteName, SiteDescription: cfg.SiteDescription, DataDir: cfg.DataDir,
		MaxUploadBytes: cfg.MaxUploadBytes, TrustProxy: cfg.TrustProxy, Version: version, Logger: log,
		PublicRateLimit: cfg.PublicRateLimit, SuggestRateLimit: suggestRate(cfg.SuggestRateLimit), Semantic: idx, Asker: ask.New(idx, askOptions(cfg, chat, eng, log)), Crawler: runner,
		MetricsAccess: cfg.MetricsAccess, Metrics: metrics,
	}
	if rec != nil {
		hopts.Insights = rec
	}
	srv := httpapi.New(eng, hopts)
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		runner.Close()
		closeInsights(rec, log)
		b.close()
		return fmt.Errorf("listen on %s: %w", cfg.Addr, err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	sharedCtx, stopShared := context.WithCancel(context.Background())
	sharedDone := make(chan struct{})
	go func() { // scheduled crawls end with runner.Close too
		defer close(sharedDone)
		b.shared(sharedCtx, runner.Schedule)
	}()
	go releaseMemory(sharedCtx, time.Minute, serveReleaser, totalAllocated, log)
	logSettings(log, cfg)
	printWelcome(cfg)

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	select {
	case err = <-served:
		err = fmt.Errorf("server stopped: %w", err)
	case <-ctx.Done():
		log.Info("shutting down: draining requests, then writing a final snapshot")
		sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
		err = srv.Shutdown(sctx)
		cancel()
	}
	runner.Close() // running crawls stop; their progress so far is kept
	stopShared()
	<-sharedDone
	closeInsights(rec, log) // the last counts, before the store's final snapshot
	if cerr := b.close(); cerr != nil {
		err = errors.Join(err, fmt.Errorf("close the store: %w", cerr))
	}
	if err == nil {
		log.Info("stopped cleanly")
	}
	return err
}

// closeInsights writes the insights counted since the last flush; a
// failure loses those counts only (insights are not acknowledged writes).
func closeInsights(rec *insights.Recorder, log *slog.Logger) {
	if rec == nil {
		return
	}
	if err := rec.Close(); err != nil {
		log.Warn("the last insights were not written", "err", err)
	}
}

func newLogger(level string) *slog.Logger {
	var l slog.Level
	l.UnmarshalText([]byte(level)) // validated in parseServe
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: l}))
}

// logSettings logs the effective settings; secrets only as set or unset.
func logSettings(log *slog.Logger, c *config) {
	set := func(s string) string {
		if s == "" {
			return "unset"
		}
		return "set"
	}
	orBuiltin := func(u, what string) string {
		if u == "" {
			return what
		}
		return oai.Redacted(u)
	}
	log.Info("sift serving", "version", version, "addr", c.Addr, "base_url", c.BaseURL,
		"data_dir", c.DataDir, "search_access", c.SearchAccess, "api_secret_key", set(c.APISecretKey),
		"admin_user", set(c.AdminUser), "max_upload_bytes", c.MaxUploadBytes,
		"embeddings", orBuiltin(c.EmbedBaseURL, "built-in"), "llm", orBuiltin(c.LLMBaseURL, "none (extractive)"),
		"public_rate_limit", c.PublicRateLimit, "trust_proxy", c.TrustProxy, "metrics_access", c.MetricsAccess,
		"insights", c.Insights, "insights_retention", days{&c.InsightsRetention}.String())
	if c.APISecretKey == "" && c.AdminUser == "" {
		log.Warn("admin endpoints are disabled: set API_SECRET_KEY, or ADMIN_USER and ADMIN_PASSWORD, to enable them")
	}
}

// printWelcome tells a person at the terminal where to go.
func printWelcome(c *config) {
	base := c.BaseURL
	fmt.Printf(`
Sift %s is running.

  Open in a browser:  %s/
  Try a search:       %s/?q=%s
  Browse:             %s/sources   (channels and documents)
  Dashboard:          %s/dashboard (Basic Auth: ADMIN_USER / ADMIN_PASSWORD)
  For agents:         %s/llms.txt
  Search API:         curl '%s/api/search?q=%s&limit=5'
  Semantic search:    curl '%s/api/semantic-search?q=%s&limit=3'
  Ask (streamed):     curl -N -H 'Accept: text/event-stream' -H 'Content-Type: application/json' \
                        -d '{"question": "Why did my job run twice after the DST change?"}' %s/api/ask
  Documents:          curl '%s/api/documents'
  Health:             curl '%s/healthz'

`, version, base, base, url.QueryEscape("webhook signature"), base, base, base, base, url.QueryEscape("DST double run"),
		base, url.QueryEscape("jobs run twice when the clocks change"), base, base, base)
}

// suggestRate is SUGGEST_RATE_LIMIT as httpapi.Options takes it (0 = off
// there is negative).
func suggestRate(perSecond int) int {
	if perSecond == 0 {
		return -1
	}
	return perSecond
}
