// Package query is the search vocabulary every store shares: the query
// language (ParseQuery, SplitQuery), the search and suggestion requests,
// the hits and results a store answers with, and the suggestion rules
// (ParseSuggest, MatchTitle, MergeSuggestions). A store runs a request its
// own way but parses, bounds and answers it in these terms. It imports no
// store and no HTTP package.
package query
