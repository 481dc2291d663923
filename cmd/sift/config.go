package main

import (
	"flag"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/sift-search/sift/insights"
	"github.com/sift-search/sift/semantic"
)

// config is every setting of sift serve. Each is an environment variable
// and a flag; the flag wins.
type config struct {
	Port             int
	Addr             string
	BaseURL          string
	DataDir          string
	APISecretKey     string
	AdminUser        string
	AdminPassword    string
	PublicRateLimit  int
	SuggestRateLimit int
	SearchAccess     string
	MetricsAccess    string
	LLMBaseURL       string
	LLMAPIKey        string
	LLMModel         string
	LLMMaxConcurrent int
	EmbedBaseURL     string
	EmbedAPIKey      string
	EmbedModel       string
	MaxUploadBytes   int
	TrustProxy       bool
	SnapshotInterval time.Duration
	FreshWait        time.Duration // how long a search waits for the semantic index to reach earlier writes; 0 = not at all
	Demo             bool
	AcceptDataLoss   bool // start even when the log cannot replay every acknowledged write
	LogLevel         string
	SiteName         string
	SiteDescription  string
	// Insights: record what people search and ask ("on" or "off"), kept
	// InsightsRetention.
	Insights          string
	InsightsRetention time.Duration

	// The store: memory (the data dir) or weaviate (a cluster).
	Store               string
	WeaviateURL         string
	WeaviateGRPCAddr    string
	WeaviateAPIKey      string
	WeaviateNamespace   string
	WeaviateReplication int
	WeaviateShards      int
	WeaviateNoPairs     bool // WEAVIATE_PHRASE_PAIRS=false
}

// binder registers flags whose defaults come from the environment, and
// collects malformed environment values.
type binder struct {
	fs   *flag.FlagSet
	errs []string
}

func (b *binder) env(name string) (string, bool) {
	v, ok := os.LookupEnv(name)
	return v, ok && v != ""
}

func (b *binder) str(p *string, flagName, envName, def, usage string) {
	if v, ok := b.env(envName); ok {
		def = v
	}
	b.fs.StringVar(p, flagName, def, usage+" (env "+envName+")")
}

func (b *binder) int(p *int, flagName, envName string, def int, usage string) {
	if v, ok := b.env(envName); ok {
		n, err := strconv.Atoi(v)
		if err != nil {
			b.errs = append(b.errs, fmt.Sprintf("%s=%q is not an integer", envName, v))
		}
		def = n
	}
	b.fs.IntVar(p, flagName, def, usage+" (env "+envName+")")
}

func (b *binder) bool(p *bool, flagName, envName string, def bool, usage string) {
	b.fs.BoolVar(p, flagName, b.envBool(envName, def), usage+" (env "+envName+")")
}

// envBool is envName's boolean value, def when it is unset (or not a
// boolean, which it records).
func (b *binder) envBool(envName string, def bool) bool {
	if v, ok := b.env(envName); ok {
		x, err := strconv.ParseBool(v)
		if err != nil {
			b.errs = append(b.errs, fmt.Sprintf("%s=%q is not a boolean", envName, v))
		}
		return x
	}
	return def
}

// notBool registers a boolean setting kept negated in p, for an option
// whose zero value is the setting's default, true.
func (b *binder) notBool(p *bool, flagName, envName string, def bool, usage string) {
	def = b.envBool(envName, def)
	*p = !def
	b.fs.BoolFunc(flagName, fmt.Sprintf("%s (env %s, default %v)", usage, envName, def), func(v string) error {
		x, err := strconv.ParseBool(v)
		*p = !x
		return err
	})
}

func (b *binder) duration(p *time.Duration, flagName, envName string, def time.Duration, usage string) {
	if v, ok := b.env(envName); ok {
		d, err := time.ParseDuration(v)
		if err != nil {
			b.errs = append(b.errs, fmt.Sprintf("%s=%q is not a duration such as 10m", envName, v))
		}
		def = d
	}
	b.fs.DurationVar(p, flagName, def, usage+" (env "+envName+")")
}

// days is a flag.Value of a duration given in days ("90d") or as a Go
// duration ("2160h").
type days struct{ d *time.Duration }

