package httpapi

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/sift-search/sift/ask"
	"github.com/sift-search/sift/insights"
)

// Server-sent events of an answer, one "data: {json}\n\n" each, flushed as
// they come: {"type":"sources","sources":[…]} first, {"type":"token",
// "token":"…"} for each piece in order, then {"type":"done","usage":{…}}
// (no usage in the v1 form) — or {"type":"error","error":"…"}, which ends
// the stream. A comment line every sseKeepAlive keeps proxies from closing
// a quiet stream and finds out early when the client has gone; a failed
// write cancels the answer, and with it the model server's generation.

type sseEvent struct {
	Type    string          `json:"type"`
	Sources []askSourceJSON `json:"sources,omitempty"`
	Token   *string         `json:"token,omitempty"`
	Usage   *ask.Usage      `json:"usage,omitempty"`
	Error   string          `json:"error,omitempty"`
	Stale   bool            `json:"stale,omitempty"` // on sources: see markStale
}

// sseSink hands the answer's events to the writer goroutine.
type sseSink struct {
	ctx     context.Context
	events  chan<- []byte
	form    askForm
	sources int // how many the answer drew on
	watch   noAnswerWatch
}

func (k *sseSink) send(ev sseEvent) error {
	select {
	case k.events <- encodeEvent(ev):
		return nil
	case <-k.ctx.Done():
		return k.ctx.Err()
	}
}

// last sends the final event even after the answer's context ended (a
// timeout is still reported); the writer reads or drains to the end.
func (k *sseSink) last(ev sseEvent) { k.events <- encodeEvent(ev) }

func encodeEvent(ev sseEvent) []byte {
	var v any = ev
	if ev.Type == "sources" {
		// The sources event always carries its list, empty or not.
		list := ev.Sources
		if list == nil {
			list = []askSourceJSON{}
		}
		v = struct {
			Type    string          `json:"type"`
			Sources []askSourceJSON `json:"sources"`
			Stale   bool            `json:"stale,omitempty"`
		}{ev.Type, list, ev.Stale}
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("BUG: encode event: %v", err))
	}
	return b
}

func (k *sseSink) Sources(s []ask.Source, stale bool) error {
	k.sources = len(s)
	return k.send(sseEvent{Type: "sources", Sources: k.form.sources(s), Stale: stale})
}

func (k *sseSink) Token(t string) error {
	k.watch.piece(t)
	return k.send(sseEvent{Type: "token", Token: &t})
}

func (k *sseSink) drawn() int     { return k.sources }
func (k *sseSink) noAnswer() bool { return k.watch.noAnswer() }

// streamAnswer runs the question and writes its events to w until the
// answer ends or the client goes away; a failure is logged with the
// request's id rid.
func (s *api) streamAnswer(w *bufio.Writer, req ask.Request, form askForm, rid string) {
	ctx, cancel := context.WithTimeout(s.base, askTimeout)
	defer cancel()
	events := make(chan []byte, 16)
	go func() {
		defer close(events)
		sink := &sseSink{ctx: ctx, events: events, form: form}
		endpoint := "POST /api/ask (stream)"
		if form.v1 {
			endpoint = "POST /api/v1/ask (stream)"
		}
		usage, err := s.askInto(ctx, req, caller{private: req.Private, endpoint: endpoint, via: insights.Ask}, sink)
		switch {
		case err != nil && ctx.Err() == context.Canceled:
			// The client left: nobody to tell.
		case err != nil && ctx.Err() == context.DeadlineExceeded:
			sink.last(sseEvent{Type: "error", Error: publicAskError(context.DeadlineExceeded)})
		case err != nil:
			level := slog.LevelError
			if errors.Is(err, ask.ErrModel) {
				level = slog.LevelWarn // the model server's failure, not ours
			}
			s.log.Log(context.Background(), level, "ask failed mid-stream", "request_id", rid, "err", redact(err.Error()))
			sink.last(sseEvent{Type: "error", Error: publicAskError(err)})
		case form.v1:
			sink.last(sseEvent{Type: "done"})
		default:
			sink.last(sseEvent{Type: "done", Usage: &usage})
		}
	}()
	keepAlive := time.NewTicker(sseKeepAlive)
	defer keepAlive.Stop()
	for {
		var err error
		select {
		case ev, ok := <-events:
			if !ok {
				return
			}
			if _, err = fmt.Fprintf(w, "data: %s\n\n", ev); err == nil {
				err = w.Flush()
			}
		case <-keepAlive.C:
			if _, err = w.WriteString(": keep-alive\n\n"); err == nil {
				err = w.Flush()
			}
		}
		if err != nil {
			cancel() // the client is gone: stop the answer and the model
			for range events {
			}
			return
		}
	}
}
