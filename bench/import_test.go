package bench

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sift-search/sift/crawl"
	"github.com/sift-search/sift/engine"
	"github.com/sift-search/sift/record"
)

// slackMsg is a message of a Slack export's day file.
type slackMsg struct {
	Type       string `json:"type"`
	Subtype    string `json:"subtype,omitempty"`
	User       string `json:"user"`
	Text       string `json:"text"`
	TS         string `json:"ts"`
	ThreadTS   string `json:"thread_ts,omitempty"`
	ReplyCount int    `json:"reply_count,omitempty"`
	ParentUser string `json:"parent_user_id,omitempty"`
}

// SlackExport generates a Slack workspace export zip of msgs messages with
// a fixed seed: users and channels as named, texts of 5 to 40 words from
// the synthetic vocabulary with mentions, channel links, links and
// escapes, a tenth of the messages replies in threads, and a join message
// per user and channel now and then (skipped by the importer).
func SlackExport(msgs, channels, users int) []byte {
	rng := rand.New(rand.NewPCG(7, 0x51ac))
	s := NewSynth(42, vocabSize, channels)
	type conv struct {
		ID      string   `json:"id"`
		Name    string   `json:"name"`
		Created int64    `json:"created"`
		Members []string `json:"members"`
		Topic   struct {
			Value string `json:"value"`
		} `json:"topic"`
	}
	type profile struct {
		DisplayName string `json:"display_name"`
		RealName    string `json:"real_name"`
	}
	type user struct {
		ID       string  `json:"id"`
		Name     string  `json:"name"`
		RealName string  `json:"real_name"`
		Profile  profile `json:"profile"`
	}
	us := make([]user, users)
	for i := range us {
		first, last := s.vocab[len(functionWords)+rng.IntN(2000)], s.vocab[len(functionWords)+rng.IntN(2000)]
		us[i] = user{ID: fmt.Sprintf("U%06d", i), Name: first + "." + last, RealName: strings.ToUpper(first[:1]) + first[1:] + " " + last}
		us[i].Profile = profile{RealName: us[i].RealName}
		if i%3 != 0 {
			us[i].Profile.DisplayName = first
		}
	}
	cs := make([]conv, channels)
	for i := range cs {
		cs[i] = conv{ID: fmt.Sprintf("C%04d", i), Name: fmt.Sprintf("%s-%d", s.vocab[len(functionWords)+i], i), Created: 1704067200}
		cs[i].Topic.Value = s.Text(6) + " &amp; more"
	}
	text := func() string {
		var b strings.Builder
		for i, n := 0, 5+rng.IntN(36); i < n; i++ {
			if i > 0 {
				b.WriteByte(' ')
			}
			switch r := rng.IntN(200); {
			case r < 6:
				b.WriteString("<@" + us[rng.IntN(users)].ID + ">")
			case r < 8:
				c := cs[rng.IntN(channels)]
				b.WriteString("<#" + c.ID + "|" + c.Name + ">")
			case r < 10:
				fmt.Fprintf(&b, "<https://docs.example.com/%s|%s>", s.vocab[s.word.Uint64()], s.vocab[s.word.Uint64()])
			case r < 11:
				fmt.Fprintf(&b, "<https://git.example.com/pr/%d>", rng.IntN(5000))
			case r < 12:
				b.WriteString("&amp;")
			default:
				b.WriteString(s.Text(1))
			}
		}
		return b.String()
	}
	// Each channel's messages, in time order; parents get their reply count
	// as replies are drawn.
	perChan := make([][]slackMsg, channels)
	roots := make([][]int, channels) // recent top-level messages of each channel
	author := rand.NewZipf(rng, 1.1, 1, uint64(users-1))
	clock := make([]int64, channels)
	for i := range clock {
		clock[i] = 1704067200
	}
	ts := func(c int) string {
		clock[c] += 1 + rng.Int64N(400)
		return fmt.Sprintf("%d.%06d", clock[c], rng.IntN(1_000_000))
	}
	for n := 0; n < msgs; n++ {
		c := int(s.channel.Uint64())
		if rng.IntN(100) == 0 {
			u := us[rng.IntN(users)]
			perChan[c] = append(perChan[c], slackMsg{Type: "message", Subtype: "channel_join", User: u.ID, Text: "<@" + u.ID + "> has joined the channel", TS: ts(c)})
		}
		m := slackMsg{Type: "message", User: us[author.Uint64()].ID, Text: text(), TS: ts(c)}
		if len(roots[c]) > 0 && rng.IntN(10) == 0 {
			p := &perChan[c][roots[c][rng.IntN(len(roots[c]))]]
			p.ThreadTS, p.ReplyCount = p.TS, p.ReplyCount+1
			m.ThreadTS, m.ParentUser = p.TS, p.User
		} else {
			roots[c] = append(roots[c], len(perChan[c]))
			if len(roots[c]) > 30 {
				roots[c] = roots[c][1:]
			}
		}
		perChan[c] = append(perChan[c], m)
	}

	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	put := func(name string, v any) {
		w, err := zw.Create(name)
		if err == nil {
			enc := json.NewEncoder(w)
			enc.SetEscapeHTML(false)
			err = enc.Encode(v)
		}
		if err != nil {
			panic("BUG: " + err.Error())
		}
	}
	put("users.json", us)
	put("channels.json", cs)
	for c, ms := range perChan {
		for start := 0; start < len(ms); {
			day := dayOf(ms[start].TS)
			end := start
			for end < len(ms) && dayOf(ms[end].TS) == day {
				end++
			}
			put(cs[c].Name+"/"+day+".json", ms[start:end])
			start = end
		}
	}
	if err := zw.Close(); err != nil {
		panic("BUG: " + err.Error())
	}
	return buf.Bytes()
}

func dayOf(ts string) string {
	var sec int64
	fmt.Sscanf(ts, "%d.", &sec)
	return time.Unix(sec, 0).UTC().Format(time.DateOnly)
}

var (
	slackZipOnce sync.Once
	slackZip     []byte
)

// BenchmarkSlackImport: a 100,000-message Slack export (20 channels, 2,000
// users) parsed and imported into a fresh engine on disk (full-text index,
// no semantic indexer). msgs/s is for both; parse-msgs/s for parsing alone.
func BenchmarkSlackImport(b *testing.B) {
	const msgs = 100_000
	slackZipOnce.Do(func() { slackZip = SlackExport(msgs, 20, 2000) })
	data := slackZip
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	var parse time.Duration
	var kept int
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		e, err := engine.Open(engine.Options{DataDir: b.TempDir()})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := e.PutSource(record.Source{ID: "slack", Name: "Slack", Type: "slack", Enabled: true}); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		t := time.Now()
		x, err := crawl.ParseSlackExport(bytes.NewReader(data), int64(len(data)), "slack")
		if err != nil {
			b.Fatal(err)
		}
		parse += time.Since(t)
		n, err := crawl.Import(e, x)
		b.StopTimer()
		if err != nil || n != len(x.Messages) {
			b.Fatalf("imported %d of %d: %v", n, len(x.Messages), err)
		}
		kept = len(x.Messages)
		e.Close()
	}
	if kept != msgs {
		b.Fatalf("parsed %d messages, want %d", kept, msgs)
	}
	b.ReportMetric(float64(kept*b.N)/b.Elapsed().Seconds(), "msgs/s")
	b.ReportMetric(float64(kept*b.N)/parse.Seconds(), "parse-msgs/s")
	b.ReportMetric(float64(len(data))/1e6, "zip-MB")
}
