package httpapi

import (
	"cmp"
	"fmt"
	"unicode/utf8"

	"github.com/valyala/fasthttp"

	"github.com/sift-search/sift/agent"
	"github.com/sift-search/sift/httpapi/bounds"
	"github.com/sift-search/sift/query"
	"github.com/sift-search/sift/record"
)

// The reading API lets agents and tools read what search found: a document
// in windows of characters, a channel's messages around a message or a
// time. readDocument and readChannel hold the logic, so the MCP tools call
// them in-process with the same bounds and error words as the HTTP API.

// docWindow is the answer of GET /api/documents/{idOrSlug}: a window of a
// document's content. Offsets and lengths count characters (Unicode code
// points); nextOffset is null at the end. The read_document tool answers
// the same.
type docWindow = agent.DocumentWindow

// channelWindowQuery picks messages of a channel: Around (a message id or
// a time) or Before/After (each a message id or a time), and Limit (0 =
// the default). A value that parses as an RFC 3339 time or a date is a
// time, anything else a message id.
type channelWindowQuery struct {
	Around, Before, After string
	Limit                 int
}

// channelWindow is the answer of GET /api/channels/{slug}/messages, and
// of the read_channel tool.
type channelWindow = agent.ChannelWindow

// checkRange is intParam's bound check for values that arrive as numbers.
func checkRange(name string, v, lo, hi int) error {
	if v < lo || v > hi {
		return paramErr("%s must be an integer from %d to %d", name, lo, hi)
	}
	return nil
}

// readDocument returns a window of the document with id or slug ref:
// length characters from offset (length 0 = the default). Without private
// a document callers without credentials may not see is not found.
func (s *api) readDocument(ref string, offset, length int, private bool) (docWindow, error) {
	if length == 0 {
		length = bounds.ReadLength.Default
	}
	if err := checkRange("offset", offset, bounds.ReadOffset.Min, bounds.ReadOffset.Max); err != nil {
		return docWindow{}, err
	}
	if err := checkRange("length", length, bounds.ReadLength.Min, bounds.ReadLength.Max); err != nil {
		return docWindow{}, err
	}
	d, ok := s.findDocument(ref)
	if !ok || d.Hidden && !private {
		return docWindow{}, fmt.Errorf("%w: no document %q", record.ErrNotFound, ref)
	}
	total := utf8.RuneCountInString(d.Content)
	if offset > total {
		return docWindow{}, paramErr("offset %d is past the end of the document (totalLength %d)", offset, total)
	}
	n := min(length, total-offset)
	w := docWindow{
		ID: d.ID, Slug: d.Slug, Title: d.Title, URL: DocumentURL(s.opts.BaseURL, d.Slug), OriginURL: d.URL,
		SourceID: d.SourceID, UpdatedAt: formatTime(d.UpdatedAt), Format: d.Format,
		Content: runeSlice(d.Content, len(d.Content) == total, offset, n),
		Offset:  offset, Length: n, TotalLength: total,
	}
	if src, ok := s.eng.Source(d.SourceID); ok {
		w.Source = src.Name
	}
	if next := offset + n; next < total {
		w.NextOffset = &next
	}
	return w, nil
}

// findDocument looks a document up by id, then by slug.
func (s *api) findDocument(ref string) (record.Document, bool) {
	if ref == "" || len(ref) > bounds.NameBytes {
		return record.Document{}, false
	}
	if d, ok := s.eng.Document(ref); ok {
		return d, true
	}
	if !record.ValidSlug(ref) {
		return record.Document{}, false
	}
	return s.eng.DocumentBySlug(ref)
}

// runeSlice returns the n characters of s from character from, which the
// caller has checked lie in s; ascii says s is all single bytes. O(len(s)).
func runeSlice(s string, ascii bool, from, n int) string {
	if ascii {
		return s[from : from+n]
	}
	start, end, k := len(s), len(s), 0
	for i := range s {
		if k == from {
			start = i
		}
		if k == from+n {
			end = i
			break
		}
		k++
	}
	return s[start:end]
}

// readChannel returns the messages of channel slug that q picks, in time
// order. Without private a channel callers without credentials may not see
// is not found; so is an anchor message not in the channel.
func (s *api) readChannel(slug string, q channelWindowQuery, private bool) (channelWindow, error) {
	wq, err := windowQuery(q)
	if err != nil {
		return channelWindow{}, err
	}
	notFound := fmt.Errorf("%w: no channel %q", record.ErrNotFound, slug)
	if !record.ValidSlug(slug) {
		return channelWindow{}, notFound
	}
	ch, ok := s.eng.ChannelBySlug(slug)
	if !ok || ch.Hidden && !private {
		return channelWindow{}, notFound
	}
	w, err := s.eng.ChannelWindow(slug, wq)
	if err != nil {
		return channelWindow{}, fmt.Errorf("channel %q: %w", slug, err)
	}
	out := channelWindow{
		Channel: agent.ChannelRef{
			ID: ch.ID, Slug: ch.Slug, Name: ch.Name, URL: channelURL(s.opts.BaseURL, ch.Slug),
			SourceID: ch.SourceID, Kind: ch.Kind, Topic: ch.Topic, PlatformURL: ch.URL,
		},
		Messages:  make([]agent.WindowMessage, 0, len(w.Messages)),
		HasBefore: w.HasBefore, HasAfter: w.HasAfter,
	}
	if src, ok := s.eng.Source(ch.SourceID); ok {
		out.Channel.Source = src.Name
	}
	if ch.ParentID != "" {
		if p, ok := s.eng.ChannelByID(ch.SourceID, ch.ParentID); ok && (private || !p.Hidden) {
			out.Channel.ParentSlug = p.Slug
		}
	}
	for i := range w.Messages {
		out.Messages = append(out.Messages, s.windowMessage(&ch, &w.Messages[i], private))
	}
	return out, nil
}

