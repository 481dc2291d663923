package ask

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/sift-search/sift/tokenizer"
)

// The extractive answerer answers without a language model: it picks the
// passages of the sources (passages.go) that share the most informative
// words with the question and joins them, each cited [n]. The question
// and the passages are read with British spellings made American and a
// few synonyms made one word (variants.go).
//
//	score(passage) = ( Σ idf(t) over the question's words t in its text
//	                 + askedWeight × Σ idf(t) over those only in the question it answers
//	                   (replyWeight in a chat message before it that asks nothing
//	                   and holds fewer than two of the question's informative words)
//	                 + listWeight × Σ idf(t) over those only in its list or table
//	                   (codeWeight in its code)
//	                 + headWeight × Σ idf(t) over those only in its heading
//	                 + typeWeight × max idf when it is the kind of answer asked for )
//	                 × a length factor (long passages hold more words by chance)
//	                 × chatWeight in a chat message (unless it replies to one that
//	                   holds two of the question's informative words), rowWeight
//	                   in a table row
//	                 + 0.5 × max idf × the source's search score
//	                 + rankWeight × max idf / the source's rank
//
// where idf(t) = ln(1 + S/(1 + s(t))) over the S candidate passages, s(t)
// of which hold t. An FAQ's answer shares few words with its question, so
// the question's words count for it. The best passages are taken while
// they score at least a third of the best, up to maxPicked passages or
// maxAnswerWords words, skipping one that repeats a picked one, or that
// holds none of the question's informative words (those in at most half
// of at least minCommonSample candidates: not the product's name, not
// "run" in a job scheduler's docs) — fewer than two after the first; the
// answer opens with the best one.
const (
	followers       = 2   // passages after the best one that come with it
	chatWeight      = 0.7 // chat answers less often than documentation
	askedWeight     = 0.8
	replyWeight     = 0.4 // a chat message's words answered by one that asks nothing
	listWeight      = 0.5
	codeWeight      = 0.25
	headWeight      = 0.3
	rowWeight       = 0.75 // a table row: reference more than answer
	rankWeight      = 0.5  // the sources' retrieval rank
	maxPicked       = 4
	minCommonSample = 20 // candidates needed to call a word common
	maxAnswerWords  = 110
	minWords        = 4
	maxWords        = 70
)

