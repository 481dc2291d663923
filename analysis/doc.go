// Package analysis turns text into index terms the way every store does:
// the analyzer records are indexed with (Analyzer, IndexTerms), a query
// compiled into terms, phrases and exclusions (CompileSearch), the test of
// phrases on a store's candidates (CompiledSearch.Match, PhraseScore) and
// the highlighted snippets of hits. Two stores that use it find the same
// records for a query and mark the same words. It imports no store and no
// HTTP package; the tokenizer does the language work.
package analysis
