package ask

import (
	"slices"
	"testing"
)

func TestAmerican(t *testing.T) {
	for w, want := range map[string]string{
		"licence": "license", "organise": "organize", "organisation": "organization", "serialised": "serialized",
		"optimising": "optimizing", "colour": "color", "analyse": "analyze",
		"otherwise": "otherwise", "exercise": "exercise", "promised": "promised", "raise": "raise", "wise": "wise",
		"precise": "precise", "license": "license", "noise": "noise", "house": "house", "enterprises": "enterprises",
	} {
		if got := american(w); got != want {
			t.Errorf("american(%q) = %q, want %q", w, got, want)
		}
	}
	if got := americanize("What Licence? It's organised."); got != "What license? It's organized." {
		t.Errorf("americanize: %q", got)
	}
}

func TestOtherSpellings(t *testing.T) {
	f := func(text string, want ...string) {
		t.Helper()
		if got := otherSpellings(text); !slices.Equal(got, want) {
			t.Errorf("otherSpellings(%q) = %q, want %q", text, got, want)
		}
	}
	f("What license is Wren released under?", "licence")
	f("the licence", "license")
	f("How do I optimize the serialised cache?", "optimise", "serialized")
	f("What is the exercise for otherwise?")
}
