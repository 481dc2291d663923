// Package bounds defines, once, the bounds of the parameters that the
// HTTP API's search, ask and reading endpoints and the MCP tools (agent)
// share: the handlers check them, the tools' input schemas state them,
// and the OpenAPI test holds the specification to them. It imports
// nothing but query, whose paging bounds it repeats by name.
package bounds

import "github.com/sift-search/sift/query"

// Int is an integer parameter's range and its default when absent.
type Int struct{ Min, Max, Default int }

// Integer parameters.
var (
	SearchLimit      = Int{1, query.MaxSearchLimit, 20}
	SearchOffset     = Int{0, query.MaxSearchOffset, 0}
	SemanticLimit    = Int{1, 20, 10}
	SemanticMaxChars = Int{200, 10000, 2000}
	ReadOffset       = Int{0, 1 << 30, 0} // characters
	ReadLength       = Int{1, 100000, 20000}
	ReadLimit        = Int{1, 200, 50} // messages
)

// Text parameters, in bytes unless said otherwise.
const (
	QueryBytes    = query.MaxQueryBytes
	NameBytes     = 256   // a source id, channel slug, author or document reference
	AnchorBytes   = 256   // read_channel's around, before and after
	QuestionChars = 4000  // characters
	HistoryItems  = 100   // accepted; the model sees the last ask.MaxTurns
	TurnChars     = 16000 // characters
)
