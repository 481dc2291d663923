package httpapi

import (
	"slices"
	"strconv"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/sift-search/sift/crawl"
	"github.com/sift-search/sift/record"
)

// The console's source form: one per type, its config fields from
// crawl.ConfigFields. Secrets are never written into a page: their inputs
// are empty password fields, and an empty one keeps the stored secret.

// sourceForm is the add or edit form of a source.
type sourceForm struct {
	Action      string // where it posts
	New         bool
	Type        string
	About       string // what sources of the type do
	ID          string
	Name        string
	Schedule    string
	Enabled     bool
	Visibility  string
	Fields      []fieldView
	Error       string // why the last submission failed
	Unsupported bool   // the type is unknown
}

// fieldView is one config field of the form.
type fieldView struct {
	crawl.ConfigField
	Label   string
	Input   string // the input's id and name: cfg.<name>
	Value   string // string, url, int; strings one per line; never a secret
	Checked bool   // bool
	Stored  bool   // secret: a value is stored
}

// typeAbout says what each source type does, for the add forms.
var typeAbout = map[string]string{
	"web":       "Crawls web pages from start URLs or a sitemap, obeying robots.txt; each page becomes a document.",
	"discord":   "Reads a Discord server with a bot token, or takes DiscordChatExporter JSON files as imports.",
	"slack":     "Reads Slack channels with a bot token, or takes a Slack export zip as an import.",
	"discourse": "Reads a Discourse forum: each topic is a channel, its posts are the messages.",
	"github":    "Reads a GitHub repository: each issue and discussion is a channel, its comments the messages.",
	"telegram":  "Takes a Telegram Desktop result.json export as an import.",
	"upload":    "Holds documents uploaded here or through the API.",
}

// fieldLabels name config fields for people; unknown ones show their key.
var fieldLabels = map[string]string{
	"urls": "Start URLs", "sitemap": "Sitemap URL", "maxPages": "Most pages per crawl",
	"include": "Only paths starting with", "exclude": "Skip paths starting with",
	"allowPrivate": "Allow private and loopback addresses", "delayMs": "Delay between requests (ms)",
	"token": "Token", "guildId": "Server (guild) id", "channelIds": "Only these channel ids",
	"apiBase": "API base URL", "pageSize": "Page size", "baseUrl": "Forum URL",
	"apiKey": "API key", "apiUsername": "API username", "repo": "Repository (owner/name)",
}

// fieldOrder is the order of config fields in a form: what a source is
// first, then how to reach it, then what to take; unlisted ones last.
var fieldOrder = []string{"urls", "sitemap", "baseUrl", "repo", "guildId", "token", "apiKey", "apiUsername",
	"channelIds", "include", "exclude", "maxPages", "delayMs", "pageSize", "allowPrivate", "apiBase"}

func fieldRank(name string) int {
	if i := slices.Index(fieldOrder, name); i >= 0 {
		return i
	}
	return len(fieldOrder)
}

// newSourceForm is the form of a source of typ filled from src's record
// (an empty record for a new source).
func newSourceForm(typ string, src record.Source, isNew bool) sourceForm {
	f := sourceForm{
		New: isNew, Type: typ, About: typeAbout[typ], ID: src.ID, Name: src.Name, Schedule: src.Schedule,
		Enabled: src.Enabled || isNew, Visibility: src.Visibility, Action: "/dashboard/sources",
	}
	if !isNew {
		f.Action = "/dashboard/sources/" + src.ID
	}
	if f.Visibility == "" {
		f.Visibility = record.VisibilityPublic
	}
	fields := crawl.ConfigFields(typ)
	f.Unsupported = fields == nil
	slices.SortStableFunc(fields, func(a, b crawl.ConfigField) int { return fieldRank(a.Name) - fieldRank(b.Name) })
	for _, cf := range fields {
		v := fieldView{ConfigField: cf, Label: fieldLabels[cf.Name], Input: "cfg." + cf.Name}
		if v.Label == "" {
			v.Label = cf.Name
		}
		stored, has := src.Config[cf.Name]
		if !has && isNew {
			stored, has = cf.Default, cf.Default != nil
		}
		if has {
			v.Value, v.Checked, v.Stored = configText(cf.Kind, stored)
		}
		f.Fields = append(f.Fields, v)
	}
	return f
}

