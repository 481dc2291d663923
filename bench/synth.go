package bench

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sift-search/sift/record"
)

// functionWords head the synthetic vocabulary: in real text the most
// frequent words are function words, which the engine treats as stop words.
var functionWords = strings.Fields(`the to i a and is it you of that in for this on be
not with have but are can if so was do what just it's at there like my or we
they as get from an all one no how would about will me think yeah don't he
any then some know by use out your up need also more when now there's which
been has had why see make good only work thanks right too sure one try here
still could maybe them our where were very much does did something even new
way into should want over other because time well already lot than first`)

// Synth generates chat messages with a fixed seed: a Zipfian vocabulary of
// function words then pronounceable content words (plus a few code-like
// tokens), log-normal message lengths (median 9 words, long tail),
// Zipfian authors and channels, and increasing timestamps.
type Synth struct {
	rng      *rand.Rand
	vocab    []string
	word     *rand.Zipf
	author   *rand.Zipf
	channel  *rand.Zipf
	channels int
	function map[string]bool
	t        time.Time
	n        int
}

// NewSynth returns a generator with a vocabulary of vocabSize words.
func NewSynth(seed uint64, vocabSize, channels int) *Synth {
	rng := rand.New(rand.NewPCG(seed, 0x5137))
	s := &Synth{rng: rng, channels: channels, t: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)}
	s.vocab = append(s.vocab, functionWords...)
	seen := map[string]bool{}
	for _, w := range functionWords {
		seen[w] = true
	}
	for len(s.vocab) < vocabSize {
		w := s.pseudoWord()
		if !seen[w] {
			seen[w] = true
			s.vocab = append(s.vocab, w)
		}
	}
	s.word = rand.NewZipf(rng, 1.07, 2, uint64(vocabSize-1))
	s.author = rand.NewZipf(rng, 1.2, 1, 499)
	s.channel = rand.NewZipf(rng, 1.3, 1, uint64(channels-1))
	return s
}

var (
	onsets = strings.Fields("b c d f g h j k l m n p r s t v w z br cr dr fl gr pl pr sk sl sp st tr ch sh th")
	nuclei = strings.Fields("a e i o u a e i o ai ea ou ie")
	codas  = []string{"", "", "", "n", "r", "s", "t", "l", "m", "ck", "nd", "st", "rt"}
)

func (s *Synth) pseudoWord() string {
	var b strings.Builder
	for i := 1 + s.rng.IntN(3); i > 0; i-- {
		b.WriteString(onsets[s.rng.IntN(len(onsets))])
		b.WriteString(nuclei[s.rng.IntN(len(nuclei))])
	}
	b.WriteString(codas[s.rng.IntN(len(codas))])
	return b.String()
}

// Words is the generated vocabulary, most frequent first.
func (s *Synth) Words() []string { return s.vocab }

// Text returns a message of n words.
func (s *Synth) Text(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(' ')
		}
		switch r := s.rng.IntN(100); {
		case r == 0: // an identifier now and then, as in technical chat
			fmt.Fprintf(&b, "%s_%s", s.vocab[s.word.Uint64()], s.vocab[s.word.Uint64()])
		case r == 1:
			fmt.Fprintf(&b, "v%d.%d.%d", s.rng.IntN(4), s.rng.IntN(20), s.rng.IntN(10))
		default:
			b.WriteString(s.vocab[s.word.Uint64()])
		}
	}
	return b.String()
}

// MessageLen draws a message length in words: log-normal, median 9.
func (s *Synth) MessageLen() int {
	return min(max(int(math.Round(math.Exp(2.2+0.8*s.rng.NormFloat64()))), 1), 300)
}

// Next returns the next message of source "synth".
func (s *Synth) Next() record.Message {
	s.n++
	s.t = s.t.Add(time.Duration(1+s.rng.IntN(90)) * time.Second)
	return record.Message{
		SourceID: "synth", ChannelID: fmt.Sprint("c", s.channel.Uint64()), ID: fmt.Sprint(s.n),
		Author: fmt.Sprint("user", s.author.Uint64()), Content: strings.Clone(s.Text(s.MessageLen())), Timestamp: s.t,
	}
}

