package tokenizer

import "testing"

// BenchmarkDetect: a chat message the stop-word vote settles, and one it
// leaves to the trigram detector.
func BenchmarkDetect(b *testing.B) {
	for name, text := range map[string]string{
		"vote":     "How do I configure the webhook signature for the staging server? It keeps failing since yesterday.",
		"trigrams": "Nattens sikkerhedskopiering fejler, fordi forbindelsen til lagerserveren bliver afbrudt.",
	} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Detect(text)
			}
		})
	}
}