func (v days) String() string {
	if v.d == nil {
		return ""
	}
	if *v.d%(24*time.Hour) == 0 {
		return strconv.FormatInt(int64(*v.d/(24*time.Hour)), 10) + "d"
	}
	return v.d.String()
}

func (v days) Set(s string) error {
	d, err := parseDays(s)
	if err == nil {
		*v.d = d
	}
	return err
}

// parseDays reads "90d" (whole days) or a Go duration such as "2160h".
func parseDays(s string) (time.Duration, error) {
	if n, ok := strings.CutSuffix(s, "d"); ok {
		if v, err := strconv.Atoi(n); err == nil && v >= 0 && v <= 100_000 {
			return time.Duration(v) * 24 * time.Hour, nil
		}
		return 0, fmt.Errorf("%q is not a number of days such as 90d", s)
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a number of days such as 90d, nor a duration such as 2160h", s)
	}
	return d, nil
}

func (b *binder) days(p *time.Duration, flagName, envName string, def time.Duration, usage string) {
	if v, ok := b.env(envName); ok {
		d, err := parseDays(v)
		if err != nil {
			b.errs = append(b.errs, fmt.Sprintf("%s=%s", envName, err))
		}
		def = d
	}
	*p = def
	b.fs.Var(days{p}, flagName, usage+" (env "+envName+")")
}

