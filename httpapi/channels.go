package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"strings"

	"github.com/sift-search/sift/record"
	"github.com/valyala/fasthttp"
)

// Channel administration and author opt-outs: admin endpoints under
// /api/sources/{id}.

type channelJSON struct {
	ID                  string `json:"id"`
	Name                string `json:"name"`
	Slug                string `json:"slug"`
	Kind                string `json:"kind"`
	ParentID            string `json:"parentId"`
	Visibility          string `json:"visibility"`          // the operator's choice: public, private or inherit
	EffectiveVisibility string `json:"effectiveVisibility"` // what callers without credentials get
	PlatformPrivate     bool   `json:"platformPrivate"`     // the platform marks it private (DM, private channel)
	Messages            int    `json:"messages"`
}

func channelView(c record.ChannelInfo) channelJSON {
	eff := record.VisibilityPublic
	if c.Hidden {
		eff = record.VisibilityPrivate
	}
	return channelJSON{
		ID: c.ID, Name: c.Name, Slug: c.Slug, Kind: c.Kind, ParentID: c.ParentID, Visibility: c.Visibility,
		EffectiveVisibility: eff, PlatformPrivate: c.Private, Messages: c.Messages,
	}
}

// listChannels serves GET /api/sources/{id}/channels.
func (s *manage) listChannels(ctx *fasthttp.RequestCtx) {
	chans, excluded, err := s.eng.SourceChannels(pathParam(ctx, "id"))
	if err != nil {
		writeErr(ctx, sourceNotFound(err, pathParam(ctx, "id")))
		return
	}
	out := struct {
		Channels []channelJSON `json:"channels"`
		Excluded []string      `json:"excluded"` // ids of deleted channels, kept out of crawls and imports
	}{Channels: make([]channelJSON, 0, len(chans)), Excluded: excluded}
	for _, c := range chans {
		out.Channels = append(out.Channels, channelView(c))
	}
	writeJSON(ctx, fasthttp.StatusOK, out)
}

// sourceNotFound names the source in a not-found error of a source's
// endpoint.
func sourceNotFound(err error, id string) error {
	if errors.Is(err, record.ErrNotFound) {
		return fmt.Errorf("%w: no source %q", record.ErrNotFound, id)
	}
	return err
}

// notFoundIn tells an unknown source from something else missing in a
// known one, which what names ("no channel \"C1\" in source \"s\"").
func (s *manage) notFoundIn(err error, id, what string, args ...any) error {
	if !errors.Is(err, record.ErrNotFound) {
		return err
	}
	if _, ok := s.eng.Source(id); !ok {
		return sourceNotFound(err, id)
	}
	return fmt.Errorf("%w: %s", record.ErrNotFound, fmt.Sprintf(what, args...))
}

// channelNotFound tells an unknown source from an unknown channel.
func (s *manage) channelNotFound(err error, id, channel string) error {
	return s.notFoundIn(err, id, "no channel %q in source %q", channel, id)
}

// maxSmallBody bounds the JSON bodies of the channel, opt-out and settings
// endpoints.
const maxSmallBody = 64 << 10

// decodeSmall decodes a small JSON object body into v.
func decodeSmall(ctx *fasthttp.RequestCtx, v any) error {
	if mt, _, err := mime.ParseMediaType(string(ctx.Request.Header.ContentType())); err != nil || mt != "application/json" {
		return &mediaErr{"send application/json"}
	}
	if len(ctx.PostBody()) > maxSmallBody {
		return &sizeErr{fmt.Sprintf("the body is at most %d bytes", maxSmallBody)}
	}
	if err := decodeOne(ctx.PostBody(), v); err != nil {
		return paramErr("the body must be one JSON object: %v", err)
	}
	return nil
}

