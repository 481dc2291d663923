package storetest

import "testing"

// Harness tells the suite how to get stores and what they can do.
type Harness struct {
	// Open returns a new, empty store; it registers its own clean-up
	// (closing, removing files) with t.
	Open func(t *testing.T) Store
	// Reopen, when set, shuts s down as a clean stop would and opens its
	// data again. Without it the restart tests are skipped.
	Reopen func(t *testing.T, s Store) Store
}

// Run runs the suite against stores made by open; the restart tests are
// skipped.
func Run(t *testing.T, open func(t *testing.T) Store) {
	RunHarness(t, Harness{Open: open})
}

// RunHarness runs the suite against the stores h makes. Every test gets
// a store of its own.
func RunHarness(t *testing.T, h Harness) {
	if h.Open == nil {
		t.Fatal("storetest: Harness.Open is nil")
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, h) })
	}
}

type test struct {
	name string
	fn   func(t *testing.T, h Harness)
}

// tests lists the suite; each holds one behaviour.
var tests = []test{
	// Sources.
	{"EmptyStoreHoldsUploads", testEmptyStore},
	{"PutSource", testPutSource},
	{"PutSourceInvalid", testPutSourceInvalid},
	{"CreateSourceDerivesID", testCreateSourceDerivesID},
	{"CreateSourceConflict", testCreateSourceConflict},
	{"CreateSourceUniqueUnderConcurrency", testCreateSourceConcurrent},
	{"UpdateSource", testUpdateSource},
	{"CursorRecords", testCursorRecords},
	{"SourceVersionCAS", testSourceVersionCAS},
	{"SourceReadsAreCopies", testSourceCopies},
	{"DeleteSourceCascades", testDeleteSourceCascades},
	{"DeleteSourceUnknownOrBuiltIn", testDeleteSourceErrors},

	// Channels and messages.
	{"PutChannelsSlugs", testChannelSlugs},
	{"PutChannelsInvalid", testChannelsInvalid},
	{"ChannelsListed", testChannelsListed},
	{"PutMessagesCounts", testPutMessagesCounts},
	{"PutMessagesInvalid", testPutMessagesInvalid},
	{"MessageFieldsRoundTrip", testMessageRoundTrip},
	{"ChannelMessagesTimeOrder", testChannelTimeOrder},
	{"ChannelMessagesPaging", testChannelPaging},
	{"DeleteMessages", testDeleteMessages},

	// Documents.
	{"DocumentIdentity", testDocumentIdentity},
	{"DocumentReplace", testDocumentReplace},
	{"DocumentsInvalid", testDocumentsInvalid},
	{"DocumentsPaging", testDocumentsPaging},
	{"DeleteDocument", testDeleteDocument},

	// Search.
	{"SearchAnalysis", testSearchAnalysis},
	{"SearchRanking", testSearchRanking},
	{"SearchTiesNewestFirst", testSearchTies},
	{"SearchDocumentTitles", testSearchTitles},
	{"SearchPhrases", testSearchPhrases},
	{"SearchExclusions", testSearchExclusions},
	{"SearchFilters", testSearchFilters},
	{"SearchFilterOnly", testSearchFilterOnly},
	{"SearchPaging", testSearchPaging},
	{"SearchHitFields", testSearchHitFields},
	{"SearchHighlights", testSearchHighlights},
	{"SearchInvalid", testSearchInvalid},
	{"SearchFollowsWrites", testSearchFollowsWrites},
	{"SuggestTitles", testSuggestTitles},
	{"SuggestInvalid", testSuggestInvalid},

	// Visibility and what an operator controls.
	{"VisibilityDefaults", testVisibilityDefaults},
	{"SlugsIgnorePrivate", testSlugsIgnorePrivate},
	{"VisibilityCounts", testVisibilityCounts},
	{"VisibilityChannelOverrides", testVisibilityOverrides},
	{"VisibilityDisabledSource", testVisibilityDisabled},
	{"VisibilityNewContent", testVisibilityNewContent},
	{"SetChannelVisibilityInvalid", testSetVisibilityInvalid},
	{"ExcludeChannelCascades", testExcludeChannel},
	{"RestoreChannel", testRestoreChannel},
	{"OptOutDeletesAndKeepsOut", testOptOut},
	{"OptOutRenamesThreads", testOptOutThreads},
	{"OptIn", testOptIn},
	{"Settings", testSettings},

	// Restart.
	{"ReopenKeepsEverything", testReopen},
	{"ReopenThenWrite", testReopenThenWrite},
}
