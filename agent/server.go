// Package agent is Sift's Model Context Protocol server: the tools an AI
// agent calls to search, ask and read what Sift holds. NewServer registers
// them over a Backend, which does the work: httpapi's runs in the server
// process (POST /mcp), cmd/sift's calls a server's HTTP API (`sift mcp`
// over stdio). Tool arguments mirror the HTTP API's parameters, with the
// same bounds; a Backend checks them, so bad input gets the HTTP API's own
// words, as a tool error (never a protocol error or a crash).
package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	apibounds "github.com/sift-search/sift/httpapi/bounds"
)

// Backend answers the tools. Each method returns the HTTP API's message
// for bad arguments as its error.
type Backend interface {
	Search(ctx context.Context, a SearchArgs) (*SearchResult, error)
	SemanticSearch(ctx context.Context, a SemanticArgs) (*SemanticResult, error)
	Ask(ctx context.Context, a AskArgs) (*AskResult, error)
	ReadDocument(ctx context.Context, a ReadDocumentArgs) (*DocumentWindow, error)
	ReadChannel(ctx context.Context, a ReadChannelArgs) (*ChannelWindow, error)
	ListSources(ctx context.Context, a ListSourcesArgs) (*SourceList, error)
}

// bounds of the integer arguments, per tool: the HTTP API's, defined
// once in httpapi/bounds.
var bounds = map[string]map[string]apibounds.Int{
	"search":          {"limit": apibounds.SearchLimit, "offset": apibounds.SearchOffset},
	"semantic_search": {"limit": apibounds.SemanticLimit, "max_chars": apibounds.SemanticMaxChars},
	"read_document":   {"offset": apibounds.ReadOffset, "length": apibounds.ReadLength},
	"read_channel":    {"limit": apibounds.ReadLimit},
}

// NewServer returns an MCP server with Sift's tools over b.
func NewServer(b Backend, version string) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "sift", Title: "Sift search", Version: version}, &mcp.ServerOptions{
		Instructions: "Sift indexes a community's chat channels, documents and web pages. " +
			"Find things with search (exact words, filters) or semantic_search (meaning); read more with read_document and read_channel; " +
			"ask answers a question from the sources with numbered citations. Cite the url of what you use.",
	})
	addTool(s, &mcp.Tool{Name: "search", Title: "Full-text search",
		Description: "Full-text (BM25) search over chat messages and documents. Returns two ranked lists, messages and documents, " +
			"each hit with a snippet around the matches (marked **like this**) and a url to cite. Query syntax: free words are ranked, any may match and hits holding more of them come first " +
			"(stemmed; code identifiers such as maxOpenConns or max_open_conns also match as their parts), \"a quoted phrase\" must occur " +
			"as written, -word and -\"a phrase\" exclude. Filters: source (id), channel (slug), from (author), after/before (dates). " +
			"Read a whole document with read_document (slug), a conversation with read_channel (channelSlug, around = id).",
	}, b.Search, nil)
	addTool(s, &mcp.Tool{Name: "semantic_search", Title: "Semantic search",
		Description: "Search by meaning: ranks document sections and conversation stretches by embedding similarity fused with BM25, " +
			"so questions in plain words and exact identifiers both work. Each result carries the passage (cut to max_chars) " +
			"and a url that locates it. Use hyde=false for exact phrases or code identifiers.",
	}, b.SemanticSearch, nil)
	addTool(s, &mcp.Tool{Name: "ask", Title: "Ask a question",
		Description: "Answers a question from the indexed content (retrieval-augmented), citing numbered sources [n] with their links. " +
			"Pass earlier turns in messages for a follow-up question. Slower than searching: prefer search or semantic_search " +
			"when you want to read the sources yourself.",
	}, b.Ask, askText)
	addTool(s, &mcp.Tool{Name: "read_document", Title: "Read a document",
		Description: "Reads a document by id or slug, a window of length characters from offset; a long document is read in pages: " +
			"call again with offset = nextOffset until nextOffset is null.",
	}, func(ctx context.Context, a ReadDocumentArgs) (*DocumentWindow, error) {
		if a.Document == "" {
			return nil, errors.New("document is required: a document's id or slug")
		}
		return b.ReadDocument(ctx, a)
	}, nil)
	addTool(s, &mcp.Tool{Name: "read_channel", Title: "Read a conversation",
		Description: "Reads a channel's messages in time order: around a message id or a time (the context of a search hit), " +
			"before or after one (page back or on; both: between them), or, with none of these, the latest. " +
			"hasBefore/hasAfter tell whether there is more.",
	}, func(ctx context.Context, a ReadChannelArgs) (*ChannelWindow, error) {
		if a.Channel == "" {
			return nil, errors.New("channel is required: a channel's slug")
		}
		return b.ReadChannel(ctx, a)
	}, nil)
	addTool(s, &mcp.Tool{Name: "list_sources", Title: "List sources",
		Description: "Lists the indexed sources (chat platforms, document collections, web sites) with their ids, counts and channels " +
			"(slug and name), for search filters, semantic_search boosts and read_channel.",
	}, b.ListSources, nil)
	return s
}