// patchChannel serves PATCH /api/sources/{id}/channels/{channelId} with
// {"visibility": "public" | "private" | "inherit"}.
func (s *manage) patchChannel(ctx *fasthttp.RequestCtx) {
	var in struct {
		Visibility *string `json:"visibility"`
	}
	if err := decodeSmall(ctx, &in); err != nil {
		writeErr(ctx, err)
		return
	}
	if in.Visibility == nil {
		writeErr(ctx, paramErr(`visibility is required: "public", "private" or "inherit"`))
		return
	}
	c, err := s.setChannelVisibility(pathParam(ctx, "id"), pathParam(ctx, "channelId"), *in.Visibility)
	if err != nil {
		writeErr(ctx, err)
		return
	}
	writeJSON(ctx, fasthttp.StatusOK, channelView(c))
}

// setChannelVisibility is the API's and the console's way to set a
// channel's visibility.
func (s *manage) setChannelVisibility(id, channel, vis string) (record.ChannelInfo, error) {
	switch vis {
	case record.VisibilityPublic, record.VisibilityPrivate, record.VisibilityInherit:
	default:
		return record.ChannelInfo{}, paramErr(`visibility must be "public", "private" or "inherit"`)
	}
	c, err := s.eng.SetChannelVisibility(id, channel, vis)
	if err != nil {
		return c, s.channelNotFound(err, id, channel)
	}
	s.log.Info("channel visibility set", "source", id, "channel", channel, "visibility", vis)
	return c, nil
}

// deleteChannel serves DELETE /api/sources/{id}/channels/{channelId}.
func (s *manage) deleteChannel(ctx *fasthttp.RequestCtx) {
	if err := s.excludeChannel(pathParam(ctx, "id"), pathParam(ctx, "channelId")); err != nil {
		writeErr(ctx, err)
		return
	}
	ctx.SetStatusCode(fasthttp.StatusNoContent)
}

func (s *manage) excludeChannel(id, channel string) error {
	if err := s.eng.ExcludeChannel(id, channel); err != nil {
		return s.channelNotFound(err, id, channel)
	}
	s.log.Info("channel deleted and excluded", "source", id, "channel", channel)
	return nil
}

// restoreChannel serves POST /api/sources/{id}/channels/{channelId}/restore.
func (s *manage) restoreChannel(ctx *fasthttp.RequestCtx) {
	if err := s.includeChannel(pathParam(ctx, "id"), pathParam(ctx, "channelId")); err != nil {
		writeErr(ctx, err)
		return
	}
	writeJSON(ctx, fasthttp.StatusOK, map[string]any{"id": pathParam(ctx, "channelId"), "restored": true})
}

func (s *manage) includeChannel(id, channel string) error {
	if err := s.eng.RestoreChannel(id, channel); err != nil {
		return s.notFoundIn(err, id, "channel %q of source %q is not excluded", channel, id)
	}
	s.log.Info("channel restored", "source", id, "channel", channel)
	return nil
}

// listOptOuts serves GET /api/sources/{id}/optouts.
func (s *manage) listOptOuts(ctx *fasthttp.RequestCtx) {
	src, ok := s.eng.Source(pathParam(ctx, "id"))
	if !ok {
		writeErr(ctx, sourceNotFound(record.ErrNotFound, pathParam(ctx, "id")))
		return
	}
	out := struct {
		OptOuts []string `json:"optouts"`
	}{OptOuts: append([]string{}, src.OptOuts...)}
	writeJSON(ctx, fasthttp.StatusOK, out)
}

// addOptOut serves POST /api/sources/{id}/optouts with {"author": "…"}.
func (s *manage) addOptOut(ctx *fasthttp.RequestCtx) {
	var in struct {
		Author *string `json:"author"`
	}
	if err := decodeSmall(ctx, &in); err != nil {
		writeErr(ctx, err)
		return
	}
	if in.Author == nil {
		writeErr(ctx, paramErr("author is required: the username as the platform gives it"))
		return
	}
	author, removed, err := s.optOut(pathParam(ctx, "id"), *in.Author)
	if err != nil {
		writeErr(ctx, err)
		return
	}
	writeJSON(ctx, fasthttp.StatusCreated, map[string]any{"author": author, "removed": removed})
}

