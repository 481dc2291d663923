package tokenizer

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestDetect(t *testing.T) {
	for text, want := range map[string]string{
		"Der Server startet nicht, weil die Datenbankverbindungen fehlschlagen.": "de",
		"Le serveur ne démarre pas après la mise à jour des réseaux.":            "fr",
		"ok thanks": "",
		"How do I configure the webhook signature?":                                                "",
		"Сервер не запускается после обновления серверов":                                          "ru",
		"Yeni sürümden sonra sunucularda bellek kullanımı sürekli artıyor.":                        "tr",
		"A szerver naplókban hibák vannak, de a mentés lefutott":                                   "hu",
		"L'aggiornamento del sistema operativo si blocca al 40% e la macchina non si riavvia più.": "it",
		"한국어 텍스트": "",
	} {
		if got := Detect(text); got != want {
			t.Errorf("Detect(%q) = %q, want %q", text, got, want)
		}
	}
}

func TestTermIn(t *testing.T) {
	a := New(DefaultOptions())
	for _, c := range []struct{ word, lang, term string }{
		{"Datenbankverbindungen", "de", "datenbankverbind"},
		{"Datenbankverbindung", "de", "datenbankverbind"},
		{"серверов", "ru", "сервер"},
		{"réseaux", "fr", "reseau"},
		{"l'aggiornamento", "it", "aggiorn"},
		{"sunucularda", "tr", "sunucu"},
		{"signatures", "", "signatur"},
		{"signatures", "xx", "signatur"}, // no stemmer: the default analysis
	} {
		if got, _ := a.TermIn(c.word, c.lang); got != c.term {
			t.Errorf("TermIn(%q, %q) = %q, want %q", c.word, c.lang, got, c.term)
		}
	}
	if _, stop := a.TermIn("und", "de"); !stop {
		t.Error("und is a German stop word")
	}
	if a.Language() != "" {
		t.Errorf("TermIn left the analyzer in %q", a.Language())
	}
}

// FuzzDetect: any text gets a language of Languages() or none, without a
// panic, and analysing it in that language yields valid terms.
func FuzzDetect(f *testing.F) {
	f.Add("Der Server startet nicht")
	f.Add("l'aggiornamento d’accord qu'")
	f.Add("Сервер ı ğ ß ø")
	f.Add(strings.Repeat("é", 3000))
	f.Fuzz(func(t *testing.T, text string) {
		lang := Detect(text)
		if lang != "" && !Stemmed(lang) {
			t.Fatalf("Detect(%q) = %q", text, lang)
		}
		a := New(DefaultOptions())
		a.SetLanguage(lang)
		for _, tok := range a.Append(nil, text, 0) {
			if tok.Term == "" || !utf8.ValidString(tok.Term) || tok.Start < 0 || int(tok.End) > len(text) || tok.Start > tok.End {
				t.Fatalf("%q in %q: token %+v", text, lang, tok)
			}
		}
	})
}
