package ask

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/sift-search/sift/tokenizer"
)

// The extractive answerer answers without a language model: it picks the
// sentences of the sources that share the most informative words with the
// question and joins them, each cited [n].
//
//	score(sentence) = Σ idf(t) over the question's words t in the sentence
//	                  × a length factor (long sentences carry more words by chance)
//	                  + 0.5 × max idf × the source's search score
//
// where idf(t) = ln(1 + S/(1 + s(t))) over the S candidate sentences, s(t)
// of which hold t. The best sentences are taken while they score at least
// a third of the best, up to maxPicked sentences or maxAnswerWords words,
// skipping one that repeats a picked sentence's words; they are read in
// source order.
const (
	followers      = 2   // sentences after the best one that come with it
	chatWeight     = 0.7 // chat sentences answer less often than documentation
	maxPicked      = 4
	maxAnswerWords = 110
	minWords       = 4
	maxWords       = 70
)

// questionFiller are the function words of questions. Other stop words
// ("twice", "first", "seconds") can carry a question, and the idf weights
// of the sentences sort out the common ones.
var questionFiller = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a about after all also am an and any are as at be been before being but by can could
		did do does doing for from had has have having he her here his how i if in into is it its just me more most my no
		not of on or our out over should so some such than that the their them then there these they this those through
		to too under up very was we were what when where which while who whom why will with would you your`) {
		questionFiller[w] = true
	}
}

// NoAnswer is the extractive answer when no sentence shares a word with the
// question.
const NoAnswer = "The indexed content does not seem to answer this question."

type sentence struct {
	text   string
	source int // index in the sources
	pos    int // order within the source
	words  int
	terms  map[string]bool
	score  float64
}

// extract composes the answer to question from sources.
func extract(question string, sources []Source) string {
	a := tokenizer.New(tokenizer.Options{Stem: true, StemCacheSize: 1024})
	want := map[string]bool{}
	for _, t := range a.Append(nil, question, 0) {
		if t.Flags&tokenizer.Stop == 0 || !questionFiller[t.Term] {
			want[t.Term] = true
		}
	}
	var cands []*sentence
	for i, s := range sources {
		for j, text := range sentences(s) {
			words := len(strings.Fields(text))
			if words < minWords || words > maxWords {
				continue
			}
			sn := &sentence{text: text, source: i, pos: j, words: words, terms: map[string]bool{}}
			for _, t := range a.Append(nil, text, 0) {
				if want[t.Term] {
					sn.terms[t.Term] = true
				}
			}
			cands = append(cands, sn)
		}
	}
	if len(want) == 0 || len(cands) == 0 {
		return NoAnswer
	}
	df := map[string]int{}
	for _, c := range cands {
		for t := range c.terms {
			df[t]++
		}
	}
	idf := func(t string) float64 { return math.Log(1 + float64(len(cands))/float64(1+df[t])) }
	maxIDF := 0.0
	for t := range want {
		maxIDF = max(maxIDF, idf(t))
	}
	best := 0.0
	for _, c := range cands {
		for t := range c.terms {
			c.score += idf(t)
		}
		if c.score == 0 {
			continue
		}
		c.score /= 1 + 0.02*float64(max(0, c.words-25))
		if sources[c.source].Type == "message" {
			c.score *= chatWeight
		}
		c.score += 0.5 * maxIDF * sources[c.source].Score
		best = max(best, c.score)
	}
	// The best sentence must hold at least two of the question's words (or
	// its only one), or the sources do not answer it: sharing one common
	// word with the question is chance.
	need := min(2, len(want))
	if best == 0 || !slices.ContainsFunc(cands, func(c *sentence) bool { return len(c.terms) >= need }) {
		return NoAnswer
	}
	ranked := slices.Clone(cands)
	slices.SortStableFunc(ranked, func(x, y *sentence) int { return cmpFloat(y.score, x.score) })
	var picked []*sentence
	words := 0
	for _, c := range ranked {
		if len(picked) == maxPicked || c.score < best/3 || len(c.terms) == 0 {
			break
		}
		if len(c.terms) < need {
			continue
		}
		if words > 0 && words+c.words > maxAnswerWords || repeats(c, picked) {
			continue
		}
		picked = append(picked, c)
		words += c.words
		if len(picked) == 1 {
			// The best sentence brings the ones after it in its passage
			// (the steps after "To verify:", the fix after the symptom)
			// while they fit.
			for _, next := range cands {
				if next.source == c.source && next.pos > c.pos && next.pos <= c.pos+followers &&
					len(picked) < maxPicked && words+next.words <= maxAnswerWords/2+c.words {
					picked = append(picked, next)
					words += next.words
				}
			}
		}
	}
	slices.SortFunc(picked, func(x, y *sentence) int {
		if x.source != y.source {
			return x.source - y.source
		}
		return x.pos - y.pos
	})
	var b strings.Builder
	for i, c := range picked {
		if i > 0 {
			b.WriteByte(' ')
		}
		text := strings.TrimRightFunc(c.text, unicode.IsSpace)
		end := ""
		if r, _ := utf8.DecodeLastRuneInString(text); strings.ContainsRune(".!?:;", r) {
			text, end = text[:len(text)-utf8.RuneLen(r)], string(r)
		}
		if end == "" || end == ":" || end == ";" {
			end = "."
		}
		fmt.Fprintf(&b, "%s [%d]%s", text, c.source+1, end)
	}
	return b.String()
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// repeats reports whether c's question words are mostly those of a picked
// sentence of the same source.
func repeats(c *sentence, picked []*sentence) bool {
	for _, p := range picked {
		shared := 0
		for t := range c.terms {
			if p.terms[t] {
				shared++
			}
		}
		if shared == len(c.terms) && p.source == c.source || float64(shared) > 0.8*float64(max(len(c.terms), len(p.terms))) && len(c.terms) > 2 {
			return true
		}
	}
	return false
}

// sentences splits a source into clean sentences. Lines are first put
// back into paragraphs — a chat message with its continuation lines, a
// Markdown paragraph wrapped over several lines, a list item; an intro
// ending in ":" takes the list that follows — then cut into sentences.
// Headings, tables, code (fenced blocks and text that reads as code) and
// questions are left out: they do not answer.
func sentences(s Source) []string {
	var paras []string
	var cur strings.Builder
	list := false // cur is a list item
	flush := func() {
		if cur.Len() > 0 {
			paras = append(paras, cur.String())
			cur.Reset()
		}
		list = false
	}
	fence := false
	for _, line := range strings.Split(s.Text, "\n") {
		t := strings.TrimSpace(line)
		if n := strings.Count(t, "```") + strings.Count(t, "~~~"); n > 0 {
			flush()
			fence = fence != (n%2 == 1)
			continue
		}
		if fence {
			continue
		}
		if s.Type == "message" {
			if rest, ok := cutAuthor(t, s.Authors); ok {
				flush()
				t = rest
			}
		}
		intro := cur.Len() > 0 && !list && strings.HasSuffix(cur.String(), ":")
		switch {
		case t == "" && intro:
			continue // the list it introduces may follow a blank line
		case t == "" || strings.HasPrefix(t, "#") || strings.HasPrefix(t, "|"):
			flush()
			continue
		case listItem(t) != "":
			item := listItem(t)
			if cur.Len() > 0 && (list || intro) {
				cur.WriteString(" ") // the item continues its intro's sentence
			} else {
				flush()
			}
			cur.WriteString(item)
			list = true
			continue
		}
		if cur.Len() > 0 {
			cur.WriteByte(' ')
		}
		cur.WriteString(t)
	}
	flush()
	var out []string
	for _, p := range paras {
		p = mdLink.ReplaceAllString(p, "$1")
		p = strings.NewReplacer("**", "", "__", "", "`", "").Replace(p)
		for _, sn := range splitSentences(p) {
			if strings.HasSuffix(sn, "?") || strings.HasSuffix(sn, ":") || codeLike(sn) {
				continue
			}
			// In documents a sentence starts with a capital or a digit and
			// ends with a stop; other pieces were cut by code blocks.
			first, _ := utf8.DecodeRuneInString(sn)
			last, _ := utf8.DecodeLastRuneInString(sn)
			if s.Type == "document" && (unicode.IsLower(first) || !strings.ContainsRune(".!)\"'”", last)) {
				continue
			}
			out = append(out, sn)
		}
	}
	return out
}

