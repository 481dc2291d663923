package engine

import "time"

// What another store needs to treat records as this one does: the same
// validation, copies, ids and time precision (docs/store.md).

// CheckSource validates a source as PutSource does and normalises it in
// place (its own config, crawl and import records, times to microseconds).
func CheckSource(s *Source) error { return checkSource(s) }

// CopySource returns a deep copy of s.
func CopySource(s *Source) Source { return copySource(s) }

// SourceIDBase is the id CreateSource derives from a name before making it
// unique with FirstFree.
func SourceIDBase(name string) string { return sourceIDBase(name) }

// FirstFree returns base, or else the first of base-2, base-3… that taken
// does not report.
func FirstFree(base string, taken func(string) bool) string { return firstFree(base, taken) }

// ExactTime cuts t to the microseconds the store keeps.
func ExactTime(t time.Time) time.Time { return exactTime(t) }
