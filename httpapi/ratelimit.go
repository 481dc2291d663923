package httpapi

import (
	"bytes"
	"fmt"
	"hash/maphash"
	"math"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/valyala/fasthttp"
	"golang.org/x/time/rate"
)

// limiter is a rate limit: a token bucket per client
// (golang.org/x/time/rate) holding burst tokens, refilled at every a second
// — the public tier's holds perMinute tokens, refilled at perMinute a
// minute; suggestions have a bucket of their own (suggestLimiter). A client is an IPv4 address or an IPv6 /64 (one host's share of
// a network). Memory stays bounded: a bucket that has refilled is the same
// as a new one and is dropped by a sweep, and the table holds at most
// maxClients buckets — beyond that a random bucket of the shard makes room
// (under a flood of distinct addresses some clients may get a fresh
// bucket early; none is ever refused wrongly).
type limiter struct {
	perMinute  int // the public tier's: burst and refill per minute
	burst      int
	every      rate.Limit
	what       string // the limit in words, for 429s: "10 requests per minute"
	maxPerPart int
	seed       maphash.Seed
	parts      [limiterParts]limiterPart
	now        func() time.Time
}

const limiterParts = 64

type limiterPart struct {
	mu        sync.Mutex
	buckets   map[clientKey]*rate.Limiter
	lastSweep time.Time
}

// clientKey is an IPv4 address, or the first 64 bits of an IPv6 one.
type clientKey [9]byte

func newLimiter(perMinute, maxClients int) *limiter {
	l := newBucketLimiter(rate.Limit(float64(perMinute)/60), perMinute, maxClients)
	l.perMinute = perMinute
	l.what = strconv.Itoa(perMinute) + " requests per minute"
	return l
}

// newBucketLimiter is a limiter whose buckets hold burst tokens, refilled
// at every a second.
func newBucketLimiter(every rate.Limit, burst, maxClients int) *limiter {
	l := &limiter{
		burst:      burst,
		every:      every,
		what:       fmt.Sprintf("%g requests per second (burst %d)", float64(every), burst),
		maxPerPart: max(1, maxClients/limiterParts),
		seed:       maphash.MakeSeed(),
		now:        time.Now,
	}
	for i := range l.parts {
		l.parts[i].buckets = map[clientKey]*rate.Limiter{}
	}
	return l
}

// keyOf maps an address to its client: an IPv4 address, or an IPv6 /64
// (one subscriber's usual allocation). The last byte keeps the families
// apart.
func keyOf(ip net.IP) clientKey {
	var k clientKey
	if v4 := ip.To4(); v4 != nil {
		copy(k[:], v4)
		k[8] = 4
		return k
	}
	copy(k[:], ip.To16()[:8])
	k[8] = 6
	return k
}

// verdict is the outcome of one request against its client's bucket.
type verdict struct {
	ok         bool
	remaining  int           // whole tokens left
	reset      time.Duration // until the bucket is full again
	retryAfter time.Duration // until the next request is allowed, when refused
}

func (l *limiter) allow(ip net.IP) verdict {
	k := keyOf(ip)
	p := &l.parts[maphash.Comparable(l.seed, k)%limiterParts]
	now := l.now()
	p.mu.Lock()
	b := p.buckets[k]
	if b == nil {
		if len(p.buckets) >= l.maxPerPart && now.Sub(p.lastSweep) >= time.Second {
			l.sweep(p, now) // at most once a second: O(part), not per request
		}
		for k := range p.buckets { // still full: make room at random, O(1)
			if len(p.buckets) < l.maxPerPart {
				break
			}
			delete(p.buckets, k)
		}
		b = rate.NewLimiter(l.every, l.burst)
		p.buckets[k] = b
	}
	ok := b.AllowN(now, 1)
	tokens := b.TokensAt(now)
	p.mu.Unlock()
	v := verdict{ok: ok, remaining: max(0, int(math.Floor(tokens)))}
	v.reset = l.wait(float64(l.burst) - tokens)
	if !ok {
		v.retryAfter = l.wait(1 - tokens)
	}
	return v
}

// wait is how long the bucket takes to gain n tokens.
func (l *limiter) wait(n float64) time.Duration {
	if n <= 0 {
		return 0
	}
	return time.Duration(n / float64(l.every) * float64(time.Second))
}

// sweep drops the buckets of a part that have refilled; the caller holds
// its lock.
func (l *limiter) sweep(p *limiterPart, now time.Time) {
	p.lastSweep = now
	for k, b := range p.buckets {
		if b.TokensAt(now) >= float64(l.burst) {
			delete(p.buckets, k)
		}
	}
}

