// Package tokenizer turns text into index terms.
//
// Words are runs of letters, digits and marks of any script; Han, Hiragana and
// Katakana runs, written without spaces, become overlapping character bigrams.
// Terms are lower-cased with Latin, Greek and Cyrillic diacritics removed, and
// English words are stemmed with the Snowball (Porter2) stemmer. Code
// identifiers — getUserById, snake_case_name, pkg.Func, path/to/file.go — are
// indexed whole and as their parts, so both the exact identifier and its words
// match. Stop words are kept, flagged, so phrases match while ranking can
// ignore them. The package imports nothing from the rest of Sift.
package tokenizer