// mdLink is a Markdown link; its text is kept.
var mdLink = regexp.MustCompile(`\[([^\]]+)\]\([^)\s]*\)`)

// cutAuthor strips the "name: " of a chat line by one of authors.
func cutAuthor(line string, authors []string) (string, bool) {
	for _, a := range authors {
		if rest, ok := strings.CutPrefix(line, a+": "); ok {
			return rest, true
		}
	}
	return line, false
}

// listItem returns the text of a Markdown list item line ("- x", "* x",
// "1. x"), or "".
func listItem(line string) string {
	if len(line) > 2 && strings.ContainsRune("-*+", rune(line[0])) && line[1] == ' ' {
		return strings.TrimSpace(line[2:])
	}
	if n := len(line) - len(strings.TrimLeft(line, "0123456789")); n > 0 && n+1 < len(line) && line[n] == '.' && line[n+1] == ' ' {
		return strings.TrimSpace(line[n+2:])
	}
	return ""
}

// codeLike reports whether text reads as code or configuration rather
// than prose: braces and operators, or many "key: value" pairs.
func codeLike(text string) bool {
	if strings.Contains(text, ":=") || strings.Count(text, ": ") >= 3 || strings.HasSuffix(text, "{") || strings.HasSuffix(text, ";") {
		return true
	}
	sym, all := 0, 0
	for _, r := range text {
		if unicode.IsSpace(r) {
			continue
		}
		all++
		if strings.ContainsRune("{}[]<>=|\\$^~*+&@", r) {
			sym++
		}
	}
	return all > 0 && sym*100 > all*5
}

// splitSentences cuts a line after ". ", "? " and "! ", keeping
// abbreviations such as "e.g. " whole.
func splitSentences(line string) []string {
	var out []string
	start := 0
	for i := 0; i+1 < len(line); i++ {
		c := line[i]
		if (c == '.' || c == '?' || c == '!') && line[i+1] == ' ' {
			word := line[strings.LastIndexByte(line[:i], ' ')+1 : i]
			if c == '.' && abbreviation(word) {
				continue
			}
			out = append(out, strings.TrimSpace(line[start:i+1]))
			start = i + 2
		}
	}
	if rest := strings.TrimSpace(line[start:]); rest != "" {
		out = append(out, rest)
	}
	return out
}

// abbreviation reports whether word, followed by ". ", is an abbreviation
// rather than a sentence end: letters with inner dots ("e.g", "i.e") or a
// common short form.
func abbreviation(word string) bool {
	switch strings.ToLower(word) {
	case "vs", "cf", "approx", "mr", "mrs", "dr", "no", "fig", "e.g", "i.e":
		return true
	}
	if !strings.Contains(word, ".") || len(word) > 6 {
		return false
	}
	for _, r := range word {
		if r != '.' && !unicode.IsLetter(r) {
			return false
		}
	}
	return true
}
