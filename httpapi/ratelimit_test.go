package httpapi

import (
	"encoding/binary"
	"net"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestRateLimit(t *testing.T) {
	ts := start(t, func(o *Options) { o.PublicRateLimit = 10 })
	for i := 1; i <= 10; i++ {
		r := ts.get(t, "/api/documents")
		if r.status != 200 || r.header.Get("RateLimit-Limit") != "10" || r.header.Get("RateLimit-Remaining") != strconv.Itoa(10-i) {
			t.Fatalf("request %d: %d, limit %q remaining %q", i, r.status, r.header.Get("RateLimit-Limit"), r.header.Get("RateLimit-Remaining"))
		}
		if reset, _ := strconv.Atoi(r.header.Get("RateLimit-Reset")); reset < 1 || reset > 60 {
			t.Fatalf("RateLimit-Reset %q", r.header.Get("RateLimit-Reset"))
		}
	}
	// The 11th in the minute, on any limited endpoint.
	r := ts.get(t, "/api/semantic-search?q=alpha")
	wantError(t, r, 429, "10 requests per minute")
	if r.json(t)["code"] != "rate_limited" || r.header.Get("Retry-After") != "6" || r.header.Get("RateLimit-Remaining") != "0" {
		t.Fatalf("429: %s, Retry-After %q", r.body, r.header.Get("Retry-After"))
	}
	wantError(t, ts.do(t, "POST", "/api/ask", askBody("alpha"), jsonCT...), 429)
	wantError(t, ts.get(t, "/api/search?q=alpha"), 429) // SEARCH_ACCESS=public is the public tier
	// Admin credentials lift the limit; a wrong Bearer token is refused.
	for i := 0; i < 20; i++ {
		if r := ts.get(t, "/api/documents", bearer...); r.status != 200 || r.header.Get("RateLimit-Limit") != "" {
			t.Fatalf("with Bearer: %d, headers %v", r.status, r.header)
		}
	}
	if r := ts.do(t, "GET", "/api/documents", nil, "Authorization", "Basic "+basic(testUser, testPass)); r.status != 200 {
		t.Fatalf("with Basic Auth: %d", r.status)
	}
	wantError(t, ts.get(t, "/api/documents", "Authorization", "Bearer wrong"), 401, "Bearer")
	// The health check and pages are not limited.
	for _, p := range []string{"/healthz", "/"} {
		if r := ts.get(t, p); r.status != 200 || r.header.Get("RateLimit-Limit") != "" {
			t.Fatalf("%s: %d", p, r.status)
		}
	}
	// X-Forwarded-For is ignored unless TRUST_PROXY.
	wantError(t, ts.get(t, "/api/documents", "X-Forwarded-For", "203.0.113.9"), 429)
}

func TestRateLimitBehindProxy(t *testing.T) {
	ts := start(t, func(o *Options) { o.PublicRateLimit = 2; o.TrustProxy = true })
	get := func(xff string) int { return ts.get(t, "/api/documents", "X-Forwarded-For", xff).status }
	// The address the proxy appended (the last one) is the client; what a
	// client puts first cannot spread it over many buckets.
	for _, xff := range []string{"198.51.100.7", "1.1.1.1, 198.51.100.7", "2.2.2.2,198.51.100.7"} {
		if st := get(xff); st != 200 && xff != "2.2.2.2,198.51.100.7" || st != 429 && xff == "2.2.2.2,198.51.100.7" {
			t.Fatalf("%q: %d", xff, st)
		}
	}
	if st := get("198.51.100.8"); st != 200 {
		t.Fatalf("another client: %d", st)
	}
	// An IPv6 /64 is one client.
	get("2001:db8:1:2::1")
	get("2001:db8:1:2::ffff")
	if st := get("2001:db8:1:2:aaaa::1"); st != 429 {
		t.Fatalf("third address of one /64: %d", st)
	}
	if st := get("2001:db8:1:3::1"); st != 200 {
		t.Fatalf("another /64: %d", st)
	}
}

func TestLimiterRefillsAndForgets(t *testing.T) {
	now := time.Unix(1e9, 0)
	l := newLimiter(10, 1000)
	l.now = func() time.Time { return now }
	ip := net.ParseIP("192.0.2.1")
	for i := 0; i < 10; i++ {
		if !l.allow(ip).ok {
			t.Fatalf("request %d refused", i)
		}
	}
	v := l.allow(ip)
	if v.ok || v.retryAfter != 6*time.Second || v.reset != 60*time.Second {
		t.Fatalf("11th: %+v", v)
	}
	now = now.Add(6 * time.Second) // one token back
	if v := l.allow(ip); !v.ok || v.remaining != 0 {
		t.Fatalf("after 6 s: %+v", v)
	}
	if l.allow(ip).ok {
		t.Fatal("a second request after 6 s")
	}
	now = now.Add(time.Minute)
	l.sweepAll()
	if n := l.clients(); n != 0 {
		t.Fatalf("a refilled bucket is kept: %d", n)
	}
}

// TestLimiterMemoryIsBounded sends one request from each of 1,000,000
// distinct addresses: the table stays at its bound and so does the heap.
func TestLimiterMemoryIsBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("a million addresses")
	}
	const clients = 100_000
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	l := newLimiter(10, clients)
	ip := make(net.IP, 4)
	for i := 0; i < 1_000_000; i++ {
		binary.BigEndian.PutUint32(ip, 0x0A000000+uint32(i))
		if !l.allow(ip).ok {
			t.Fatalf("address %d refused on its first request", i)
		}
	}
	n := l.clients()
	runtime.GC()
	runtime.ReadMemStats(&after)
	heap := int64(after.HeapInuse) - int64(before.HeapInuse)
	t.Logf("1,000,000 addresses: %d buckets held, heap %.1f MB", n, float64(heap)/1e6)
	if n > clients {
		t.Fatalf("%d buckets held, bound %d", n, clients)
	}
	if heap > 64<<20 {
		t.Fatalf("heap grew by %d bytes for %d buckets", heap, n)
	}
	runtime.KeepAlive(l)
}