// Channels returns the channels Next uses.
func (s *Synth) Channels() []record.Channel {
	out := make([]record.Channel, s.channels)
	for i := range out {
		out[i] = record.Channel{SourceID: "synth", ID: fmt.Sprint("c", i), Name: fmt.Sprint("channel ", i)}
	}
	return out
}

// Query returns a search query the way people search chat: content words
// of a message they half remember. 60%: one to three content words in
// message order; 10%: the same with an author filter; 15%: a quoted phrase
// of two or three consecutive words around a content word; 15%: two to four
// consecutive words as typed, function words included. Every query holds a
// content word; StopQuery makes the ones that do not.
func (s *Synth) Query(from record.Message) string {
	var words []string
	for _, w := range strings.Fields(from.Content) {
		// Quotes and leading dashes are query syntax, not words people type.
		if w = strings.TrimLeft(strings.ReplaceAll(w, `"`, ""), "-"); w != "" {
			words = append(words, w)
		}
	}
	if len(words) == 0 {
		return s.vocab[len(functionWords)+s.rng.IntN(len(s.vocab)-len(functionWords))]
	}
	var content []int
	for i, w := range words {
		if !s.isFunction(w) {
			content = append(content, i)
		}
	}
	if len(content) == 0 {
		return words[s.rng.IntN(len(words))] // a message of function words only
	}
	at := content[s.rng.IntN(len(content))]
	window := func(n int) string {
		start := min(max(at-s.rng.IntN(n), 0), max(len(words)-n, 0))
		return strings.Join(words[start:min(start+n, len(words))], " ")
	}
	switch r := s.rng.IntN(100); {
	case r < 70:
		n := min(1+s.rng.IntN(3), len(content))
		first := s.rng.IntN(len(content) - n + 1)
		var q []string
		for _, i := range content[first : first+n] {
			q = append(q, words[i])
		}
		if r >= 60 {
			q = append(q, "from:"+from.Author)
		}
		return strings.Join(q, " ")
	case r < 85:
		return `"` + window(2+s.rng.IntN(2)) + `"`
	default:
		return window(2 + s.rng.IntN(3))
	}
}

// StopQuery returns a query of function words only — "the", "it to the",
// "\"to the\"" — the worst case of a term-at-a-time engine.
func (s *Synth) StopQuery() string {
	n := 1 + s.rng.IntN(3)
	var q []string
	for i := 0; i < n; i++ {
		q = append(q, functionWords[int(s.word.Uint64())%len(functionWords)])
	}
	if n > 1 && s.rng.IntN(4) == 0 {
		return `"` + strings.Join(q, " ") + `"`
	}
	return strings.Join(q, " ")
}

func (s *Synth) isFunction(w string) bool {
	if s.function == nil {
		s.function = map[string]bool{}
		for _, f := range functionWords {
			s.function[f] = true
		}
	}
	return s.function[w]
}

// MoneroMessages loads the real chat corpus of ../shared/datasets/chat/monero
// as messages of source "monero": one channel per meeting kind, times
// spread over each meeting's day in file order.
func MoneroMessages() ([]record.Channel, []record.Message, error) {
	dir, ok := DatasetsDir()
	if !ok {
		return nil, nil, os.ErrNotExist
	}
	f, err := os.Open(filepath.Join(dir, "chat", "monero", "messages.jsonl"))
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	var chans []record.Channel
	seen := map[string]bool{}
	var msgs []record.Message
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	perDay := map[string]int{}
	for sc.Scan() {
		var m struct {
			Meeting, Date, User, Kind, Text string
		}
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			return nil, nil, err
		}
		if strings.TrimSpace(m.Text) == "" || m.User == "" {
			continue
		}
		if !seen[m.Meeting] {
			seen[m.Meeting] = true
			chans = append(chans, record.Channel{SourceID: "monero", ID: m.Meeting, Name: m.Meeting})
		}
		day, err := time.Parse("2006-01-02", m.Date)
		if err != nil {
			return nil, nil, err
		}
		perDay[m.Date]++
		msgs = append(msgs, record.Message{
			SourceID: "monero", ChannelID: m.Meeting, ID: fmt.Sprint(len(msgs) + 1), Author: m.User,
			Content: m.Text, Timestamp: day.Add(time.Duration(perDay[m.Date]) * time.Second),
		})
	}
	return chans, msgs, sc.Err()
}
