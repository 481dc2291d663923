package crawl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"syscall"
	"time"
)

// Limits of the web fetcher.
const (
	maxRedirects = 5
	maxPageBytes = 10 << 20
	fetchTimeout = 60 * time.Second
)

// ErrPrivateAddress: the address is loopback, private, link-local or
// otherwise not on the public internet, and the source does not allow it.
var ErrPrivateAddress = errors.New("refused: a private, loopback or link-local address (set allowPrivate on the source to crawl it)")

// blockedPrefixes are the non-public ranges besides what net.IP's own
// predicates name (loopback, private, link-local, multicast, unspecified).
var blockedPrefixes = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),       // "this network"
	netip.MustParsePrefix("100.64.0.0/10"),   // carrier-grade NAT
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved, and broadcast
	netip.MustParsePrefix("64:ff9b::/96"),    // NAT64 (maps IPv4, private ones too)
	netip.MustParsePrefix("64:ff9b:1::/48"),  // local-use NAT64
	netip.MustParsePrefix("2002::/16"),       // 6to4 (maps IPv4)
	netip.MustParsePrefix("fec0::/10"),       // site-local (deprecated)
	netip.MustParsePrefix("100::/64"),        // discard-only
	netip.MustParsePrefix("2001:db8::/32"),   // documentation
	netip.MustParsePrefix("::ffff:0:0/96"),   // IPv4-mapped, checked as IPv4 below
	netip.MustParsePrefix("192.88.99.0/24"),  // 6to4 relay anycast
	netip.MustParsePrefix("169.254.0.0/16"),  // link-local (cloud metadata)
	netip.MustParsePrefix("fe80::/10"),       // link-local
	netip.MustParsePrefix("fc00::/7"),        // unique local
	netip.MustParsePrefix("127.0.0.0/8"),     // loopback
	netip.MustParsePrefix("::1/128"),         // loopback
	netip.MustParsePrefix("10.0.0.0/8"),      // private
	netip.MustParsePrefix("172.16.0.0/12"),   // private
	netip.MustParsePrefix("192.168.0.0/16"),  // private
	netip.MustParsePrefix("224.0.0.0/4"),     // multicast
	netip.MustParsePrefix("ff00::/8"),        // multicast
	netip.MustParsePrefix("::/128"),          // unspecified
	netip.MustParsePrefix("::/96"),           // IPv4-compatible (deprecated)
	netip.MustParsePrefix("192.0.2.0/24"),    // documentation
	netip.MustParsePrefix("198.51.100.0/24"), // documentation
	netip.MustParsePrefix("203.0.113.0/24"),  // documentation
}

// privateAddress reports whether ip is outside the public internet.
func privateAddress(ip net.IP) bool {
	a, ok := netip.AddrFromSlice(ip)
	if !ok {
		return true
	}
	if a.Is4In6() {
		a = a.Unmap()
	}
	for _, p := range blockedPrefixes {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// fetcher is the web crawler's HTTP client. Unless private addresses are
// allowed, every connection it opens — for the first request and for each
// redirect hop — is checked after DNS resolution, at the address actually
// dialled, so neither a redirect nor a DNS answer can lead it inward.
type fetcher struct {
	client    *http.Client
	userAgent string
}

func newFetcher(allowPrivate bool, env Env) *fetcher {
	blocked := privateAddress
	if env.blocked != nil {
		blocked = env.blocked
	}
	dialer := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	if !allowPrivate {
		dialer.Control = func(network, address string, _ syscall.RawConn) error {
			host, _, err := net.SplitHostPort(address)
			if err != nil {
				return err
			}
			if ip := net.ParseIP(host); ip == nil || blocked(ip) {
				return fmt.Errorf("%w: %s", ErrPrivateAddress, host)
			}
			return nil
		}
	}
	transport := &http.Transport{
		Proxy:                 nil, // a proxy would hide the address dialled
		DialContext:           dialer.DialContext,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: 30 * time.Second,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       30 * time.Second,
	}
	ua := env.UserAgent
	if ua == "" {
		ua = "SiftBot/dev"
	}
	return &fetcher{
		userAgent: ua,
		client: &http.Client{
			Transport: transport,
			Timeout:   fetchTimeout,
			CheckRedirect: func(req *http.Request, via []*http.Request) error {
				if len(via) > maxRedirects {
					return fmt.Errorf("more than %d redirects", maxRedirects)
				}
				if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
					return fmt.Errorf("redirect to a %s: URL", req.URL.Scheme)
				}
				return nil
			},
		},
	}
}

// response is what the crawler keeps of an HTTP response.
type response struct {
	status       int
	finalURL     string // after redirects
	contentType  string
	etag         string
	lastModified string
	robotsTag    string // X-Robots-Tag
	retryAfter   time.Duration
	body         []byte
}

// errTooLarge: the body is over the limit.
var errTooLarge = errors.New("response body too large")

// get fetches u with conditional headers when given and reads at most
// limit bytes of the body (for 2xx answers only): a longer body is an
// error, or, with cut, read up to the limit.
func (f *fetcher) get(ctx context.Context, u, etag, lastModified string, limit int64, cut bool) (*response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", f.userAgent)
	req.Header.Set("Accept", "text/html,application/xhtml+xml,text/plain;q=0.9,text/markdown;q=0.9,application/xml;q=0.8,*/*;q=0.5")
	if etag != "" {
		req.Header.Set("If-None-Match", etag)
	}
	if lastModified != "" {
		req.Header.Set("If-Modified-Since", lastModified)
	}
	res, err := f.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	out := &response{
		status: res.StatusCode, finalURL: res.Request.URL.String(), contentType: res.Header.Get("Content-Type"),
		etag: res.Header.Get("ETag"), lastModified: res.Header.Get("Last-Modified"), robotsTag: res.Header.Get("X-Robots-Tag"),
		retryAfter: retryAfter(res.Header.Get("Retry-After")),
	}
	if res.StatusCode < 200 || res.StatusCode > 299 {
		io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
		return out, nil
	}
	if res.ContentLength > limit && !cut {
		return out, fmt.Errorf("%w: %d bytes, at most %d", errTooLarge, res.ContentLength, limit)
	}
	out.body, err = io.ReadAll(io.LimitReader(res.Body, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(out.body)) > limit {
		if cut {
			out.body = out.body[:limit]
			return out, nil
		}
		return out, fmt.Errorf("%w: at most %d bytes", errTooLarge, limit)
	}
	return out, nil
}

// retryAfter reads a Retry-After header: seconds or an HTTP date.
func retryAfter(v string) time.Duration {
	if v == "" {
		return 0
	}
	if n, err := strconv.Atoi(v); err == nil && n >= 0 {
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0)
	}
	return 0
}
