package tokenizer

// stopWords are English function words. They are indexed (phrases such as
// "to be or not to be" must match) but a query ignores them for ranking unless
// it holds nothing else. The list is NLTK's English list, which is also the
// Snowball project's, plus common contractions. Keys are folded forms.
var stopWords = func() map[string]struct{} {
	words := []string{
		"a", "about", "above", "after", "again", "against", "all", "am", "an", "and",
		"any", "are", "as", "at", "be", "because", "been", "before", "being", "below",
		"between", "both", "but", "by", "can", "could", "did", "do", "does", "doing",
		"down", "during", "each", "few", "for", "from", "further", "had", "has",
		"have", "having", "he", "her", "here", "hers", "herself", "him", "himself",
		"his", "how", "i", "if", "in", "into", "is", "it", "its", "itself", "just",
		"me", "more", "most", "my", "myself", "no", "nor", "not", "now", "of", "off",
		"on", "once", "only", "or", "other", "ought", "our", "ours", "ourselves",
		"out", "over", "own", "same", "she", "should", "so", "some", "such", "than",
		"that", "the", "their", "theirs", "them", "themselves", "then", "there",
		"these", "they", "this", "those", "through", "to", "too", "under", "until",
		"up", "very", "was", "we", "were", "what", "when", "where", "which", "while",
		"who", "whom", "why", "will", "with", "would", "you", "your", "yours",
		"yourself", "yourselves",
		"aren't", "can't", "couldn't", "didn't", "doesn't", "don't", "hadn't",
		"hasn't", "haven't", "he's", "i'd", "i'll", "i'm", "i've", "isn't", "it's",
		"let's", "she's", "shouldn't", "that's", "there's", "they're", "wasn't",
		"we're", "weren't", "what's", "won't", "wouldn't", "you'd", "you'll",
		"you're", "you've",
	}
	m := make(map[string]struct{}, len(words))
	for _, w := range words {
		m[w] = struct{}{}
	}
	return m
}()

// IsStopWord reports whether the folded word w is a stop word.
func IsStopWord(w string) bool {
	_, ok := stopWords[w]
	return ok
}
