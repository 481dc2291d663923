package httpapi

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// TestSearchJSONAsEncodingJSON: the hand-written answer is byte for byte
// what encoding/json writes.
func TestSearchJSONAsEncodingJSON(t *testing.T) {
	ts := start(t)
	out := searchJSON{
		Messages: []messageJSON{{ID: "1", Content: "a <b> & \"c\"\n\t\x01 \u2028 é 日本 \xff", Timestamp: "2026-01-02T03:04:05.000Z",
			Username: "u", ChannelName: "c", ChannelSlug: "c", PlatformName: "P", PlatformType: "discord", Score: 9.6715, Highlight: "<mark>a</mark>"}},
		Documents: []documentJSON{{ID: "d", Title: "T\\", Slug: "t", Content: strings.Repeat("text\r\n<x>", 100), Score: 0.5, updated: time.Unix(5, 0)},
			{ID: "e", Content: "", Score: 1e-7}},
		TotalMessages: 1234, TotalDocuments: 2,
	}
	for i := range 2 { // the second from the cache, its totals exact
		out.TotalExact = i == 1
		want, _ := json.Marshal(out)
		var ctx fasthttp.RequestCtx
		ts.srv.api.writeSearch(&ctx, &out)
		if got := string(ctx.Response.Body()); got != string(want)+"\n" {
			t.Fatalf("hand-written:\n%s\nencoding/json:\n%s", got, want)
		}
	}
}

func FuzzAppendJSONString(f *testing.F) {
	f.Add("a <b> & \"c\"\n\t\x01 \u2028 é \xff\xfe")
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := appendJSONString(nil, s); string(got) != string(want) {
			t.Fatalf("%q: %s, want %s", s, got, want)
		}
	})
}

func TestAppendJSONNumber(t *testing.T) {
	for _, f := range []float64{0, 1, -1, 0.5, 9.6715, 1e-7, 1.5e-9, 1e21, 123456789, math.MaxFloat64, -2.5e-8} {
		want, _ := json.Marshal(f)
		if got := appendJSONNumber(nil, f); string(got) != string(want) {
			t.Errorf("%v: %s, want %s", f, got, want)
		}
	}
}
