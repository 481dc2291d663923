package ask

import (
	"math"
	"unicode"
)

// EstimateTokens estimates how many tokens a model's tokenizer makes of s,
// without the model: a token per 4 ASCII characters (English averages
// about that), one per Han, Kana or Hangul character, and half a token for
// any other character (accented and non-Latin letters split into more
// pieces than ASCII). Sift budgets prompts with it and reports it as usage
// when the model server reports none.
func EstimateTokens(s string) int {
	var ascii, other float64
	for _, r := range s {
		switch {
		case r < 0x80:
			ascii++
		case unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul):
			other++
		default:
			other += 0.5
		}
	}
	return int(math.Ceil(ascii/4 + other))
}

// messageOverhead is what a chat message costs beyond its content (role
// and separators), in tokens.
const messageOverhead = 4
