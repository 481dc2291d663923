package crawl

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/sift-search/sift/record"
)

// Connector reads one source's platform.
type Connector interface {
	// Test checks that the platform answers and the credentials work, and
	// says what it found ("12 channels", "robots.txt allows the start page").
	Test(ctx context.Context) (detail string, err error)
	// Crawl fetches what changed since cursor ("" = from the beginning; full
	// = everything again, so edits are replaced and what disappeared
	// upstream is removed), hands it to emit in batches, and returns the new
	// cursor. On failure it returns the cursor of what it did emit, if any.
	Crawl(ctx context.Context, cursor string, full bool, emit func(Batch) error) (string, error)
}

// Batch is one step of a crawl, written to the Sink at once: channels
// before their messages, removals last.
type Batch struct {
	Channels        []record.Channel
	Messages        []record.Message
	Documents       []record.Document
	DeleteDocuments []string // document keys of this source
	DeleteMessages  []string // message ids of this source
	Failed          []string // items skipped, each with why: "https://x/a: 503 Service Unavailable"
	// CompleteChannels, in a full crawl, names channels whose every message
	// has now been emitted: their stored messages not emitted are gone
	// upstream and are removed.
	CompleteChannels []string
}

// Env is what connectors get from the service.
type Env struct {
	UserAgent string // for the web crawler: "SiftBot/1.2 (+https://sift.example)"
	// blocked, in tests, replaces the check of private addresses;
	// backoff shortens the platform clients' retry backoff.
	blocked func(ip net.IP) bool
	backoff time.Duration
}

// sourceType describes one value of a source's type.
type sourceType struct {
	fields map[string]field
	check  func(cfg map[string]any) error                      // across fields; may be nil
	newer  func(src record.Source, env Env) (Connector, error) // nil: nothing to crawl
	format string                                              // export format it imports, if any
}

type fieldKind int

const (
	kString fieldKind = iota
	kSecret
	kURL
	kStrings
	kBool
	kInt
)

type field struct {
	kind     fieldKind
	required bool
	min, max int            // kInt bounds; kStrings: at most max items
	def      any            // set when absent
	pattern  *regexp.Regexp // kString and kStrings items
	hint     string         // what pattern means, for errors
}

// secretKeys are write-only: reads show "***".
var secretKeys = []string{"token", "apiKey", "password"}

// Masked is what a read shows for a secret.
const Masked = "***"

var (
	snowflake = regexp.MustCompile(`^[0-9]{1,20}$`)
	slackID   = regexp.MustCompile(`^[A-Z0-9]{1,32}$`)
	repoName  = regexp.MustCompile(`^[A-Za-z0-9-]{1,39}/[A-Za-z0-9._-]{1,100}$`)
	pathStart = regexp.MustCompile(`^/`)
)

var types = map[string]*sourceType{
	"web": {
		fields: map[string]field{
			"urls":         {kind: kStrings, max: 100},
			"sitemap":      {kind: kURL},
			"maxPages":     {kind: kInt, min: 1, max: 20_000, def: 500.0},
			"include":      {kind: kStrings, max: 100, pattern: pathStart, hint: "path prefixes starting with /"},
			"exclude":      {kind: kStrings, max: 100, pattern: pathStart, hint: "path prefixes starting with /"},
			"allowPrivate": {kind: kBool, def: false},
			"delayMs":      {kind: kInt, min: 0, max: 60_000, def: 500.0},
		},
		check: func(cfg map[string]any) error {
			urls, _ := cfg["urls"].([]any)
			if len(urls) == 0 && cfg["sitemap"] == nil {
				return invalidConfig("config.urls or config.sitemap is required for a web source")
			}
			for i, u := range urls {
				if err := checkURL(fmt.Sprintf("config.urls[%d]", i), u.(string)); err != nil {
					return err
				}
			}
			return nil
		},
		newer: newWeb,
	},
	"discord": {
		fields: map[string]field{
			"token":        {kind: kSecret},
			"guildId":      {kind: kString, pattern: snowflake, hint: "a Discord id (digits)"},
			"channelIds":   {kind: kStrings, max: 1000, pattern: snowflake, hint: "Discord ids (digits)"},
			"apiBase":      {kind: kURL},
			"allowPrivate": {kind: kBool, def: false},
		},
		// A bot crawls one server; a source that takes imports only may
		// leave it out (its first import records the file's).
		check: func(cfg map[string]any) error {
			if token, _ := cfg["token"].(string); token != "" && cfg["guildId"] == nil {
				return invalidConfig("config.guildId is required for discord sources with a token (the server to crawl); a source without a token, for imports only, may leave it out")
			}
			return nil
		},
		newer:  newDiscord,
		format: "discord",
	},
	"slack": {
		fields: map[string]field{
			"token":        {kind: kSecret},
			"channelIds":   {kind: kStrings, max: 1000, pattern: slackID, hint: "Slack ids such as C0123ABCD"},
			"apiBase":      {kind: kURL},
			"pageSize":     {kind: kInt, min: 1, max: 1000, def: 200.0},
			"allowPrivate": {kind: kBool, def: false},
		},
		newer:  newSlack,
		format: "slack",
	},
	"discourse": {
		fields: map[string]field{
			"baseUrl":      {kind: kURL, required: true},
			"apiKey":       {kind: kSecret},
			"apiUsername":  {kind: kString},
			"allowPrivate": {kind: kBool, def: false},
		},
		newer: newDiscourse,
	},
	"github": {
		fields: map[string]field{
			"repo":         {kind: kString, required: true, pattern: repoName, hint: "owner/name"},
			"token":        {kind: kSecret},
			"apiBase":      {kind: kURL},
			"allowPrivate": {kind: kBool, def: false},
		},
		newer: newGitHub,
	},
	"telegram": {fields: map[string]field{}, format: "telegram"},
	"upload":   {fields: map[string]field{}},
}

