// Package training is when the built-in embedder trains, in every store:
// once the corpus has MinChunks chunks, again as it grows (Due), and not
// in the middle of a burst of writes unless the model is far behind
// (Waits).
package training

import "time"

const (
	MinChunks = 64     // the built-in embedder trains from this many chunks on
	eager     = 20_000 // below this many, it retrains at each quarter of growth; above, at each doubling
	// quiet is how long writes must pause before a due training starts:
	// during a bulk import the model would be outdated at once.
	quiet = time.Second
)

// Due reports whether the built-in embedder, trained on trained chunks,
// should train again with live ones: while the corpus is small, training
// is cheap and each quarter of growth changes the model; a large one
// retrains when it has doubled.
func Due(live, trained int) bool {
	switch {
	case live < MinChunks:
		return false
	case trained == 0:
		return true
	case trained < eager:
		return live-trained >= max(trained/4, MinChunks)
	}
	return live >= 2*trained
}

// Waits reports whether a due training should wait for writes, last made
// at lastWrite, to pause — unless the model is far behind the corpus.
func Waits(lastWrite time.Time, live, trained int) bool {
	if time.Since(lastWrite) >= quiet {
		return false
	}
	if trained == 0 {
		return live < 8*MinChunks
	}
	return live < 4*trained
}
