package httpapi

import (
	"bytes"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

// Request bodies are bounded before they are read. The server streams
// bodies (fasthttp's StreamRequestBody), so nothing is reserved for what a
// client only announces; admitBody then decides, from the route and the
// credentials, how much of it may be read:
//
//   - upload routes (documents, imports) take up to MAX_UPLOAD_BYTES, but
//     only from a caller with admin credentials; for anyone else the body is
//     never read (the route's auth check answers);
//   - every other route takes at most maxAPIBody, read here into memory
//     before the handler runs, within a server-wide budget of body bytes in
//     flight (beyond it: 503 with Retry-After);
//   - compressed request bodies are refused (415): a small body must not
//     inflate past its bound.
const (
	maxAPIBody       = 1 << 20
	maxInFlightBytes = 64 << 20
	// maxDrain: a body announced over its bound is read and dropped, up to
	// this size, so the client can read the 413 (closing on unread data
	// resets the connection under it); a larger one closes at once.
	maxDrain = 8 << 20
)

// uploadRoute reports whether a POST to path takes an upload-sized body.
func uploadRoute(path string) bool {
	switch path {
	case "/api/documents", "/dashboard/documents":
		return true
	}
	for _, prefix := range []string{"/api/sources/", "/dashboard/sources/"} {
		if rest, ok := strings.CutPrefix(path, prefix); ok {
			id, action, _ := strings.Cut(rest, "/")
			return id != "" && action == "import"
		}
	}
	return false
}

// bodyBudget counts the body bytes being read or held by requests.
type bodyBudget struct{ used atomic.Int64 }

func (b *bodyBudget) take(n int64) bool {
	if b.used.Add(n) > maxInFlightBytes {
		b.used.Add(-n)
		return false
	}
	return true
}

func (b *bodyBudget) give(n int64) { b.used.Add(-n) }

// admitBody reads the request's body within its route's bound, or answers
// and returns false. The caller calls release when the request is done.
func (s *Server) admitBody(ctx *fasthttp.RequestCtx) (release func(), ok bool) {
	none := func() {}
	h := &ctx.Request.Header
	if ce := bytes.TrimSpace(h.Peek("Content-Encoding")); len(ce) > 0 && !bytes.EqualFold(ce, []byte("identity")) {
		writeError(ctx, fasthttp.StatusUnsupportedMediaType, "compressed request bodies are not accepted; send the body uncompressed")
		return none, false
	}
	announced := h.ContentLength() // -1 chunked, -2 until close
	if announced == 0 {
		return none, true
	}
	if ctx.IsGet() || ctx.IsHead() || ctx.IsPost() && uploadRoute(string(ctx.Path())) {
		// A body nobody reads (GET), or one the handler reads after its
		// auth check, within MAX_UPLOAD_BYTES (fasthttp refuses a larger
		// announced body): what is left unread must not be taken for the
		// next request, and a refused upload is dropped as it comes, up to
		// maxDrain, so the client reads the refusal.
		ctx.SetConnectionClose()
		return func() {
			if ctx.Response.StatusCode() >= 400 && announced > 0 && announced <= maxDrain {
				if stream := ctx.RequestBodyStream(); stream != nil {
					io.Copy(io.Discard, io.LimitReader(stream, int64(announced)))
				}
			}
		}, true
	}
	if announced > maxAPIBody {
		if stream := ctx.RequestBodyStream(); announced <= maxDrain && stream != nil {
			io.Copy(io.Discard, io.LimitReader(stream, int64(announced))) // dropped as it comes
		} else {
			ctx.SetConnectionClose()
		}
		writeError(ctx, fasthttp.StatusRequestEntityTooLarge, "request body exceeds this endpoint's %d-byte limit", maxAPIBody)
		return none, false
	}
	reserve := int64(maxAPIBody)
	if announced > 0 {
		reserve = int64(announced)
	}
	if !s.bodies.take(reserve) {
		ctx.Response.Header.Set("Retry-After", "5")
		writeError(ctx, fasthttp.StatusServiceUnavailable, "too many request bodies are being received; try again in a few seconds")
		ctx.SetConnectionClose()
		return none, false
	}
	release = func() { s.bodies.give(reserve) }
	stream := ctx.RequestBodyStream()
	if stream == nil { // the body was read with the headers
		return release, true
	}
	body, err := io.ReadAll(io.LimitReader(stream, maxAPIBody+1))
	switch {
	case err != nil && isTimeout(err):
		writeError(ctx, fasthttp.StatusRequestTimeout, "request body not received in time")
	case err != nil && !errors.Is(err, io.EOF):
		writeError(ctx, fasthttp.StatusBadRequest, "reading the request body: %v", err)
	case len(body) > maxAPIBody:
		writeError(ctx, fasthttp.StatusRequestEntityTooLarge, "request body exceeds this endpoint's %d-byte limit", maxAPIBody)
	default:
		ctx.Request.SetBodyRaw(body)
		return release, true
	}
	ctx.SetConnectionClose()
	release()
	return none, false
}

// connLimit bounds the open connections of one client address (an IPv4
// address or an IPv6 /64, as the rate limiter counts them): a listener that
// answers a connection over the bound with a JSON 429 and closes it.
type connLimit struct {
	net.Listener
	max  int
	mu   sync.Mutex
	open map[clientKey]int
}

// limitConns wraps ln; max <= 0 leaves it as it is.
func limitConns(ln net.Listener, max int) net.Listener {
	if max <= 0 {
		return ln
	}
	return &connLimit{Listener: ln, max: max, open: map[clientKey]int{}}
}

// tooManyConns is the whole answer to a connection over the bound.
var tooManyConns = func() []byte {
	body := `{"error":"too many connections from your address; close some and try again","code":"rate_limited"}` + "\n"
	return []byte("HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json; charset=utf-8\r\nRetry-After: 5\r\n" +
		"Connection: close\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body)
}()

func (l *connLimit) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		tcp, ok := c.RemoteAddr().(*net.TCPAddr)
		if !ok {
			return c, nil
		}
		k := keyOf(tcp.IP)
		l.mu.Lock()
		if l.open[k] >= l.max {
			l.mu.Unlock()
			c.SetWriteDeadline(time.Now().Add(time.Second))
			c.Write(tooManyConns)
			c.Close()
			continue
		}
		l.open[k]++
		l.mu.Unlock()
		return &limitedConn{Conn: c, l: l, k: k}, nil
	}
}

type limitedConn struct {
	net.Conn
	l    *connLimit
	k    clientKey
	once sync.Once
}

func (c *limitedConn) Close() error {
	c.once.Do(func() {
		c.l.mu.Lock()
		if c.l.open[c.k]--; c.l.open[c.k] <= 0 {
			delete(c.l.open, c.k)
		}
		c.l.mu.Unlock()
	})
	return c.Conn.Close()
}
