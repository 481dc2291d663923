package httpapi

import (
	"cmp"
	"hash/fnv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/sift-search/sift/record"
)

// avatar is an author's initials on one of avatarColours colours chosen by
// their handle: every author keeps a colour, and no picture is fetched
// from anywhere.
type avatar struct {
	Initials string
	Colour   int // the class av{Colour} of style.css
}

// avatarColours is how many avatar colours style.css defines (.av0…).
const avatarColours = 12

// displayName is the name a message's author is shown by.
func displayName(m *record.Message) string { return cmp.Or(m.AuthorName, m.Author) }

func avatarOf(m *record.Message) avatar {
	h := fnv.New32a()
	h.Write([]byte(m.Author))
	return avatar{Initials: initials(displayName(m)), Colour: int(h.Sum32() % avatarColours)}
}

// initials are the first letters of a name's first two words ("Marta
// Vos" → "MV", "ana.k" → "AK", "zeph" → "Z"), or "?" for a name without
// letters or digits.
func initials(name string) string {
	var out []rune
	for _, w := range strings.FieldsFunc(name, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		r, _ := utf8.DecodeRuneInString(w)
		if out = append(out, unicode.ToUpper(r)); len(out) == 2 {
			break
		}
	}
	if len(out) == 0 {
		return "?"
	}
	return string(out)
}
