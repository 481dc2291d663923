// Package storetest is the conformance suite of Sift's store: what any
// implementation of the store (the in-memory engine, a Weaviate-backed
// store) must do, stated through the Store interface and checked by Run.
//
// The suite covers writes and their validation, deletes and their
// cascades (a source takes its channels, messages and documents along; an
// excluded channel its threads and messages; an opted-out author their
// messages), what callers without credentials see, full-text search
// semantics (analysis, ranking order, phrases, exclusions, filters,
// paging, totals, highlights), settings, and, when the harness can reopen
// a store, that everything acknowledged survives a restart. It asserts
// orders, presence and counts, never scores or other figures only one
// implementation gives.
//
// A store runs the suite from a test of its own package:
//
//	func TestConformance(t *testing.T) {
//		storetest.RunHarness(t, storetest.Harness{
//			Open:   func(t *testing.T) storetest.Store { ... a new, empty store ... },
//			Reopen: func(t *testing.T, s storetest.Store) storetest.Store { ... },
//		})
//	}
//
// Errors are compared with errors.Is against record.ErrNotFound and
// record.ErrInvalid, so another store wraps those sentinels.
package storetest