// optOut is the API's and the console's opt-out.
func (s *manage) optOut(id, author string) (string, int, error) {
	author = strings.TrimSpace(author)
	if author == "" || len(author) > record.MaxNameBytes {
		return "", 0, paramErr("author must be 1 to %d bytes: the username as the platform gives it", record.MaxNameBytes)
	}
	removed, err := s.eng.OptOut(id, author)
	if err != nil {
		return "", 0, sourceNotFound(err, id)
	}
	s.log.Info("author opted out", "source", id, "removed", removed)
	return author, removed, nil
}

// deleteOptOut serves DELETE /api/sources/{id}/optouts/{author}.
func (s *manage) deleteOptOut(ctx *fasthttp.RequestCtx) {
	if err := s.optIn(pathParam(ctx, "id"), pathParam(ctx, "author")); err != nil {
		writeErr(ctx, err)
		return
	}
	ctx.SetStatusCode(fasthttp.StatusNoContent)
}

func (s *manage) optIn(id, author string) error {
	if err := s.eng.OptIn(id, author); err != nil {
		return s.notFoundIn(err, id, "%q has not opted out of source %q", author, id)
	}
	s.log.Info("author opted in again", "source", id)
	return nil
}

// settingsJSON is the instance's presentation.
type settingsJSON struct {
	SiteName        string `json:"siteName"`
	SiteDescription string `json:"siteDescription"`
	SiteAccent      string `json:"siteAccent"` // "#rrggbb", "" = the pages' default
	SiteLogo        string `json:"siteLogo"`   // the logo's address, "" = none
}

// getSettings serves GET /api/settings: the settings in effect.
func (s *manage) getSettings(ctx *fasthttp.RequestCtx) {
	writeJSON(ctx, fasthttp.StatusOK, settingsJSON{SiteName: s.siteName(), SiteDescription: s.siteDescription(),
		SiteAccent: s.siteAccent(), SiteLogo: s.siteLogoURL()})
}

// patchSettings serves PATCH /api/settings: {"siteName"?,
// "siteDescription"?, "siteAccent"?}; an empty string returns to the
// default (SITE_NAME, SITE_DESCRIPTION, the pages' colours).
func (s *manage) patchSettings(ctx *fasthttp.RequestCtx) {
	var raw map[string]json.RawMessage
	if err := decodeSmall(ctx, &raw); err != nil {
		writeErr(ctx, err)
		return
	}
	changes := map[string]string{}
	for k, v := range raw {
		var key string
		switch k {
		case "siteName":
			key = settingSiteName
		case "siteDescription":
			key = settingSiteDescription
		case "siteAccent":
			key = settingSiteAccent
		case "siteLogo":
			writeErr(ctx, paramErr("siteLogo changes with PUT or DELETE /api/settings/logo"))
			return
		default:
			writeErr(ctx, paramErr("unknown field %q (fields: siteName, siteDescription, siteAccent)", k))
			return
		}
		var val string
		if err := json.Unmarshal(v, &val); err != nil {
			writeErr(ctx, paramErr("%s must be a string", k))
			return
		}
		changes[key] = val
	}
	if err := s.updateSettings(changes); err != nil {
		writeErr(ctx, err)
		return
	}
	s.getSettings(ctx)
}

// updateSettings checks and stores settings (the API's and the console's);
// an accent colour is stored in lower case.
func (s *manage) updateSettings(changes map[string]string) error {
	if n, ok := changes[settingSiteName]; ok && len(n) > 200 {
		return paramErr("siteName is at most 200 bytes")
	}
	if d, ok := changes[settingSiteDescription]; ok && len(d) > 1000 {
		return paramErr("siteDescription is at most 1000 bytes")
	}
	if a, ok := changes[settingSiteAccent]; ok {
		if a = strings.TrimSpace(a); a != "" {
			c, ok := parseAccent(a)
			if !ok {
				return paramErr("siteAccent must be a colour as #rrggbb (six hex digits, as #1a73e8), or empty for the default")
			}
			a = c
		}
		changes[settingSiteAccent] = a
	}
	_, err := s.eng.UpdateSettings(changes)
	return err
}
