// Package record is the vocabulary every store shares: sources, channels,
// messages and documents, their ids and slugs, the validation and limits
// every write obeys, the errors stores return, the visibility rule and the
// rules of the instance's settings. A store (engine, wvstore) validates
// and normalises records with these functions, so records compare equal
// whichever store holds them. It imports no store and no HTTP package.
package record
