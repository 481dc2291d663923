package httpapi

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/valyala/fasthttp"
)

// Request bodies are bounded before they are read. The server streams
// bodies (fasthttp's StreamRequestBody), so nothing is reserved for what a
// client only announces; admitBody then decides, from the route and the
// credentials, how much of it may be read:
//
//   - upload routes (documents, imports) take up to MAX_UPLOAD_BYTES, but
//     only from a caller with admin credentials, whose body is read here,
//     within the limit whatever the client announced (Content-Length or
//     chunked, with or without "Expect: 100-continue"), into memory or a
//     spool file the handler reads as the body (spool.go); for anyone else
//     the body is never read (the route's auth check answers);
//   - every other route takes at most maxAPIBody (the logo's routes,
//     maxLogoBody), read here into memory before the handler runs, within
//     a budget of body bytes in flight (bodyBudget): one client holds at
//     most its share (beyond: 429), all clients together the whole
//     (beyond: 503), and callers with admin credentials draw on a reserve
//     of their own;
//   - a body must arrive at a pace (paced): its first bytes within
//     bodyFirstBytes, then bodyMinRate on average, or the request ends
//     with 408 — an idle or trickling body does not hold its share for
//     the whole read timeout;
//   - compressed request bodies are refused (415): a small body must not
//     inflate past its bound.
const (
	maxAPIBody       = 1 << 20
	maxInFlightBytes = 64 << 20 // all clients together
	maxClientBytes   = 8 << 20  // one client (an address, as the rate limiter counts them)
	adminBodyReserve = 16 << 20 // callers with admin credentials, beside the others'
	bodyFirstBytes   = 5 * time.Second
	bodyMinRate      = 16 << 10 // bytes a second, on average
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

// bodyLimit is the bound of a body sent to path that is not an upload:
// maxAPIBody, or a logo's own (maxLogoBody).
func bodyLimit(path string) int {
	switch path {
	case "/api/settings/logo", "/dashboard/settings/logo":
		return maxLogoBody
	}
	return maxAPIBody
}

// bodyBudget counts the body bytes being read or held by requests: in all,
// per client, and the admins' reserve.
type bodyBudget struct {
	mu       sync.Mutex
	used     int64
	admin    int64
	byClient map[clientKey]int64
}

// take reserves n bytes for a request of client (an admin's from the
// reserve while it lasts), and returns the release of the reservation, or
// the status refusing it: 429 past the client's share, 503 past the whole.
func (b *bodyBudget) take(client clientKey, admin bool, n int64) (release func(), status int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if admin && b.admin+n <= adminBodyReserve {
		b.admin += n
		return func() { b.mu.Lock(); b.admin -= n; b.mu.Unlock() }, 0
	}
	switch {
	case b.byClient[client]+n > maxClientBytes:
		return nil, fasthttp.StatusTooManyRequests
	case b.used+n > maxInFlightBytes:
		return nil, fasthttp.StatusServiceUnavailable
	}
	if b.byClient == nil {
		b.byClient = map[clientKey]int64{}
	}
	b.byClient[client] += n
	b.used += n
	return func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.used -= n
		if b.byClient[client] -= n; b.byClient[client] <= 0 {
			delete(b.byClient, client)
		}
	}, 0
}

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
	if ctx.IsPost() && uploadRoute(string(ctx.Path())) {
		return s.admitUpload(ctx, announced)
	}
	if ctx.IsGet() || ctx.IsHead() {
		return leaveUnread(ctx, announced), true
	}
	limit := bodyLimit(string(ctx.Path()))
	tooLarge := fmt.Sprintf("request body exceeds this endpoint's %d-byte limit", limit)
	if announced > limit {
		refuseAnnounced(ctx, announced)
		s.refuse(ctx, fasthttp.StatusRequestEntityTooLarge, tooLarge)
		return none, false
	}
	reserve := int64(limit)
	if announced > 0 {
		reserve = int64(announced)
	}
	release, status := s.bodies.take(keyOf(s.clientIP(ctx)), s.auth.bearerOK(ctx) || s.auth.basicOK(ctx), reserve)
	switch status {
	case fasthttp.StatusTooManyRequests:
		ctx.Response.Header.Set("Retry-After", "5")
		writeError(ctx, fasthttp.StatusTooManyRequests, "too many request bodies are being received from your address; finish or close them, then try again")
		ctx.SetConnectionClose()
		return none, false
	case fasthttp.StatusServiceUnavailable:
		ctx.Response.Header.Set("Retry-After", "5")
		writeError(ctx, fasthttp.StatusServiceUnavailable, "too many request bodies are being received; try again in a few seconds")
		ctx.SetConnectionClose()
		return none, false
	}
	stream := ctx.RequestBodyStream()
	if stream == nil { // the body was read with the headers
		return release, true
	}
	body, err := io.ReadAll(io.LimitReader(paced(ctx, stream), int64(limit)+1))
	if err == nil && len(body) > limit {
		err = errBodyTooLarge
	}
	if err != nil {
		s.refuseRead(ctx, err, tooLarge)
		release()
		return none, false
	}
	ctx.Request.SetBodyRaw(body)
	return release, true
}