// questionFiller are the function words of questions. Other stop words
// ("twice", "first", "seconds") can carry a question, and the idf weights
// of the passages sort out the common ones.
var questionFiller = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a about after all also am an and any are as at be been before being but by can could
		did do does doing for from had has have having he her here his how i if in into is it its just me more most my no
		not of on or our out over should so some such than that the their them then there these they this those through
		to too under up very was we were what when where which while who whom why will with would you your`) {
		questionFiller[w] = true
	}
}

// NoAnswer is the extractive answer when no passage shares enough words
// with the question.
const NoAnswer = "Not found in the indexed content. The closest sources are listed with this answer."

// answerFrom composes the answer to question from a pool of sources in
// retrieval order, and returns it with the sources it keeps: those it
// cites, numbered in the order it cites them, then the best of the others,
// keep in all.
func answerFrom(question string, pool []Source, keep int) (string, []Source) {
	picked := choose(question, pool)
	if picked == nil {
		return NoAnswer, pool[:min(keep, len(pool))]
	}
	number := make([]int, len(pool)) // 0: not cited
	var kept []Source
	for _, c := range picked {
		if number[c.source] == 0 {
			kept = append(kept, pool[c.source])
			number[c.source] = len(kept)
		}
	}
	for i := range pool {
		if number[i] == 0 && len(kept) < keep {
			kept = append(kept, pool[i])
		}
	}
	return compose(picked, number), kept
}

// choose picks the passages of sources that answer question, in source
// order; nil when none does.
func choose(question string, sources []Source) []*passage {
	a := tokenizer.New(tokenizer.Options{Stem: true, StemCacheSize: 1024})
	want := map[string]bool{}
	word := map[string]int32{} // a term's word in the question: a compound's parts ("SQLite": sq, lite) are of it
	var whole tokenizer.Token
	for _, t := range a.Append(nil, americanize(question), 0) {
		if t.Flags&tokenizer.Stop != 0 && questionFiller[t.Term] {
			continue
		}
		want[t.Term] = true
		if t.Flags&tokenizer.Whole != 0 {
			whole = t
		}
		if _, ok := word[t.Term]; !ok {
			word[t.Term] = t.Start
			if t.Flags&tokenizer.Part != 0 && t.Start >= whole.Start && t.End <= whole.End {
				word[t.Term] = whole.Start
			}
		}
	}
	terms := func(text string) map[string]bool {
		out := map[string]bool{}
		for _, t := range a.Append(nil, americanize(text), 0) {
			if want[t.Term] {
				out[t.Term] = true
			}
		}
		return out
	}
	kind := askedKind(question)
	var cands []*passage
	for i, s := range sources {
		for _, p := range passages(i, s) {
			p.words = wordCount(p.text)
			if p.words > maxWords || p.words < minWords && p.lines == nil && p.question == "" {
				continue
			}
			p.block = p.shown(func(line string) bool { return len(terms(line)) > 0 })
			p.terms, p.asked, p.headed, p.listed = terms(p.text), terms(p.question), terms(p.heading), terms(p.block)
			p.matched = matched(word, nil, p.terms, p.asked, p.listed)
			if p.matched > 0 && kind.fits(p.text+"\n"+p.block) {
				p.fits = true
				p.matched++
			}
			cands = append(cands, &p)
		}
	}
	if len(want) == 0 || len(cands) == 0 {
		return nil
	}
	best, need, needStrong := score(cands, sources, want, word)
	if best == 0 {
		return nil
	}
	return pick(cands, best, need, needStrong)
}

// matched counts the words of the question that sets of its terms hold,
// of the terms in of (all when nil).
func matched(word map[string]int32, of map[string]bool, sets ...map[string]bool) int {
	seen := map[int32]bool{}
	for _, set := range sets {
		for t := range set {
			if of == nil || of[t] {
				seen[word[t]] = true
			}
		}
	}
	return len(seen)
}

// score scores the candidates and returns the best score and how many of
// the question's words a passage must hold (needStrong of its informative
// ones, for a passage after the first). The best must hold at least
// two of them (or the only one), as sharing one common word with the
// question is chance; the best score is 0 when none does.
func score(cands []*passage, sources []Source, want map[string]bool, word map[string]int32) (best float64, need, needStrong int) {
	df := map[string]int{}
	for _, c := range cands {
		for t := range want {
			if c.terms[t] || c.asked[t] || c.listed[t] {
				df[t]++
			}
		}
	}
	idf := func(t string) float64 { return math.Log(1 + float64(len(cands))/float64(1+df[t])) }
	maxIDF := 0.0
	for t := range want {
		maxIDF = max(maxIDF, idf(t))
	}
	// A word in most passages ("Wren" in a product's docs) is no sign of
	// an answer: matches count the others, if the question has any.
	// (A handful of passages is too few to tell.)
	informative := map[string]bool{}
	for t := range want {
		if 2*df[t] <= len(cands) {
			informative[t] = true
		}
	}
	if len(informative) == 0 || len(cands) < minCommonSample {
		informative = want
	}
	words, strong := map[int32]bool{}, map[int32]bool{}
	for t := range want {
		words[word[t]] = true
		if informative[t] {
			strong[word[t]] = true
		}
	}
	need = min(2, len(words))
	needStrong = min(2, len(strong))
	for _, c := range cands {
		c.strong = matched(word, informative, c.terms, c.asked, c.listed)
		if c.fits && c.strong > 0 {
			c.strong++
		}
		if c.matched < need {
			continue
		}
		// A chat message before it that holds two of the question's
		// informative words asks what the question asks, even without a
		// question mark ("our alert went to 2 for about 40s yesterday"),
		// and a reply to it is an answer like a document's.
		alike := matched(word, informative, c.asked) >= 2
		for t := range want {
			switch {
			case c.terms[t]:
				c.score += idf(t)
			case c.asked[t] && lastQuestion(c.question) == "" && !alike:
				c.score += replyWeight * idf(t)
			case c.asked[t]:
				c.score += askedWeight * idf(t)
			case c.listed[t] && c.code:
				c.score += codeWeight * idf(t)
			case c.listed[t]:
				c.score += listWeight * idf(t)
			case c.headed[t]:
				c.score += headWeight * idf(t)
			}
		}
		if c.fits {
			c.score += typeWeight * maxIDF
		}
		c.score /= 1 + 0.02*float64(max(0, c.words-25))
		if sources[c.source].Type == "message" && !alike {
			c.score *= chatWeight
		}
		if c.row {
			c.score *= rowWeight
		}
		c.score += 0.5*maxIDF*sources[c.source].Score + rankWeight*maxIDF/float64(1+c.source)
		best = max(best, c.score)
	}
	return best, need, needStrong
}

// pick takes the best passages, the best one with those after it, and
// returns them in the order the answer gives them: the best one and those
// after it first, then the others in source order.
func pick(cands []*passage, best float64, need, needStrong int) []*passage {
	ranked := slices.Clone(cands)
	slices.SortStableFunc(ranked, func(x, y *passage) int { return cmpFloat(y.score, x.score) })
	var picked []*passage
	words := 0
	for _, c := range ranked {
		if len(picked) >= maxPicked || c.score < best/3 || c.score == 0 {
			break
		}
		if c.matched < need || c.strong < min(len(picked)+1, needStrong) || words > 0 && words+c.size() > maxAnswerWords || repeats(c, picked) {
			continue
		}
		picked = append(picked, c)
		words += c.size()
		if len(picked) > 1 {
			continue
		}
		// The best passage brings the ones after it in its section (the
		// fix after the symptom), but not the next item of its list, while
		// they fit.
		for _, next := range cands {
			if next.source == c.source && next.section == c.section && (next.para == c.para || !c.item && !next.item) &&
				next.pos > c.pos && next.pos <= c.pos+followers &&
				len(picked) < maxPicked && words+next.size() <= maxAnswerWords/2+c.size() && !restates(next, picked) {
				picked = append(picked, next)
				words += next.size()
			}
		}
	}
	if len(picked) == 0 {
		return nil
	}
	// The answer opens with the best passage and those it brought; the
	// others follow in source order.
	lead := picked[0]
	group := func(c *passage) bool {
		return c == lead || c.source == lead.source && c.section == lead.section && c.pos > lead.pos
	}
	slices.SortStableFunc(picked, func(x, y *passage) int {
		switch gx, gy := group(x), group(y); {
		case gx != gy && gx:
			return -1
		case gx != gy:
			return 1
		case x.source != y.source:
			return x.source - y.source
		}
		return x.pos - y.pos
	})
	return picked
}

// size is the words a passage adds to the answer.
func (p *passage) size() int { return p.words + wordCount(p.block) }

// compose joins the passages, each cited by its source's number: "text
// [n]." within a line of prose, or "text [n]:" on a line of its own above
// its block.
func compose(picked []*passage, number []int) string {
	var b strings.Builder
	for _, c := range picked {
		text := strings.TrimRightFunc(c.text, unicode.IsSpace)
		end := ""
		if r, _ := utf8.DecodeLastRuneInString(text); strings.ContainsRune(".!?:;", r) {
			text, end = text[:len(text)-utf8.RuneLen(r)], string(r)
		}
		switch {
		case c.block != "":
			end = ":"
		case end == "" || end == ":" || end == ";":
			end = "."
		}
		switch {
		case b.Len() == 0:
		case c.block != "":
			b.WriteByte('\n')
		case !strings.HasSuffix(b.String(), "\n"):
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s [%d]%s", text, number[c.source], end)
		if c.block != "" {
			b.WriteString("\n" + c.block + "\n")
		}
	}
	return strings.TrimSpace(b.String())
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

// repeats reports whether c adds little to the picked passages: it
// restates one, or its question words are all those of a picked passage of
// its source. (Sharing the question's words with a passage of another
// source is not repeating it: "SQLite migrations run automatically" and
// "… because several nodes should not race on DDL" answer one question.)
func repeats(c *passage, picked []*passage) bool {
	for _, p := range picked {
		shared := 0
		for t := range c.terms {
			if p.terms[t] {
				shared++
			}
		}
		if shared == len(c.terms) && p.source == c.source && shared > 0 {
			return true
		}
	}
	return restates(c, picked)
}

// restates reports whether a sentence of c is the same or nearly as one of
// a picked passage (a document and a chat message quoting it).
func restates(c *passage, picked []*passage) bool {
	for _, p := range picked {
		for _, x := range c.sentences() {
			for _, y := range p.sentences() {
				if nearlySame(x, y) {
					return true
				}
			}
		}
	}
	return false
}

// sentences returns the word sets of a passage's sentences and block
// lines.
func (p *passage) sentences() []map[string]bool {
	var out []map[string]bool
	for _, line := range append([]string{p.text}, strings.Split(p.block, "\n")...) {
		for _, s := range splitSentences(line) {
			w := map[string]bool{}
			for _, f := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) }) {
				w[f] = true
			}
			if len(w) > 0 {
				out = append(out, w)
			}
		}
	}
	return out
}

// nearlySame reports whether two sentences' words are the same but for a
// few: all of them, four fifths of the longer's, or nine tenths of the
// shorter's when it has six or more (a sentence quoted in a longer one).
func nearlySame(a, b map[string]bool) bool {
	if len(a) > len(b) {
		a, b = b, a
	}
	shared := 0
	for w := range a {
		if b[w] {
			shared++
		}
	}
	return shared == len(b) || len(a) >= 3 && 5*shared >= 4*len(b) || len(a) >= 6 && 10*shared >= 9*len(a)
}

// cutAuthor strips the "name: " of a chat line by one of authors.
func cutAuthor(line string, authors []string) (rest, author string, ok bool) {
	for _, a := range authors {
		if rest, ok := strings.CutPrefix(line, a+": "); ok {
			return rest, a, true
		}
		if line == a+":" {
			return "", a, true
		}
	}
	return line, "", false
}

// listItem returns the text of a Markdown list item line ("- x", "* x",
// "1. x") or a chat bullet ("• x"), or "".
func listItem(line string) string {
	if len(line) > 2 && strings.ContainsRune("-*+", rune(line[0])) && line[1] == ' ' {
		return strings.TrimSpace(line[2:])
	}
	if rest, ok := strings.CutPrefix(line, "• "); ok {
		return strings.TrimSpace(rest)
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