// sweepAll drops every refilled bucket; the server runs it every minute.
func (l *limiter) sweepAll() {
	now := l.now()
	for i := range l.parts {
		p := &l.parts[i]
		p.mu.Lock()
		l.sweep(p, now)
		p.mu.Unlock()
	}
}

// clients counts the buckets held.
func (l *limiter) clients() int {
	n := 0
	for i := range l.parts {
		p := &l.parts[i]
		p.mu.Lock()
		n += len(p.buckets)
		p.mu.Unlock()
	}
	return n
}

// clientIP is the address the limit applies to: the connection's peer, or,
// behind a trusted proxy (TRUST_PROXY), the last address of the last
// X-Forwarded-For header — the one the proxy itself appended, which a client
// cannot forge. Entries before it are the client's word and never used: when
// the last one does not parse, the peer's address counts.
func (s *Server) clientIP(ctx *fasthttp.RequestCtx) net.IP {
	if s.opts.TrustProxy {
		if all := ctx.Request.Header.PeekAll("X-Forwarded-For"); len(all) > 0 {
			xff := all[len(all)-1]
			if i := bytes.LastIndexByte(xff, ','); i >= 0 {
				xff = xff[i+1:]
			}
			if ip := parseForwarded(string(trimSpace(xff))); ip != nil {
				return ip
			}
		}
	}
	return ctx.RemoteIP()
}

// parseForwarded reads one X-Forwarded-For entry: an address, possibly with
// a port ("192.0.2.1:4711", "[2001:db8::1]:4711").
func parseForwarded(s string) net.IP {
	if ip := net.ParseIP(s); ip != nil {
		return ip
	}
	if host, _, err := net.SplitHostPort(s); err == nil {
		return net.ParseIP(host)
	}
	return nil
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

// public applies the public tier's rate limit to h. Admin credentials
// (the Bearer token or Basic Auth) lift it; a wrong Bearer token is refused
// rather than silently limited. Every limited response carries
// RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset (seconds until
// the bucket is full); a refused one is a 429 with Retry-After.
func (s *Server) public(h fasthttp.RequestHandler) fasthttp.RequestHandler {
	return s.limited(s.limiter, h)
}

// limited is public with the buckets of l (nil: no limit).
func (s *Server) limited(l *limiter, h fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		if s.auth.bearerOK(ctx) || s.auth.basicOK(ctx) {
			h(ctx)
			return
		}
		// Wrong credentials are refused whatever the limit: a client is
		// told, not silently served as anonymous.
		if _, hasBearer := credentials(ctx, "Bearer"); hasBearer && s.auth.hasBearer {
			ctx.Response.Header.Set("WWW-Authenticate", `Bearer realm="sift"`)
			writeError(ctx, fasthttp.StatusUnauthorized, "the Bearer token is not valid (send none to use the public tier)")
			return
		}
		if l == nil {
			h(ctx)
			return
		}
		if retry, ok := s.spendOn(ctx, l); !ok {
			writeError(ctx, fasthttp.StatusTooManyRequests, "rate limit of %s exceeded; retry in %d s, or send the Bearer token",
				l.what, retry)
			return
		}
		h(ctx)
	}
}

// spend takes a token from the client's bucket and sets the RateLimit
// headers; when none is left it sets Retry-After and returns the seconds to
// wait and false.
func (s *Server) spend(ctx *fasthttp.RequestCtx) (retry int, ok bool) {
	return s.spendOn(ctx, s.limiter)
}

// spendOn is spend from the buckets of l.
func (s *Server) spendOn(ctx *fasthttp.RequestCtx, l *limiter) (retry int, ok bool) {
	v := l.allow(s.clientIP(ctx))
	hd := &ctx.Response.Header
	hd.Set("RateLimit-Limit", strconv.Itoa(l.burst))
	hd.Set("RateLimit-Remaining", strconv.Itoa(v.remaining))
	hd.Set("RateLimit-Reset", strconv.Itoa(ceilSeconds(v.reset)))
	if v.ok {
		return 0, true
	}
	s.metrics.rateLimited.Inc()
	retry = max(1, ceilSeconds(v.retryAfter))
	hd.Set("Retry-After", strconv.Itoa(retry))
	return retry, false
}

func ceilSeconds(d time.Duration) int { return int(math.Ceil(d.Seconds())) }