// errBodyTooLarge is a body read past its bound.
var errBodyTooLarge = errors.New("request body too large")

// refuseRead answers a body that could not be read within its bound:
// 413 (saying tooLarge) over it, 408 when it did not arrive in time, 400
// when it was malformed (a broken chunk). The connection closes; the rest
// of a body over its bound is first dropped as it comes, up to maxDrain,
// so the client reads the refusal.
func (s *Server) refuseRead(ctx *fasthttp.RequestCtx, err error, tooLarge string) {
	ctx.SetConnectionClose()
	switch {
	case errors.Is(err, errBodyTooLarge):
		if stream := ctx.RequestBodyStream(); stream != nil {
			io.Copy(io.Discard, io.LimitReader(stream, maxDrain))
		}
		s.refuse(ctx, fasthttp.StatusRequestEntityTooLarge, tooLarge)
	case isTimeout(err):
		s.refuse(ctx, fasthttp.StatusRequestTimeout, "request body not received in time")
	default:
		s.refuse(ctx, fasthttp.StatusBadRequest, fmt.Sprintf("reading the request body: %v", err))
	}
}

// refuse answers a request refused before its handler ran: as a console
// page to the operator's browser on the console's routes, else as JSON.
func (s *Server) refuse(ctx *fasthttp.RequestCtx, status int, msg string) {
	if strings.HasPrefix(string(ctx.Path()), "/dashboard/") && s.auth.basicOK(ctx) {
		s.console.consoleRefuse(ctx, status, "Refused: "+msg+".")
		return
	}
	writeError(ctx, status, "%s", msg)
}

// leaveUnread leaves a body nobody reads (a GET's, or an upload refused
// before it is read): what is left unread must not be taken for the next
// request, so the connection closes; a refused body up to maxDrain is
// dropped as it comes, once the answer is made, so the client reads the
// refusal rather than a reset.
func leaveUnread(ctx *fasthttp.RequestCtx, announced int) func() {
	ctx.SetConnectionClose()
	return func() {
		if ctx.Response.StatusCode() >= 400 && announced > 0 && announced <= maxDrain {
			if stream := ctx.RequestBodyStream(); stream != nil {
				io.Copy(io.Discard, io.LimitReader(stream, int64(announced)))
			}
		}
	}
}

// refuseAnnounced drops a body announced over its bound as it comes, up to
// maxDrain, so the client reads the refusal; a larger one closes the
// connection at once.
func refuseAnnounced(ctx *fasthttp.RequestCtx, announced int) {
	if stream := ctx.RequestBodyStream(); announced <= maxDrain && stream != nil {
		io.Copy(io.Discard, io.LimitReader(stream, int64(announced)))
		return
	}
	ctx.SetConnectionClose()
}

// admitUpload bounds an upload's body by MAX_UPLOAD_BYTES: a body
// announced larger is refused at once (413); an admin's body is read here,
// stopping at the limit (413, nothing kept), into memory or a spool file
// the handler reads as the request's body; anyone else's is left unread
// for the route's auth check to refuse.
func (s *Server) admitUpload(ctx *fasthttp.RequestCtx, announced int) (release func(), ok bool) {
	limit := s.opts.MaxUploadBytes
	tooLarge := fmt.Sprintf("request body exceeds the %d-byte limit (MAX_UPLOAD_BYTES)", limit)
	if announced > limit {
		refuseAnnounced(ctx, announced)
		s.refuse(ctx, fasthttp.StatusRequestEntityTooLarge, tooLarge)
		return func() {}, false
	}
	if !s.auth.bearerOK(ctx) && !s.auth.basicOK(ctx) {
		return leaveUnread(ctx, announced), true
	}
	stream := ctx.RequestBodyStream()
	if stream == nil { // read with the headers, within fasthttp's MaxRequestBodySize
		return func() {}, true
	}
	body, err := spool(paced(ctx, stream), limit)
	if err != nil {
		s.refuseRead(ctx, err, tooLarge)
		return func() {}, false
	}
	if boundary := string(ctx.Request.Header.MultipartFormBoundary()); boundary != "" {
		if err := body.checkParts(boundary); err != nil {
			body.close()
			status, msg := errorStatus(err)
			s.refuse(ctx, status, msg)
			return func() {}, false
		}
	}
	body.install(&ctx.Request)
	return body.close, true
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

// pacedReader reads a request body, moving the connection's read deadline
// with what has arrived: the first bytes within bodyFirstBytes of the
// start, then bodyMinRate on average. A read past the deadline fails with
// a timeout (408).
type pacedReader struct {
	r     io.Reader
	conn  net.Conn
	start time.Time
	n     int64
}

// paced returns the body stream r of ctx's request, paced.
func paced(ctx *fasthttp.RequestCtx, r io.Reader) io.Reader {
	return &pacedReader{r: r, conn: ctx.Conn(), start: time.Now()}
}

func (p *pacedReader) Read(b []byte) (int, error) {
	if p.conn != nil {
		p.conn.SetReadDeadline(p.start.Add(bodyFirstBytes + time.Duration(p.n)*time.Second/bodyMinRate))
	}
	n, err := p.r.Read(b)
	p.n += int64(n)
	return n, err
}