// addTool registers a tool whose arguments are In: its input schema is
// In's with the HTTP API's bounds, its output schema Out's. Its text
// content is text(out), or with text nil the result's JSON. The arguments
// are decoded here and checked by call, so bad input gets the HTTP API's
// words rather than a schema validator's.
func addTool[In, Out any](s *mcp.Server, t *mcp.Tool, call func(context.Context, In) (Out, error), text func(Out) string) {
	in, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("BUG: schema of %s: %v", t.Name, err))
	}
	applyBounds(t.Name, in)
	t.InputSchema = in
	out, err := jsonschema.For[Out](nil)
	if err != nil {
		panic(fmt.Sprintf("BUG: output schema of %s: %v", t.Name, err))
	}
	out.Type, out.Types = "object", nil // Out is a pointer, never nil: an object
	t.OutputSchema = out
	t.Annotations = &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: new(false)}
	s.AddTool(t, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var args In
		if err := decodeArgs(t.Name, req.Params.Arguments, &args); err != nil {
			return toolError(err), nil
		}
		out, err := call(ctx, args)
		if err != nil {
			return toolError(err), nil
		}
		structured, err := json.Marshal(out)
		if err != nil {
			return nil, fmt.Errorf("encode %s result: %w", t.Name, err)
		}
		txt := string(structured)
		if text != nil {
			txt = text(out)
		}
		return &mcp.CallToolResult{
			Content:           []mcp.Content{&mcp.TextContent{Text: txt}},
			StructuredContent: json.RawMessage(structured),
		}, nil
	})
}

func toolError(err error) *mcp.CallToolResult {
	var r mcp.CallToolResult
	r.SetError(err)
	return &r
}

// applyBounds writes the HTTP API's bounds into a tool's input schema.
func applyBounds(tool string, s *jsonschema.Schema) {
	for name, b := range bounds[tool] {
		p := s.Properties[name]
		if p == nil {
			panic(fmt.Sprintf("BUG: %s has no argument %s", tool, name))
		}
		p.Minimum, p.Maximum = new(float64(b.Min)), new(float64(b.Max))
		p.Default = json.RawMessage(fmt.Sprint(b.Default))
	}
	str := func(name string, minLen, maxLen int) {
		if p := s.Properties[name]; p != nil {
			p.MinLength, p.MaxLength = new(minLen), new(maxLen)
		}
	}
	switch tool {
	case "search", "semantic_search":
		str("q", 1, apibounds.QueryBytes)
		if tool == "semantic_search" {
			s.Properties["hyde"].Default = json.RawMessage("true")
		}
	case "ask":
		str("question", 1, apibounds.QuestionChars)
		h := s.Properties["messages"]
		h.MaxItems = new(apibounds.HistoryItems)
		turn := h.Items
		turn.Properties["role"].Enum = []any{"user", "assistant"}
		turn.Properties["content"].MaxLength = new(apibounds.TurnChars)
	case "read_document":
		str("document", 1, apibounds.NameBytes)
	case "read_channel":
		str("channel", 1, apibounds.NameBytes)
	}
}

// decodeArgs decodes a tool's arguments into v. A value of the wrong type
// is named with its bounds, as the HTTP API names a malformed parameter.
func decodeArgs(tool string, raw json.RawMessage, v any) error {
	if len(raw) == 0 || string(raw) == "null" {
		raw = json.RawMessage("{}")
	}
	err := json.Unmarshal(raw, v)
	var te *json.UnmarshalTypeError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &te) && te.Field != "":
		name := te.Field
		if b, ok := bounds[tool][name]; ok {
			return fmt.Errorf("%s must be an integer from %d to %d", name, b.Min, b.Max)
		}
		return fmt.Errorf("%s: expected %s, got a JSON %s", name, jsonKind(te.Type.Kind().String()), te.Value)
	default:
		return fmt.Errorf("arguments: not a JSON object of %s's arguments: %v", tool, err)
	}
}

func jsonKind(goKind string) string {
	switch {
	case goKind == "string":
		return "a string"
	case goKind == "bool":
		return "true or false"
	case strings.HasPrefix(goKind, "int"), strings.HasPrefix(goKind, "float"):
		return "a number"
	case goKind == "slice":
		return "an array"
	case goKind == "struct":
		return "an object"
	}
	return goKind
}

// askText is an answer followed by its numbered sources and their links.
func askText(r *AskResult) string {
	var b strings.Builder
	b.WriteString(strings.TrimSpace(r.Answer))
	if len(r.Sources) > 0 {
		b.WriteString("\n\nSources:")
		for _, s := range r.Sources {
			fmt.Fprintf(&b, "\n[%d] %s — %s", s.N, s.Metadata, s.URL)
		}
	}
	return b.String()
}
