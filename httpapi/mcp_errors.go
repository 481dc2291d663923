package httpapi

import (
	"bytes"
	"encoding/json"
	"mime"
	"strings"

	"github.com/valyala/fasthttp"
)

// /mcp answers every error in JSON: a body that is not JSON-RPC gets
// JSON-RPC's own error (-32700 parse error, -32600 invalid request,
// -32601 method not found), checked here before the SDK runs; what the
// SDK refuses in words of its own (a transport error: the Accept or
// Content-Type header) gets the API's error shape.
//
// A body is one message: JSON-RPC batches are refused (-32600). The MCP
// revision 2025-06-18 removed batching from the streamable HTTP
// transport, and a batch let one small request ask for thousands of
// answers at once (20,000 tools/list calls in 1 MB asked for a 256 MB
// reply).

// JSON-RPC 2.0's error codes.
const (
	rpcParseError     = -32700
	rpcInvalidRequest = -32600
	rpcMethodNotFound = -32601
	rpcInternalError  = -32603
)

// rpcErrorResponse is a JSON-RPC error response.
type rpcErrorResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   rpcError        `json:"error"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func rpcFailure(id json.RawMessage, code int, msg string) *rpcErrorResponse {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	return &rpcErrorResponse{JSONRPC: "2.0", ID: id, Error: rpcError{Code: code, Message: msg}}
}

// rpcMessage is what checkJSONRPC reads of each message.
type rpcMessage struct {
	JSONRPC *string         `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  *string         `json:"method"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

// checkJSONRPC returns the JSON-RPC error of a body that is not one
// JSON-RPC message, and the message's id (for an error the SDK answers
// later); nil when it is well formed.
func checkJSONRPC(body []byte) (*rpcErrorResponse, json.RawMessage) {
	body = bytes.TrimSpace(body)
	if !json.Valid(body) {
		return rpcFailure(nil, rpcParseError, "Parse error: the body is not JSON"), nil
	}
	if len(body) > 0 && body[0] == '[' {
		return rpcFailure(nil, rpcInvalidRequest, errBatch), nil
	}
	var m rpcMessage
	if len(body) == 0 || body[0] != '{' || json.Unmarshal(body, &m) != nil {
		return rpcFailure(nil, rpcInvalidRequest, "Invalid Request: the message is not a JSON object"), nil
	}
	switch {
	case m.JSONRPC == nil || *m.JSONRPC != "2.0":
		return rpcFailure(m.ID, rpcInvalidRequest, `Invalid Request: "jsonrpc" must be "2.0"`), nil
	case m.Method == nil && (len(m.ID) == 0 || len(m.Result) == 0 && len(m.Error) == 0):
		return rpcFailure(m.ID, rpcInvalidRequest, `Invalid Request: a request needs a "method"`), nil
	case m.Method != nil && *m.Method == "":
		return rpcFailure(m.ID, rpcInvalidRequest, `Invalid Request: "method" is empty`), nil
	}
	return nil, m.ID
}

// errBatch is the refusal of a JSON-RPC batch.
const errBatch = "Invalid Request: batches are not accepted (the MCP revision 2025-06-18 removed JSON-RPC batching); send one message per POST"

// jsonAnswer rewrites an error the SDK answered in plain words into JSON:
// an unknown method as JSON-RPC's -32601 (with the request's id), any
// other refusal in the API's error shape, with the SDK's status.
func jsonAnswer(ctx *fasthttp.RequestCtx, id json.RawMessage) {
	status := ctx.Response.StatusCode()
	mt, _, _ := mime.ParseMediaType(string(ctx.Response.Header.ContentType()))
	if status < 400 || mt == "application/json" || mt == "text/event-stream" {
		return
	}
	msg := strings.TrimSpace(string(ctx.Response.Body()))
	if strings.Contains(msg, "not handled") {
		writeJSON(ctx, status, rpcFailure(id, rpcMethodNotFound, "Method not found: "+msg))
		return
	}
	if msg == "" {
		msg = fasthttp.StatusMessage(status)
	}
	writeError(ctx, status, "%s", msg)
}

// mcpStateless answers GET and DELETE /mcp: a stateless server has no
// stream to open and no session to end.
func mcpStateless(ctx *fasthttp.RequestCtx) {
	ctx.Response.Header.Set("Allow", "POST")
	writeError(ctx, fasthttp.StatusMethodNotAllowed, "this MCP server is stateless: it keeps no sessions, so there is no stream to open or session to end; send each JSON-RPC message with POST")
}