// Types returns the source types, sorted.
func Types() []string {
	out := make([]string, 0, len(types))
	for t := range types {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// ErrInvalid wraps every error about a source's settings.
var ErrInvalid = errors.New("invalid source")

func invalidConfig(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

// CheckConfig validates a source's config for its type and returns it with
// defaults filled in. Unknown keys are refused, so a typo is not silently
// ignored.
func CheckConfig(typ string, cfg map[string]any) (map[string]any, error) {
	t, ok := types[typ]
	if !ok {
		return nil, invalidConfig("type %q is not one of %s", typ, strings.Join(Types(), ", "))
	}
	out := make(map[string]any, len(t.fields))
	for k, v := range cfg {
		f, ok := t.fields[k]
		if !ok {
			return nil, invalidConfig("config.%s is not a setting of %s sources (settings: %s)", k, typ, strings.Join(fieldNames(t), ", "))
		}
		if v == nil {
			continue // null clears a setting
		}
		nv, err := f.check("config."+k, v)
		if err != nil {
			return nil, err
		}
		out[k] = nv
	}
	for k, f := range t.fields {
		if _, ok := out[k]; ok {
			continue
		}
		if f.required {
			return nil, invalidConfig("config.%s is required for %s sources", k, typ)
		}
		if f.def != nil {
			out[k] = f.def
		}
	}
	if t.check != nil {
		if err := t.check(out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func fieldNames(t *sourceType) []string {
	var names []string
	for k := range t.fields {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

func (f field) check(name string, v any) (any, error) {
	switch f.kind {
	case kString, kSecret:
		s, ok := v.(string)
		if !ok {
			return nil, invalidConfig("%s must be a string", name)
		}
		if len(s) > 4096 {
			return nil, invalidConfig("%s is too long (at most 4096 bytes)", name)
		}
		if f.kind == kSecret && s == Masked {
			return nil, invalidConfig("%s: %q is what reads show for a secret, not a value", name, Masked)
		}
		if f.pattern != nil && !f.pattern.MatchString(s) {
			return nil, invalidConfig("%s must be %s", name, f.hint)
		}
		return s, nil
	case kURL:
		s, ok := v.(string)
		if !ok {
			return nil, invalidConfig("%s must be a string", name)
		}
		return s, checkURL(name, s)
	case kStrings:
		list, ok := v.([]any)
		if !ok {
			return nil, invalidConfig("%s must be a list of strings", name)
		}
		if len(list) > f.max {
			return nil, invalidConfig("%s has %d items, at most %d", name, len(list), f.max)
		}
		out := make([]any, len(list))
		for i, item := range list {
			s, ok := item.(string)
			if !ok || len(s) > 2048 || f.pattern != nil && !f.pattern.MatchString(s) {
				what := "strings"
				if f.hint != "" {
					what = f.hint
				}
				return nil, invalidConfig("%s[%d] is not valid: the items must be %s", name, i, what)
			}
			out[i] = s
		}
		return out, nil
	case kBool:
		b, ok := v.(bool)
		if !ok {
			return nil, invalidConfig("%s must be true or false", name)
		}
		return b, nil
	case kInt:
		n, ok := v.(float64)
		if !ok || n != math.Trunc(n) || n < float64(f.min) || n > float64(f.max) {
			return nil, invalidConfig("%s must be a whole number from %d to %d", name, f.min, f.max)
		}
		return n, nil
	}
	return nil, invalidConfig("%s: unknown kind", name)
}

// checkURL accepts an absolute http or https URL.
func checkURL(name, s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || len(s) > 2048 {
		return invalidConfig("%s must be an absolute http or https URL", name)
	}
	return nil
}

// MaskConfig returns cfg with its secrets replaced by Masked.
func MaskConfig(cfg map[string]any) map[string]any {
	out := make(map[string]any, len(cfg))
	for k, v := range cfg {
		if s, ok := v.(string); ok && s != "" && slices.Contains(secretKeys, k) {
			v = Masked
		}
		out[k] = v
	}
	return out
}

// MergeConfig applies a PATCH's config to the stored one key by key: a null
// removes a key, and a secret sent back as Masked keeps its stored value.
// Secrets go only to the server they were given for: when the patch moves
// apiBase or baseUrl to another origin (scheme, host and port; an absent
// one is the platform's default), the stored secrets are dropped, except
// those the patch sets anew.
func MergeConfig(stored, patch map[string]any) map[string]any {
	out := make(map[string]any, len(stored)+len(patch))
	for k, v := range stored {
		out[k] = v
	}
	for k, v := range patch {
		switch {
		case v == nil:
			delete(out, k)
		case v == Masked && slices.Contains(secretKeys, k):
			// unchanged
		default:
			out[k] = v
		}
	}
	if endpointMoved(stored, out) {
		for _, k := range secretKeys {
			if v, sent := patch[k]; !sent || v == Masked {
				delete(out, k)
			}
		}
	}
	return out
}

// endpointKeys name the settings that say where a source's secrets are sent.
var endpointKeys = []string{"apiBase", "baseUrl"}

// endpointMoved reports whether after sends requests to another origin than
// before.
func endpointMoved(before, after map[string]any) bool {
	for _, k := range endpointKeys {
		if endpointOrigin(before[k]) != endpointOrigin(after[k]) {
			return true
		}
	}
	return false
}

// endpointOrigin is the origin of an endpoint setting: "" when it is absent
// (the platform's default), the value itself when it is not a URL.
func endpointOrigin(v any) string {
	s, _ := v.(string)
	if s == "" {
		return ""
	}
	return cmp.Or(origin(s), s)
}

// CheckSchedule accepts "" (manual) or a Go duration of at least a minute
// and at most 30 days.
func CheckSchedule(s string) error {
	if s == "" {
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < time.Minute || d > 30*24*time.Hour {
		return invalidConfig("schedule must be empty (manual crawls only) or a duration from 1m to 720h such as \"30m\" or \"6h\"")
	}
	return nil
}

// encodeCursor is a connector's cursor as the source record keeps it.
func encodeCursor(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic("BUG: encode a cursor: " + err.Error())
	}
	return string(b)
}

// configStrings reads a list setting of a checked config.
func configStrings(cfg map[string]any, key string) []string {
	list, _ := cfg[key].([]any)
	var out []string
	for _, v := range list {
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// allowPrivate reads a source's allowPrivate: may its connector reach
// loopback, private and link-local addresses?
func allowPrivate(src record.Source) bool {
	b, _ := src.Config["allowPrivate"].(bool)
	return b
}

// configSet reads a list setting as a set; nil when the list is empty
// (no restriction).
func configSet(cfg map[string]any, key string) map[string]bool {
	list := configStrings(cfg, key)
	if len(list) == 0 {
		return nil
	}
	set := make(map[string]bool, len(list))
	for _, s := range list {
		set[s] = true
	}
	return set
}

// ImportFormat is the export format sources of typ import ("" = none).
func ImportFormat(typ string) string {
	if t, ok := types[typ]; ok {
		return t.format
	}
	return ""
}

// Crawlable reports whether sources of typ have a crawler in this build.
func Crawlable(typ string) bool {
	t, ok := types[typ]
	return ok && t.newer != nil
}