// configText shows a stored config value in its input; a secret shows
// nothing, only that it is stored.
func configText(kind string, v any) (value string, checked, stored bool) {
	switch x := v.(type) {
	case string:
		if kind == "secret" {
			return "", false, x != ""
		}
		return x, false, false
	case bool:
		return "", x, false
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), false, false
	case []any:
		lines := make([]string, 0, len(x))
		for _, item := range x {
			if s, ok := item.(string); ok {
				lines = append(lines, s)
			}
		}
		return strings.Join(lines, "\n"), false, false
	}
	return "", false, false
}

// refill puts a submitted form's values back into f (secrets excepted),
// so a failed submission does not lose what the operator typed.
func (f *sourceForm) refill(ctx *fasthttp.RequestCtx) {
	f.Name, f.Schedule = formField(ctx, "name"), formField(ctx, "schedule")
	f.Enabled, f.Visibility = formField(ctx, "enabled") != "", formField(ctx, "visibility")
	if f.New {
		f.ID = formField(ctx, "id")
	}
	for i := range f.Fields {
		v := &f.Fields[i]
		switch v.Kind {
		case "secret":
		case "bool":
			v.Checked = formField(ctx, v.Input) != ""
		default:
			v.Value = formField(ctx, v.Input)
		}
	}
}

// sourceInputFromForm reads the add (isNew) or edit form of a source of
// typ into the input addSource and changeSource take. Empty fields are
// left out of a new source and clear a setting of an existing one (its
// default applies again), except secrets: an empty secret keeps the stored
// one, and the "clear" box next to it removes it.
func sourceInputFromForm(ctx *fasthttp.RequestCtx, typ string, isNew bool) (*sourceInput, error) {
	name, schedule, vis := formField(ctx, "name"), formField(ctx, "schedule"), formField(ctx, "visibility")
	enabled := formField(ctx, "enabled") != ""
	in := &sourceInput{Name: &name, Schedule: &schedule, Enabled: &enabled, Config: map[string]any{}}
	if vis != "" {
		in.Visibility = &vis
	}
	if isNew {
		in.Type = &typ
		if id := formField(ctx, "id"); id != "" {
			in.ID = &id
		}
	}
	for _, cf := range crawl.ConfigFields(typ) {
		v, err := configValue(ctx, cf)
		if err != nil {
			return nil, err
		}
		switch {
		case v != nil:
			in.Config[cf.Name] = v
		case !isNew && (cf.Kind != "secret" || formField(ctx, "cfg."+cf.Name+".clear") != ""):
			in.Config[cf.Name] = nil // clears it
		}
	}
	return in, nil
}

// configValue reads one config field; nil when it is empty.
func configValue(ctx *fasthttp.RequestCtx, cf crawl.ConfigField) (any, error) {
	raw := formField(ctx, "cfg."+cf.Name)
	switch cf.Kind {
	case "bool":
		return raw != "", nil
	case "strings":
		var items []any
		for _, line := range strings.Split(raw, "\n") {
			if line = strings.TrimSpace(line); line != "" {
				items = append(items, line)
			}
		}
		if items == nil {
			return nil, nil
		}
		return items, nil
	case "int":
		if raw == "" {
			return nil, nil
		}
		n, err := strconv.Atoi(raw)
		if err != nil {
			return nil, paramErr("%s (config.%s) must be a whole number from %d to %d", fieldLabels[cf.Name], cf.Name, cf.Min, cf.Max)
		}
		return float64(n), nil
	}
	if raw == "" {
		return nil, nil
	}
	return raw, nil
}
