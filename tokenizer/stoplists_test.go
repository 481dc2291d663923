package tokenizer

import (
	"strings"
	"testing"
)

func TestStopListsWellFormed(t *testing.T) {
	want := map[string][]string{
		"da": {"og", "ikke", "på"},
		"de": {"und", "nicht", "über"},
		"es": {"el", "que", "también"},
		"fi": {"ja", "ei", "että"},
		"fr": {"le", "et", "êtes"},
		"hu": {"és", "hogy", "nem"},
		"it": {"il", "che", "perché"},
		"nl": {"de", "en", "niet"},
		"no": {"og", "ikke", "på"},
		"pt": {"de", "não", "você"},
		"ro": {"și", "şi", "este"},
		"ru": {"и", "не", "что"},
		"sv": {"och", "inte", "på"},
		"tr": {"ve", "bir", "için"},
	}
	if len(stopLists) != len(want) {
		t.Errorf("%d lists, want %d", len(stopLists), len(want))
	}
	for lang, list := range stopLists {
		words := strings.Fields(list)
		if len(words) < 50 {
			t.Errorf("%s: only %d words", lang, len(words))
		}
		seen := map[string]bool{}
		for _, w := range words {
			if w != strings.ToLower(w) {
				t.Errorf("%s: %q is not lower case", lang, w)
			}
			if seen[w] {
				t.Errorf("%s: %q twice", lang, w)
			}
			seen[w] = true
		}
		set := StopWordsFor(lang)
		if len(set) != len(words) {
			t.Errorf("%s: set of %d, list of %d", lang, len(set), len(words))
		}
		if _, ok := want[lang]; !ok {
			t.Errorf("%s: unexpected list", lang)
		}
	}
	for lang, ws := range want {
		set := StopWordsFor(lang)
		for _, w := range ws {
			if !set[w] {
				t.Errorf("%s: %q missing", lang, w)
			}
		}
	}
}

func TestStopWordsForUnknown(t *testing.T) {
	for _, lang := range []string{"", "en", "xx", "DE"} {
		if s := StopWordsFor(lang); s != nil {
			t.Errorf("%q: %d words, want nil", lang, len(s))
		}
	}
	if StopWordsFor("ru")["сервер"] {
		t.Error("ru: a content word is a stop word")
	}
}