// BenchmarkLimiter measures a request against the table while 1,000,000
// distinct addresses pass through it, and the memory the table holds.
func BenchmarkLimiter(b *testing.B) {
	l := newLimiter(10, 100_000)
	ip := make(net.IP, 4)
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		binary.BigEndian.PutUint32(ip, 0x0A000000+uint32(i%1_000_000))
		l.allow(ip)
	}
	b.StopTimer()
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(l.clients()), "buckets")
	b.ReportMetric(float64(int64(after.HeapInuse)-int64(before.HeapInuse))/1e6, "heap-MB")
	runtime.KeepAlive(l)
}

// TestForwardedForTrustsOnlyTheProxy sends what a client could add itself:
// an X-Forwarded-For line of its own before the proxy's, and entries before
// a last one that does not parse. Neither may give it a new bucket.
func TestForwardedForTrustsOnlyTheProxy(t *testing.T) {
	ts := start(t, func(o *Options) { o.PublicRateLimit = 1; o.TrustProxy = true })
	req := func(xff ...string) int {
		h := ""
		for _, x := range xff {
			h += "X-Forwarded-For: " + x + "\r\n"
		}
		return ts.raw(t, "GET /api/documents HTTP/1.1\r\nHost: x\r\n"+h+"Connection: close\r\n\r\n").status
	}
	if st := req("198.51.100.7:5000"); st != 200 {
		t.Fatalf("first request: %d", st)
	}
	for i, xff := range [][]string{
		{"203.0.113.1", "198.51.100.7"},           // the client's own line first
		{"203.0.113.2, 198.51.100.7:6000"},        // a port on the proxy's entry
		{"203.0.113.3", "10.0.0.1, 198.51.100.7"}, // a few of each
	} {
		if st := req(xff...); st != 429 {
			t.Fatalf("case %d: %d, the client escaped its bucket", i, st)
		}
	}
	// A last entry that does not parse counts as the proxy's own address
	// (the peer), never as the entry before it.
	if st := req("203.0.113.4, unknown"); st != 200 {
		t.Fatalf("peer's bucket: %d", st)
	}
	if st := req("203.0.113.5, unknown"); st != 429 {
		t.Fatalf("peer's bucket again: %d", st)
	}
}

func TestIPv4AndIPv6KeysDiffer(t *testing.T) {
	v4 := keyOf(net.ParseIP("42.1.2.3"))
	v6 := keyOf(net.ParseIP("2a01:203:0:4::1"))
	if v4 == v6 {
		t.Fatal("an IPv6 /64 shares an IPv4 client's bucket")
	}
	if keyOf(net.ParseIP("2a01:203:0:4::1")) != keyOf(net.ParseIP("2a01:203:0:4:ffff::9")) {
		t.Fatal("one /64 is one client")
	}
}

// TestWrongTokenWithoutLimit: with the public tier unlimited
// (PUBLIC_RATE_LIMIT=0), a wrong Bearer token is still refused with 401
// rather than served as anonymous.
func TestWrongTokenWithoutLimit(t *testing.T) {
	ts := start(t, func(o *Options) { o.PublicRateLimit = 0 })
	for _, path := range []string{"/api/semantic-search?q=retry", "/api/documents", "/api/search?q=retry"} {
		r := ts.get(t, path, "Authorization", "Bearer wrong")
		if r.status != 401 || r.header.Get("WWW-Authenticate") == "" {
			t.Errorf("GET %s with a wrong token: %d %s", path, r.status, r.body)
		}
		if r := ts.get(t, path); r.status != 200 {
			t.Errorf("GET %s without a token: %d", path, r.status)
		}
	}
	wantError(t, ts.do(t, "POST", "/api/ask", strings.NewReader(`{"question":"retry?"}`), "Content-Type", "application/json", "Authorization", "Bearer wrong"), 401)
}