// parseServe reads the settings of sift serve from the environment and args.
func parseServe(args []string) (*config, error) {
	c := &config{}
	b := &binder{fs: flag.NewFlagSet("serve", flag.ContinueOnError)}
	b.int(&c.Port, "port", "PORT", 8080, "listen port")
	b.str(&c.Addr, "addr", "ADDR", "", "listen address host:port; overrides the port")
	b.str(&c.BaseURL, "base-url", "BASE_URL", "", "absolute URL used in links (default http://localhost:PORT)")
	b.str(&c.DataDir, "data-dir", "DATA_DIR", "./data", "directory of snapshots and the write-ahead log")
	b.str(&c.APISecretKey, "api-secret-key", "API_SECRET_KEY", "", "enables Bearer auth: the accepted token (prefer the env var)")
	b.str(&c.AdminUser, "admin-user", "ADMIN_USER", "", "Basic Auth user for admin endpoints and the dashboard")
	b.str(&c.AdminPassword, "admin-password", "ADMIN_PASSWORD", "", "Basic Auth password (prefer the env var)")
	b.int(&c.PublicRateLimit, "public-rate-limit", "PUBLIC_RATE_LIMIT", 10, "requests per minute per IP on public API endpoints; 0 = off")
	b.int(&c.SuggestRateLimit, "suggest-rate-limit", "SUGGEST_RATE_LIMIT", 20, "requests per second per IP on GET /api/suggest (burst twice as many), apart from the public limit; 0 = off")
	b.str(&c.SearchAccess, "search-access", "SEARCH_ACCESS", "public", "who may call GET /api/search: public or bearer")
	b.str(&c.MetricsAccess, "metrics-access", "METRICS_ACCESS", "admin", "who may read GET /metrics: admin or public")
	b.str(&c.LLMBaseURL, "llm-base-url", "LLM_BASE_URL", "", "OpenAI-compatible chat API; unset = extractive answerer")
	b.str(&c.LLMAPIKey, "llm-api-key", "LLM_API_KEY", "", "API key of the chat API")
	b.str(&c.LLMModel, "llm-model", "LLM_MODEL", "", "chat model name")
	b.int(&c.LLMMaxConcurrent, "llm-max-concurrent", "LLM_MAX_CONCURRENT", 4, "answers the chat model writes at once; 4× as many more wait, beyond that 503")
	b.str(&c.EmbedBaseURL, "embed-base-url", "EMBED_BASE_URL", "", "OpenAI-compatible embeddings API; unset = built-in embedder")
	b.str(&c.EmbedAPIKey, "embed-api-key", "EMBED_API_KEY", "", "API key of the embeddings API")
	b.str(&c.EmbedModel, "embed-model", "EMBED_MODEL", "", "embedding model name")
	b.int(&c.MaxUploadBytes, "max-upload-bytes", "MAX_UPLOAD_BYTES", 32<<20, "request body limit")
	b.bool(&c.TrustProxy, "trust-proxy", "TRUST_PROXY", false, "take the client IP from X-Forwarded-For (only behind a proxy)")
	b.duration(&c.SnapshotInterval, "snapshot-interval", "SNAPSHOT_INTERVAL", 10*time.Minute, "how often to snapshot when the log grew")
	b.duration(&c.FreshWait, "fresh-wait", "FRESH_WAIT", semantic.DefaultFreshWait,
		"how long semantic search and answers wait at most for the index to reach the writes acknowledged before them; 0 = not at all (they say \"stale\")")
	b.bool(&c.Demo, "demo", "SIFT_DEMO", false, "load the bundled demo content when the data dir is empty")
	b.bool(&c.AcceptDataLoss, "accept-data-loss", "SIFT_ACCEPT_DATA_LOSS", false,
		"start even when the log cannot replay every acknowledged write: serve what replays, log the loss at ERROR, move the rest to DATA_DIR/lost-*; only for the start-up that needs it")
	b.str(&c.LogLevel, "log-level", "LOG_LEVEL", "info", "debug, info, warn or error")
	b.str(&c.SiteName, "site-name", "SITE_NAME", "", "the instance's name in pages, OpenGraph and llms.txt (default the BASE_URL host; the console's setting wins)")
	b.str(&c.SiteDescription, "site-description", "SITE_DESCRIPTION", "", "a sentence on what the instance holds, for the home page and llms.txt")
	b.str(&c.Insights, "insights", "INSIGHTS", "on", "record what people search and ask, for /api/admin/insights and /dashboard/insights: on or off")
	b.days(&c.InsightsRetention, "insights-retention", "INSIGHTS_RETENTION", insights.DefaultRetention,
		"how long insights are kept: days such as 90d, or a duration such as 2160h (rounded up to whole days; 1d to 3650d)")
	b.str(&c.Store, "store", "STORE", "memory", "where records live: memory (the data dir) or weaviate (a cluster, see WEAVIATE_URL)")
	b.str(&c.WeaviateURL, "weaviate-url", "WEAVIATE_URL", "", "REST address of a Weaviate node, e.g. http://10.0.0.5:8080 (STORE=weaviate)")
	b.str(&c.WeaviateGRPCAddr, "weaviate-grpc-addr", "WEAVIATE_GRPC_ADDR", "", "gRPC host:port of that node; when set, batches go over gRPC")
	b.str(&c.WeaviateAPIKey, "weaviate-api-key", "WEAVIATE_API_KEY", "", "API key of the cluster, if it requires one (prefer the env var)")
	b.str(&c.WeaviateNamespace, "weaviate-namespace", "WEAVIATE_NAMESPACE", "Sift", "collection-name prefix: instances sharing a cluster need different ones")
	b.int(&c.WeaviateReplication, "weaviate-replication", "WEAVIATE_REPLICATION", 1, "replication factor of Sift's collections (3 survives a node down)")
	b.int(&c.WeaviateShards, "weaviate-shards", "WEAVIATE_SHARDS", 1, "shards per collection")
	b.notBool(&c.WeaviateNoPairs, "weaviate-phrase-pairs", "WEAVIATE_PHRASE_PAIRS", true, phrasePairsUsage)
	if err := b.fs.Parse(args); err != nil {
		return nil, err
	}
	if b.fs.NArg() > 0 {
		b.errs = append(b.errs, "unexpected arguments: "+strings.Join(b.fs.Args(), " "))
	}
	c.validate(b)
	if len(b.errs) > 0 {
		return nil, fmt.Errorf("invalid settings:\n  %s", strings.Join(b.errs, "\n  "))
	}
	return c, nil
}

