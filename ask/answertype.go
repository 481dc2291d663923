package ask

import (
	"regexp"
	"strings"
)

// The kind of answer a question expects, read from its wording: "how big"
// wants a quantity, "when" a time, "is it …?" a yes or a no, "why" a
// reason. A passage of that kind is likelier the answer than one sharing
// the same words without it ("Big payloads add up" against "payloads are
// limited to 1 MiB"), so it scores more (typeWeight) and counts as holding
// one more of the question's words.
type answerKind int

const (
	anyAnswer answerKind = iota
	quantityAnswer
	timeAnswer
	yesNoAnswer
	reasonAnswer
)

const typeWeight = 0.6 // × the question's most informative word's idf

var (
	quantityQuestion = regexp.MustCompile(`\b(how (big|large|many|much|long|often|fast|far|high|low|small)|max(imum)?|min(imum)?|limits?|lowest|highest|smallest|largest|biggest|default|what size|throughput|timeout|how soon)\b`)
	timeQuestion     = regexp.MustCompile(`^(when)\b|\b(release date|what date|which date|what time|which version|what version|since when)\b`)
	yesNoQuestion    = regexp.MustCompile(`^(can|could|is|are|does|do|did|should|will|would|has|have|must|may)\b`)
	reasonQuestion   = regexp.MustCompile(`^(why)\b|\b(what causes|how come|reason)\b`)

	quantityText = regexp.MustCompile(`\d`)
	timeText     = regexp.MustCompile(`(?i)\b(\d{4}-\d\d(-\d\d)?|january|february|march|april|may|june|july|august|september|october|november|december|next (week|month|release)|\d+\.\d+(\.\d+)?)\b`)
	yesNoText    = regexp.MustCompile(`(?i)^(yes|no|not|nope|yep|yeah|only|never|always)\b|\b(is|are) (not )?(allowed|supported|required|fine|safe|ok)\b|\b(isn't|aren't|doesn't|don't|cannot|can't|won't)\b`)
	reasonText   = regexp.MustCompile(`(?i)\b(because|since|so that|so the|otherwise|to avoid|to prevent|would|could|means|reason)\b`)
)

// askedKind reads the kind of answer a question expects from its last
// sentence that asks (the question of "We use X. Can Y?" is "Can Y?").
func askedKind(question string) answerKind {
	q := strings.ToLower(strings.TrimSpace(question))
	if last := lastQuestion(q); last != "" {
		q = last
	}
	switch {
	case reasonQuestion.MatchString(q):
		return reasonAnswer
	case timeQuestion.MatchString(q):
		return timeAnswer
	case quantityQuestion.MatchString(q):
		return quantityAnswer
	case yesNoQuestion.MatchString(q):
		return yesNoAnswer
	}
	return anyAnswer
}

// fits reports whether text is an answer of the kind.
func (k answerKind) fits(text string) bool {
	switch k {
	case quantityAnswer:
		return quantityText.MatchString(text)
	case timeAnswer:
		return timeText.MatchString(text)
	case yesNoAnswer:
		return yesNoText.MatchString(text)
	case reasonAnswer:
		return reasonText.MatchString(text)
	}
	return false
}
