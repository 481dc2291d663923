package bench

import (
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"unicode"
	"unicode/utf8"
)

// Typo-injected queries (issue 23): the evaluation's queries with the
// slips a person makes typing them, to measure what typo tolerance wins
// back. Each query gets its own generator, seeded from the seed and the
// query's id, so adding or dropping queries changes no other query's typos.

// TypoMinLetters is the length a word needs to get a typo: shorter words
// are left alone, as a typo in them makes another word too easily.
const TypoMinLetters = 5

// TypoKind is a kind of typing slip, each one Damerau–Levenshtein edit.
type TypoKind uint8

const (
	TypoSubstitution  TypoKind = iota // a letter replaced by a neighbouring key
	TypoDeletion                      // a letter left out
	TypoTransposition                 // two adjacent letters swapped
	TypoInsertion                     // a neighbouring key or a doubled letter typed too
)

func (k TypoKind) String() string {
	return [...]string{"substitution", "deletion", "transposition", "insertion"}[k]
}

// TypoEdit is the typo made in one word of a query.
type TypoEdit struct {
	Word, Typo string
	Kind       TypoKind
	Pos        int // byte offset in Word of the letter substituted or deleted, the first swapped, or where a letter went in
}

// qwertyNeighbours are the letter keys around each letter key of a QWERTY
// keyboard: same row, and the rows above and below as they are staggered.
var qwertyNeighbours = map[byte]string{
	'q': "wa", 'w': "qeas", 'e': "wrsd", 'r': "etdf", 't': "ryfg",
	'y': "tugh", 'u': "yihj", 'i': "uojk", 'o': "ipkl", 'p': "ol",
	'a': "qwsz", 's': "adwezx", 'd': "sferxc", 'f': "dgrtcv", 'g': "fhtyvb",
	'h': "gjyubn", 'j': "hkuinm", 'k': "jliom", 'l': "kop",
	'z': "asx", 'x': "zcsd", 'c': "xvdf", 'v': "cbfg", 'b': "vngh", 'n': "bmhj", 'm': "njk",
}

// Typo returns query with typos in up to two of its words, as TypoQuery.
func Typo(id, query string, seed int64) string {
	s, _ := TypoQuery(id, query, seed)
	return s
}

// TypoQuery puts a typo in each of two words of query picked at random
// (or in its only one) among those of at least TypoMinLetters ASCII
// letters — a word is a run of letters and digits; words with digits or
// other letters are left alone — and returns the query and the edits, in
// the order of the words. Each typo is one edit of a kind drawn uniformly
// (TypoKind) at a uniformly drawn place in the word, its first letter
// included; inserted and substituted letters take the case of the letter
// they stand for, and nothing else of the query changes. The result
// depends only on id, query and seed.
func TypoQuery(id, query string, seed int64) (string, []TypoEdit) {
	h := fnv.New64a()
	h.Write([]byte(id))
	rng := rand.New(rand.NewPCG(uint64(seed), h.Sum64()))
	var eligible [][2]int // byte spans of the words that may get a typo
	for i := 0; i < len(query); {
		r, size := utf8.DecodeRuneInString(query[i:])
		if !isWordRune(r) {
			i += size
			continue
		}
		start, ascii := i, true
		for i < len(query) {
			r, size := utf8.DecodeRuneInString(query[i:])
			if !isWordRune(r) {
				break
			}
			ascii = ascii && isASCIILetter(r)
			i += size
		}
		if ascii && i-start >= TypoMinLetters {
			eligible = append(eligible, [2]int{start, i})
		}
	}
	if len(eligible) == 0 {
		return query, nil
	}
	picked := rng.Perm(len(eligible))[:min(2, len(eligible))]
	slices.Sort(picked)
	var out []byte
	var edits []TypoEdit
	last := 0
	for _, p := range picked {
		sp := eligible[p]
		e := typoWord(rng, query[sp[0]:sp[1]])
		out = append(append(out, query[last:sp[0]]...), e.Typo...)
		last = sp[1]
		edits = append(edits, e)
	}
	return string(append(out, query[last:]...)), edits
}

// TypoQueries returns the queries with typos (TypoQuery), ids unchanged.
func TypoQueries(qs []BEIRQuery, seed int64) []BEIRQuery {
	out := make([]BEIRQuery, len(qs))
	for i, q := range qs {
		out[i] = BEIRQuery{ID: q.ID, Text: Typo(q.ID, q.Text, seed)}
	}
	return out
}

// typoWord makes one typo in w, a word of ASCII letters, at least
// TypoMinLetters long.
func typoWord(rng *rand.Rand, w string) TypoEdit {
	n := len(w)
	for {
		e := TypoEdit{Word: w, Kind: TypoKind(rng.IntN(4))}
		switch e.Kind {
		case TypoSubstitution:
			e.Pos = rng.IntN(n)
			e.Typo = w[:e.Pos] + string(neighbourKey(rng, w[e.Pos])) + w[e.Pos+1:]
		case TypoDeletion:
			e.Pos = rng.IntN(n)
			e.Typo = w[:e.Pos] + w[e.Pos+1:]
		case TypoTransposition:
			var at []int // swapping equal letters would change nothing
			for i := 0; i+1 < n; i++ {
				if w[i] != w[i+1] {
					at = append(at, i)
				}
			}
			if len(at) == 0 {
				continue // "aaaaa": draw another kind
			}
			e.Pos = at[rng.IntN(len(at))]
			e.Typo = w[:e.Pos] + string(w[e.Pos+1]) + string(w[e.Pos]) + w[e.Pos+2:]
		case TypoInsertion:
			// A slip next to one of the letters either side of the gap:
			// that key again, or a key beside it.
			e.Pos = rng.IntN(n + 1)
			var c byte
			switch {
			case e.Pos == 0:
				c = w[0]
			case e.Pos == n:
				c = w[n-1]
			default:
				c = w[e.Pos-1+rng.IntN(2)]
			}
			if rng.IntN(2) == 1 {
				c = neighbourKey(rng, c)
			}
			e.Typo = w[:e.Pos] + string(c) + w[e.Pos:]
		}
		return e
	}
}

// neighbourKey is a key beside c's on a QWERTY keyboard, in c's case.
func neighbourKey(rng *rand.Rand, c byte) byte {
	nb := qwertyNeighbours[c|0x20]
	k := nb[rng.IntN(len(nb))]
	if c >= 'A' && c <= 'Z' {
		k &^= 0x20
	}
	return k
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

func isASCIILetter(r rune) bool { return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' }