func (c *config) validate(b *binder) {
	bad := func(format string, args ...any) { b.errs = append(b.errs, fmt.Sprintf(format, args...)) }
	if c.Port < 1 || c.Port > 65535 {
		bad("port %d is out of 1..65535", c.Port)
	}
	if c.Addr == "" {
		c.Addr = ":" + strconv.Itoa(c.Port)
	}
	if c.BaseURL == "" {
		c.BaseURL = "http://localhost:" + strconv.Itoa(c.Port)
	}
	if u, err := url.Parse(c.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		bad("base URL %q must be an absolute http(s) URL", c.BaseURL)
	}
	if c.SearchAccess != "public" && c.SearchAccess != "bearer" {
		bad("search access %q must be public or bearer", c.SearchAccess)
	}
	if c.MetricsAccess != "admin" && c.MetricsAccess != "public" {
		bad("metrics access %q must be admin or public", c.MetricsAccess)
	}
	if c.LLMMaxConcurrent < 1 || c.LLMMaxConcurrent > 1024 {
		bad("LLM max concurrent %d is out of 1..1024", c.LLMMaxConcurrent)
	}
	if c.PublicRateLimit < 0 {
		bad("public rate limit %d must be 0 (off) or more", c.PublicRateLimit)
	}
	if c.SuggestRateLimit < 0 || c.SuggestRateLimit > 10000 {
		bad("suggest rate limit %d must be from 0 (off) to 10000", c.SuggestRateLimit)
	}
	if c.MaxUploadBytes < 1024 {
		bad("max upload bytes %d must be at least 1024", c.MaxUploadBytes)
	}
	if (c.AdminUser == "") != (c.AdminPassword == "") {
		bad("set both ADMIN_USER and ADMIN_PASSWORD, or neither")
	}
	if c.FreshWait < 0 || c.FreshWait > time.Minute {
		bad("fresh wait %s must be from 0 to 1m", c.FreshWait)
	}
	if c.Insights != "on" && c.Insights != "off" {
		bad("insights %q must be on or off", c.Insights)
	}
	if c.InsightsRetention < time.Nanosecond || c.InsightsRetention > 3650*24*time.Hour {
		bad("insights retention %s must be from 1d to 3650d", days{&c.InsightsRetention})
	}
	if c.SnapshotInterval < time.Second {
		bad("snapshot interval %s must be at least 1s", c.SnapshotInterval)
	}
	for name, u := range map[string]string{"LLM_BASE_URL": c.LLMBaseURL, "EMBED_BASE_URL": c.EmbedBaseURL} {
		if p, err := url.Parse(u); u != "" && (err != nil || p.Host == "") {
			bad("%s %q must be an absolute URL", name, u)
		}
	}
	if c.LLMBaseURL != "" && c.LLMModel == "" {
		bad("LLM_BASE_URL needs LLM_MODEL")
	}
	if c.EmbedBaseURL != "" && c.EmbedModel == "" {
		bad("EMBED_BASE_URL needs EMBED_MODEL")
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		bad("log level %q must be debug, info, warn or error", c.LogLevel)
	}
	if c.DataDir == "" {
		bad("data dir must not be empty")
	}
	switch c.Store {
	case "memory":
	case "weaviate":
		if p, err := url.Parse(c.WeaviateURL); err != nil || p.Host == "" || (p.Scheme != "http" && p.Scheme != "https") {
			bad("STORE=weaviate needs WEAVIATE_URL, an http(s) address of a node, not %q", c.WeaviateURL)
		}
		if c.WeaviateReplication < 1 || c.WeaviateReplication > 16 {
			bad("weaviate replication %d is out of 1..16", c.WeaviateReplication)
		}
		if c.WeaviateShards < 1 || c.WeaviateShards > 1024 {
			bad("weaviate shards %d is out of 1..1024", c.WeaviateShards)
		}
		if !validNamespace(c.WeaviateNamespace) {
			bad("weaviate namespace %q must be a capital letter then letters and digits, at most 32", c.WeaviateNamespace)
		}
	default:
		bad("store %q must be memory or weaviate", c.Store)
	}
}

// validNamespace reports whether ns can prefix Weaviate collection names.
func validNamespace(ns string) bool {
	if ns == "" || len(ns) > 32 || ns[0] < 'A' || ns[0] > 'Z' {
		return false
	}
	for i := 1; i < len(ns); i++ {
		c := ns[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}