// windowMessage converts a message of channel ch for a channelWindow.
func (s *api) windowMessage(ch *record.Channel, m *record.Message, private bool) agent.WindowMessage {
	v := agent.WindowMessage{
		ID: m.ID, Author: cmp.Or(m.Author, m.AuthorName), Content: m.Content,
		Timestamp: formatTime(m.Timestamp), EditedAt: formatTime(m.EditedAt),
		URL:         MessageURL(s.opts.BaseURL, ch.Slug, m.ID),
		PlatformURL: m.URL, ReplyTo: m.ReplyTo,
	}
	if m.AuthorName != "" && m.AuthorName != v.Author {
		v.AuthorName = m.AuthorName
	}
	// A thread's platform id is that of the message that started it.
	if t, ok := s.eng.ChannelByID(ch.SourceID, m.ID); ok && t.ParentID == ch.ID && t.ID != ch.ID && (private || !t.Hidden) {
		v.ThreadSlug = t.Slug
	}
	return v
}

// windowQuery validates q and turns it into the engine's query.
func windowQuery(q channelWindowQuery) (record.WindowQuery, error) {
	wq := record.WindowQuery{Limit: cmp.Or(q.Limit, bounds.ReadLimit.Default)}
	if err := checkRange("limit", wq.Limit, bounds.ReadLimit.Min, bounds.ReadLimit.Max); err != nil {
		return wq, err
	}
	var err error
	if wq.Around, err = parseAnchor("around", q.Around); err != nil {
		return wq, err
	}
	if wq.Before, err = parseAnchor("before", q.Before); err != nil {
		return wq, err
	}
	if wq.After, err = parseAnchor("after", q.After); err != nil {
		return wq, err
	}
	if !wq.Around.IsZero() && (!wq.Before.IsZero() || !wq.After.IsZero()) {
		return wq, paramErr("around cannot be combined with before or after")
	}
	return wq, nil
}

// parseAnchor reads a message id or a time (RFC 3339, or a date) of the
// parameter name; "" is none.
func parseAnchor(name, v string) (record.Anchor, error) {
	switch {
	case v == "":
		return record.Anchor{}, nil
	case len(v) > bounds.AnchorBytes:
		return record.Anchor{}, paramErr("%s is too long: %d bytes, at most %d", name, len(v), bounds.AnchorBytes)
	case !utf8.ValidString(v):
		return record.Anchor{}, paramErr("%s is not valid UTF-8", name)
	}
	if t, err := query.ParseDate(v); err == nil {
		if t.IsZero() {
			return record.Anchor{}, paramErr("%s: the time 0001-01-01T00:00:00Z is out of range", name)
		}
		return record.Anchor{Time: t}, nil
	}
	return record.Anchor{ID: v}, nil
}

// getDocument serves GET /api/documents/{id}: id or slug, offset, length.
func (s *api) getDocument(ctx *fasthttp.RequestCtx) {
	offset, err := intParam(ctx, "offset", bounds.ReadOffset.Default, bounds.ReadOffset.Min, bounds.ReadOffset.Max)
	if err != nil {
		writeErr(ctx, err)
		return
	}
	length, err := intParam(ctx, "length", bounds.ReadLength.Default, bounds.ReadLength.Min, bounds.ReadLength.Max)
	if err != nil {
		writeErr(ctx, err)
		return
	}
	w, err := s.readDocument(pathParam(ctx, "id"), offset, length, s.privileged(ctx))
	if err != nil {
		writeErr(ctx, err)
		return
	}
	writeJSON(ctx, fasthttp.StatusOK, w)
}

// channelMessages serves GET /api/channels/{slug}/messages: around, before,
// after, limit.
func (s *api) channelMessages(ctx *fasthttp.RequestCtx) {
	var q channelWindowQuery
	var err error
	for name, dst := range map[string]*string{"around": &q.Around, "before": &q.Before, "after": &q.After} {
		if *dst, err = stringParam(ctx, name, bounds.AnchorBytes, false); err != nil {
			writeErr(ctx, err)
			return
		}
	}
	if q.Limit, err = intParam(ctx, "limit", bounds.ReadLimit.Default, bounds.ReadLimit.Min, bounds.ReadLimit.Max); err != nil {
		writeErr(ctx, err)
		return
	}
	w, err := s.readChannel(pathParam(ctx, "slug"), q, s.privileged(ctx))
	if err != nil {
		writeErr(ctx, err)
		return
	}
	writeJSON(ctx, fasthttp.StatusOK, w)
}
