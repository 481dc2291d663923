package ask

import (
	"regexp"
	"strings"

	"github.com/sift-search/sift/query"
)

// Spelling variants. A question asks about the "license" where the FAQ
// says "licence", "optimize" where the docs say "optimise". The answerer
// reads both the question and the passages with British spellings made
// American (so that they share their terms), and the retrieval query
// carries the other spelling of each word that has one. The same reading
// takes a few common words of questions to the word documentation uses
// for them: "how big" is asked of what is "large", "the biggest" of the
// "maximum".

// synonyms are the groups of question words read as one, the first.
var synonyms = map[string]string{}

func init() {
	for _, group := range []string{"large big huge", "larger bigger", "maximum max largest biggest highest",
		"minimum min smallest lowest", "delete remove erase", "deleted removed erased", "deleting removing erasing",
		"allowed permitted", "start begin launch", "fast quick", "often frequently", "check verify validate", "checks verifies validates", "checked verified validated", "checking verifying validating"} {
		words := strings.Fields(group)
		for _, w := range words[1:] {
			synonyms[w] = words[0]
		}
	}
}

// spellings pairs British and American spellings that no rule derives.
var spellings = map[string]string{}

func init() {
	for _, pair := range strings.Fields(`licence:license licenced:licensed licences:licenses colour:color colours:colors
		behaviour:behavior behaviours:behaviors favour:favor favourite:favorite honour:honor labour:labor
		neighbour:neighbor centre:center centres:centers metre:meter litre:liter fibre:fiber catalogue:catalog
		catalogues:catalogs dialogue:dialog dialogues:dialogs analogue:analog defence:defense offence:offense
		grey:gray programme:program programmes:programs cancelled:canceled cancelling:canceling
		modelled:modeled modelling:modeling labelled:labeled labelling:labeling signalled:signaled
		travelled:traveled travelling:traveling fulfil:fulfill enrol:enroll judgement:judgment ageing:aging
		artefact:artifact artefacts:artifacts whilst:while amongst:among towards:toward
		analyse:analyze analysed:analyzed analyses:analyzes analysing:analyzing paralyse:paralyze
		catalyse:catalyze`) {
		uk, us, _ := strings.Cut(pair, ":")
		spellings[uk] = us
	}
}

// notIze are words in -ise that have no -ize spelling.
var notIze = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`advertise advise arise chastise comprise compromise concise demise despise devise
		disguise enterprise excise exercise expertise franchise improvise incise merchandise premise precise promise
		raise revise rise supervise surmise surprise televise treatise noise praise paradise cruise bruise poise
		reprise appraise apprise circumcise`) {
		notIze[w] = true
	}
}

// iseWord is a word with an -ise suffix: organise, organised, organisation…
var iseWord = regexp.MustCompile(`^([a-z]{3,})is(e|es|ed|ing|ation|ations|er|ers)$`)

// american returns the American spelling of a lowercase word, or the word.
func american(w string) string {
	if us, ok := spellings[w]; ok {
		return us
	}
	m := iseWord.FindStringSubmatch(w)
	if m == nil || strings.HasSuffix(m[1], "w") {
		return w // "otherwise", "likewise"
	}
	if notIze[m[1]+"ise"] {
		return w
	}
	return m[1] + "iz" + m[2]
}

var letters = regexp.MustCompile(`[A-Za-z]+`)

// americanize makes the British spellings of text American and its
// synonyms one word, for matching (those words come out in lower case).
func americanize(text string) string {
	var b strings.Builder
	last := 0
	for _, m := range letters.FindAllStringIndex(text, -1) {
		w := text[m[0]:m[1]]
		if inIdentifier(text, m[0], m[1]) {
			continue // max_attempts, wren.yaml
		}
		l := strings.ToLower(w)
		l = american(l)
		if s, ok := synonyms[l]; ok {
			l = s
		}
		if l != strings.ToLower(w) {
			b.WriteString(text[last:m[0]])
			b.WriteString(l)
			last = m[1]
		}
	}
	if last == 0 {
		return text
	}
	b.WriteString(text[last:])
	return b.String()
}

// inIdentifier reports whether the word text[i:j] is part of an
// identifier: joined to more by "_", ".", "-" or "/" or a digit.
func inIdentifier(text string, i, j int) bool {
	joins := func(c byte) bool { return c == '_' || c == '.' || c == '-' || c == '/' || c >= '0' && c <= '9' }
	return i > 0 && joins(text[i-1]) || j < len(text) && joins(text[j]) && (text[j] != '.' || j+1 < len(text) && text[j+1] != ' ')
}

// british is the reverse of spellings: the British spelling of an
// American word that has one.
var british = map[string]string{}

func init() {
	for uk, us := range spellings {
		british[us] = uk
	}
}

// otherSpellings returns the other spelling of each word of text that has
// one, to be searched with it ("license" → "licence").
func otherSpellings(text string) []string {
	var out []string
	seen := map[string]bool{}
	for _, w := range letters.FindAllString(text, -1) {
		l := strings.ToLower(w)
		other := american(l)
		if other == l {
			if uk, ok := british[l]; ok {
				other = uk
			} else if m := izeWord.FindStringSubmatch(l); m != nil && american(m[1]+"is"+m[2]) == l {
				other = m[1] + "is" + m[2]
			}
		}
		if other != l && !seen[other] {
			seen[other] = true
			out = append(out, other)
		}
	}
	return out
}

var izeWord = regexp.MustCompile(`^([a-z]{3,})iz(e|es|ed|ing|ation|ations|er|ers)$`)

// TypoFixes returns an Options.Correct that corrects a question's words
// as a full-text search of store matches them with typos: each word found
// in no record the caller may see, but found with typos, becomes the word
// it was most often matched as.
func TypoFixes(store interface {
	Search(query.SearchRequest) (*query.SearchResult, error)
}) func(question string, private bool) map[string]string {
	return func(question string, private bool) map[string]string {
		res, err := store.Search(query.SearchRequest{Query: question, Limit: 1, Private: private})
		if err != nil {
			return nil // a question need not parse as a query
		}
		fixes := map[string]string{}
		for _, c := range res.Corrections {
			if len(c.Matches) > 0 {
				fixes[c.Word] = c.Matches[0]
			}
		}
		return fixes
	}
}

// corrected replaces the misspelled words of question (lower case, as
// full-text search folds them) by their corrections, matching whole words
// without regard to case.
func corrected(question string, fixes map[string]string) string {
	if len(fixes) == 0 {
		return question
	}
	return words.ReplaceAllStringFunc(question, func(w string) string {
		if fix, ok := fixes[strings.ToLower(w)]; ok && fix != "" {
			return fix
		}
		return w
	})
}

var words = regexp.MustCompile(`[\pL\pN]+`)
