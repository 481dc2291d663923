// Package engine is Sift's in-memory store: sources, channels, messages and
// documents, their inverted indexes, and the write-ahead log and snapshots
// that make them durable.
//
// Every mutation is encoded, appended to the write-ahead log and applied to
// memory, in that order, under a single writer lock; it returns once the log
// is synced, so an acknowledged write survives a crash. Searches take only a
// read lock, and long writes are applied in short batches, so a query never
// waits behind a bulk import. Snapshots serialise the whole state (records
// and indexes) while holding off writers but not readers.
//
// It also keeps the insights table (insights.go): counts of what people
// search and ask, rows the insights package aggregates and the engine only
// persists, guarded by the writer lock alone.
//
// engine imports tokenizer and ann, never httpapi or crawl.
package engine
