package crawl

import (
	"cmp"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// The address guard keeps every outbound connection of a source — the web
// crawler's and the platform connectors' — on the public internet unless
// the source sets allowPrivate. It checks the address actually dialled,
// after DNS resolution, on every connection (so every redirect hop and
// every DNS answer), and never goes through a proxy, which would hide that
// address.

// ErrPrivateAddress: the address is loopback, private, link-local or
// otherwise not on the public internet, and the source does not allow it.
// Refusals are *AddressError values, which match it with errors.Is.
var ErrPrivateAddress = errors.New("refused: a private, loopback or link-local address (set allowPrivate to reach private addresses)")

// AddressError is a refused connection: Addr is the address dialled, Rule
// the range it is in ("a loopback address").
type AddressError struct {
	Addr string
	Rule string
}

func (e *AddressError) Error() string {
	return fmt.Sprintf("refused: %s is %s; set allowPrivate to reach private addresses", e.Addr, e.Rule)
}

// Is makes errors.Is(err, ErrPrivateAddress) hold.
func (e *AddressError) Is(target error) bool { return target == ErrPrivateAddress }

// addressRange is a non-public range and what to call an address in it.
type addressRange struct {
	prefix netip.Prefix
	rule   string
}

// blockedRanges are the ranges outside the public internet. IPv4-mapped
// IPv6 addresses are unmapped and checked as IPv4 first.
var blockedRanges = []addressRange{
	{netip.MustParsePrefix("127.0.0.0/8"), "a loopback address"},
	{netip.MustParsePrefix("::1/128"), "a loopback address"},
	{netip.MustParsePrefix("10.0.0.0/8"), "a private address (RFC 1918)"},
	{netip.MustParsePrefix("172.16.0.0/12"), "a private address (RFC 1918)"},
	{netip.MustParsePrefix("192.168.0.0/16"), "a private address (RFC 1918)"},
	{netip.MustParsePrefix("169.254.0.0/16"), "a link-local address (cloud metadata lives there)"},
	{netip.MustParsePrefix("fe80::/10"), "a link-local address"},
	{netip.MustParsePrefix("fc00::/7"), "a unique local address (IPv6 ULA)"},
	{netip.MustParsePrefix("0.0.0.0/8"), "an unspecified (\"this network\") address"},
	{netip.MustParsePrefix("::/128"), "the unspecified address"},
	{netip.MustParsePrefix("::/96"), "an IPv4-compatible address (deprecated)"},
	{netip.MustParsePrefix("100.64.0.0/10"), "a carrier-grade NAT address"},
	{netip.MustParsePrefix("192.0.0.0/24"), "an IETF protocol assignment"},
	{netip.MustParsePrefix("198.18.0.0/15"), "a benchmarking address"},
	{netip.MustParsePrefix("240.0.0.0/4"), "a reserved or broadcast address"},
	{netip.MustParsePrefix("224.0.0.0/4"), "a multicast address"},
	{netip.MustParsePrefix("ff00::/8"), "a multicast address"},
	{netip.MustParsePrefix("64:ff9b::/96"), "a NAT64 address (it maps IPv4, private ones too)"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "a local-use NAT64 address"},
	{netip.MustParsePrefix("2002::/16"), "a 6to4 address (it maps IPv4)"},
	{netip.MustParsePrefix("192.88.99.0/24"), "a 6to4 relay anycast address"},
	{netip.MustParsePrefix("fec0::/10"), "a site-local address (deprecated)"},
	{netip.MustParsePrefix("100::/64"), "a discard-only address"},
	{netip.MustParsePrefix("2001:db8::/32"), "a documentation address"},
	{netip.MustParsePrefix("192.0.2.0/24"), "a documentation address"},
	{netip.MustParsePrefix("198.51.100.0/24"), "a documentation address"},
	{netip.MustParsePrefix("203.0.113.0/24"), "a documentation address"},
}

// addressRule names the non-public range ip is in; "" when ip is public.
func addressRule(ip net.IP) string {
	a, ok := netip.AddrFromSlice(ip)
	if !ok {
		return "not an IP address"
	}
	a = a.Unmap() // IPv4-mapped: checked as IPv4
	for _, r := range blockedRanges {
		if r.prefix.Contains(a) {
			return r.rule
		}
	}
	return ""
}

// privateAddress reports whether ip is outside the public internet.
func privateAddress(ip net.IP) bool { return addressRule(ip) != "" }

// guardedTransport is an HTTP transport for a source's requests. Unless
// allowPrivate, every connection it opens is refused with an
// *AddressError when the address dialled is not public (env.blocked
// replaces that check in tests). It uses no proxy.
func guardedTransport(allowPrivate bool, env Env) *http.Transport {
	dialer := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	if !allowPrivate {
		dialer.Control = func(_, address string, _ syscall.RawConn) error {
			return checkDialled(address, env.blocked)
		}
	}
	return &http.Transport{
		Proxy:                 nil, // a proxy would hide the address dialled
		DialContext:           dialer.DialContext,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: 30 * time.Second,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       30 * time.Second,
	}
}

// checkDialled refuses a dialled "host:port" outside the public internet;
// blocked, when not nil, decides instead of privateAddress.
func checkDialled(address string, blocked func(net.IP) bool) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return err
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return &AddressError{Addr: host, Rule: "not an IP address"}
	}
	rule := addressRule(ip)
	if blocked != nil {
		if !blocked(ip) {
			return nil
		}
		rule = cmp.Or(rule, "a private address")
	}
	if rule == "" {
		return nil
	}
	return &AddressError{Addr: host, Rule: rule}
}

// origin is a URL's scheme://host:port, lower case, with the default port
// written out, so two spellings of one server compare equal; "" when s is
// not an absolute URL.
func origin(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return ""
	}
	return urlOrigin(u)
}

func urlOrigin(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	if port == "" {
		switch scheme {
		case "http":
			port = "80"
		case "https":
			port = "443"
		}
	}
	return scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}
