package httpapi

import (
	"cmp"
	"fmt"
	"strconv"

	"github.com/sift-search/sift/record"
	"github.com/valyala/fasthttp"
)

// The console's channel administration (visibility, delete, restore) and
// author opt-outs of a source.

// channelsPerPage bounds the rows of the channels page.
const channelsPerPage = 200

// channelsPage lists a source's channels, a page at a time.
type channelsPage struct {
	consolePage
	Source     record.Source
	Channels   []channelRow
	Total      int
	Page, Last int
	Excluded   []string
	Choices    []string // the visibilities an operator may set
}

type channelRow struct {
	channelJSON
	Parent string // the parent's name, else its id
	N      int    // the row's number, for unique ids
}

// consoleChannels serves GET /dashboard/sources/{id}/channels[?page=N].
func (s *console) consoleChannels(ctx *fasthttp.RequestCtx) {
	s.showChannels(ctx, pathParam(ctx, "id"), s.takeFlash(ctx))
}

func (s *console) showChannels(ctx *fasthttp.RequestCtx, id string, f *flash) {
	src, ok := s.eng.Source(id)
	chans, excluded, err := s.eng.SourceChannels(id)
	if !ok || err != nil {
		s.sourceGone(ctx, id)
		return
	}
	names := make(map[string]string, len(chans))
	for _, c := range chans {
		names[c.ID] = c.Name
	}
	d := channelsPage{
		consolePage: s.consolePage(ctx, "Channels of "+src.Name, f, link{src.Name, "/dashboard/sources/" + id}, link{Text: "Channels"}),
		Source:      src, Total: len(chans), Excluded: excluded,
		Choices: []string{record.VisibilityInherit, record.VisibilityPublic, record.VisibilityPrivate},
	}
	d.Last = max(1, (len(chans)+channelsPerPage-1)/channelsPerPage)
	d.Page, _ = strconv.Atoi(string(ctx.QueryArgs().Peek("page")))
	d.Page = min(max(d.Page, 1), d.Last)
	lo := (d.Page - 1) * channelsPerPage
	for i, c := range chans[lo:min(lo+channelsPerPage, len(chans))] {
		row := channelRow{channelJSON: channelView(c), N: lo + i + 1}
		if c.ParentID != "" {
			row.Parent = cmp.Or(names[c.ParentID], c.ParentID)
		}
		d.Channels = append(d.Channels, row)
	}
	s.consoleShow(ctx, "console_channels.html", f, d)
}

// channelsURL is a source's channels page.
func channelsURL(id string) string { return "/dashboard/sources/" + id + "/channels" }

// consoleChannelVisibility serves POST
// /dashboard/sources/{id}/channels/visibility (fields channel, visibility).
func (s *console) consoleChannelVisibility(ctx *fasthttp.RequestCtx) {
	id, channel := pathParam(ctx, "id"), formField(ctx, "channel")
	c, err := s.manage.setChannelVisibility(id, channel, formField(ctx, "visibility"))
	if err != nil {
		s.showChannels(ctx, id, failure(err))
		return
	}
	effect := "shown to"
	if c.Hidden {
		effect = "hidden from"
	}
	s.consoleDone(ctx, channelsURL(id), flash{Text: fmt.Sprintf("Channel %q is set to %s: %s visitors without credentials.", c.Name, c.Visibility, effect)})
}

// consoleConfirmChannelDelete serves GET
// /dashboard/sources/{id}/channels/delete?channel=….
func (s *console) consoleConfirmChannelDelete(ctx *fasthttp.RequestCtx) {
	id, channel := pathParam(ctx, "id"), string(ctx.QueryArgs().Peek("channel"))
	src, _ := s.eng.Source(id)
	chans, _, err := s.eng.SourceChannels(id)
	if err != nil {
		s.sourceGone(ctx, id)
		return
	}
	for _, c := range chans {
		if c.ID == channel {
			s.consoleShow(ctx, "console_confirm.html", nil, confirmPage{
				consolePage: s.consolePage(ctx, "Delete "+c.Name, nil, link{src.Name, "/dashboard/sources/" + id},
					link{"Channels", channelsURL(id)}, link{Text: "Delete " + c.Name}),
				Question: fmt.Sprintf("Delete channel %q and its %s? Later crawls and imports will skip it until you restore it.",
					c.Name, count(c.Messages, "message")),
				Action: channelsURL(id) + "/delete", Field: "channel", Value: c.ID, Cancel: channelsURL(id),
			})
			return
		}
	}
	s.showChannels(ctx, id, failure(s.manage.channelNotFound(record.ErrNotFound, id, channel)))
}

// consoleDeleteChannel serves POST /dashboard/sources/{id}/channels/delete
// (field channel).
func (s *console) consoleDeleteChannel(ctx *fasthttp.RequestCtx) {
	id, channel := pathParam(ctx, "id"), formField(ctx, "channel")
	if err := s.manage.excludeChannel(id, channel); err != nil {
		s.showChannels(ctx, id, failure(err))
		return
	}
	s.consoleDone(ctx, channelsURL(id), flash{Text: fmt.Sprintf("Channel %s deleted; crawls and imports will skip it.", channel)})
}

// consoleRestoreChannel serves POST
// /dashboard/sources/{id}/channels/restore (field channel).
func (s *console) consoleRestoreChannel(ctx *fasthttp.RequestCtx) {
	id, channel := pathParam(ctx, "id"), formField(ctx, "channel")
	if err := s.manage.includeChannel(id, channel); err != nil {
		s.showChannels(ctx, id, failure(err))
		return
	}
	s.consoleDone(ctx, channelsURL(id), flash{Text: fmt.Sprintf("Channel %s restored: the next crawl or import brings it back.", channel)})
}

// consoleOptOut serves POST /dashboard/sources/{id}/optouts (field
// author).
func (s *console) consoleOptOut(ctx *fasthttp.RequestCtx) {
	id := pathParam(ctx, "id")
	author, removed, err := s.manage.optOut(id, formField(ctx, "author"))
	if err != nil {
		s.showSource(ctx, id, failure(err), nil)
		return
	}
	s.consoleDone(ctx, "/dashboard/sources/"+id, flash{Text: fmt.Sprintf("%s opted out: %s removed; none will be stored again.",
		author, count(removed, "message"))})
}

// consoleOptIn serves POST /dashboard/sources/{id}/optouts/delete (field
// author).
func (s *console) consoleOptIn(ctx *fasthttp.RequestCtx) {
	id, author := pathParam(ctx, "id"), formField(ctx, "author")
	if err := s.manage.optIn(id, author); err != nil {
		s.showSource(ctx, id, failure(err), nil)
		return
	}
	s.consoleDone(ctx, "/dashboard/sources/"+id, flash{Text: fmt.Sprintf("%s's opt-out removed: later crawls and imports store their messages again.", author)})
}
