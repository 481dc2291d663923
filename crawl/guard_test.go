package crawl

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/sift-search/sift/record"
)

func TestAddressRule(t *testing.T) {
	f := func(ip, want string) {
		t.Helper()
		if got := addressRule(net.ParseIP(ip)); !strings.HasPrefix(got, want) || (want == "") != (got == "") {
			t.Errorf("%s: %q, want %q", ip, got, want)
		}
	}
	f("127.0.0.1", "a loopback address")
	f("127.8.9.10", "a loopback address")
	f("::1", "a loopback address")
	f("::ffff:127.0.0.1", "a loopback address") // IPv4-mapped
	f("10.1.2.3", "a private address (RFC 1918)")
	f("172.31.255.255", "a private address (RFC 1918)")
	f("192.168.1.1", "a private address (RFC 1918)")
	f("::ffff:192.168.1.1", "a private address (RFC 1918)")
	f("169.254.169.254", "a link-local address") // cloud metadata
	f("::ffff:169.254.169.254", "a link-local address")
	f("fe80::1", "a link-local address")
	f("fd00:ec2::254", "a unique local address") // IPv6 metadata
	f("fc00::1", "a unique local address")
	f("0.0.0.0", "an unspecified")
	f("::", "the unspecified address")
	f("::127.0.0.1", "an IPv4-compatible address")
	f("100.64.0.1", "a carrier-grade NAT address")
	f("64:ff9b::a9fe:a9fe", "a NAT64 address")
	f("224.0.0.1", "a multicast address")
	f("255.255.255.255", "a reserved or broadcast address")
	f("8.8.8.8", "")
	f("2606:4700:4700::1111", "")
	f("::ffff:8.8.8.8", "")

	err := checkDialled("127.0.0.1:80", nil)
	if want := "refused: 127.0.0.1 is a loopback address; set allowPrivate to reach private addresses"; err == nil || err.Error() != want {
		t.Fatalf("error %q, want %q", err, want)
	}
	if err := checkDialled("[::ffff:169.254.169.254]:80", nil); err == nil || !strings.Contains(err.Error(), "link-local") {
		t.Fatalf("mapped metadata address: %v", err)
	}
	if err := checkDialled("93.184.216.34:443", nil); err != nil {
		t.Fatalf("a public address: %v", err)
	}
}

func TestOrigin(t *testing.T) {
	same := [][2]string{
		{"https://API.example/v1", "https://api.example:443/v2"},
		{"http://x.example", "HTTP://x.example:80/"},
		{"http://[::1]:8080/a", "http://[::1]:8080/b"},
	}
	for _, c := range same {
		if origin(c[0]) != origin(c[1]) {
			t.Errorf("%s and %s: %q, %q", c[0], c[1], origin(c[0]), origin(c[1]))
		}
	}
	differ := [][2]string{
		{"https://x.example", "http://x.example"},
		{"http://x.example", "http://x.example:8080"},
		{"http://x.example", "http://sub.x.example"},
		{"http://127.0.0.1:80", "http://localhost:80"},
	}
	for _, c := range differ {
		if origin(c[0]) == origin(c[1]) {
			t.Errorf("%s and %s: both %q", c[0], c[1], origin(c[0]))
		}
	}
}

// connectorCase is one API connector: its fake platform, a config pointing
// a source at base ("http://host:port"), and the credential headers it
// sends.
type connectorCase struct {
	typ    string
	fake   func(t *testing.T) http.Handler
	config func(base string) map[string]any
	creds  map[string]string
}

var connectorCases = []connectorCase{
	{
		typ: "discord",
		fake: func(t *testing.T) http.Handler {
			f := newFakeDiscord(t)
			f.limited = false
			return http.HandlerFunc(f.serve)
		},
		config: func(base string) map[string]any {
			return map[string]any{"token": "secret-bot-token", "guildId": "81384788765712384", "apiBase": base + "/api/v10"}
		},
		creds: map[string]string{"Authorization": "Bot secret-bot-token"},
	},
	{
		typ: "slack",
		fake: func(t *testing.T) http.Handler {
			f := newFakeSlack(t)
			f.limited = false
			return http.HandlerFunc(f.serve)
		},
		config: func(base string) map[string]any {
			return map[string]any{"token": "xoxb-test", "apiBase": base + "/api"}
		},
		creds: map[string]string{"Authorization": "Bearer xoxb-test"},
	},
	{
		typ: "discourse",
		fake: func(t *testing.T) http.Handler {
			f := newFakeDiscourse(t)
			f.limited = false
			return http.HandlerFunc(f.serve)
		},
		config: func(base string) map[string]any {
			return map[string]any{"baseUrl": base, "apiKey": "forum-key", "apiUsername": "system"}
		},
		creds: map[string]string{"Api-Key": "forum-key", "Api-Username": "system"},
	},
	{
		typ: "github",
		fake: func(t *testing.T) http.Handler {
			f := newFakeGitHub(t)
			f.limited = false
			return http.HandlerFunc(f.serve)
		},
		config: func(base string) map[string]any {
			return map[string]any{"repo": "acme/gadget", "token": "ghp_test", "apiBase": base}
		},
		creds: map[string]string{"Authorization": "Bearer ghp_test"},
	},
}

// recorder is a server on a given address that keeps the headers of every
// request it gets.
type recorder struct {
	*httptest.Server
	mu      sync.Mutex
	headers []http.Header
}

// newRecorder serves h on addr ("127.0.0.1:0", "[::1]:0"); nil when the
// address cannot be listened on here.
func newRecorder(t *testing.T, addr string, h http.Handler) *recorder {
	t.Helper()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil
	}
	rec := &recorder{}
	rec.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.mu.Lock()
		rec.headers = append(rec.headers, r.Header.Clone())
		rec.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	rec.Listener.Close()
	rec.Listener = l
	rec.Start()
	t.Cleanup(rec.Close)
	return rec
}

func (r *recorder) requests() []http.Header {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]http.Header(nil), r.headers...)
}

func (r *recorder) port() string {
	_, port, _ := net.SplitHostPort(r.Listener.Addr().String())
	return port
}

// connectorSource stores a source of typ with cfg and returns its runner.
func connectorSource(t *testing.T, typ string, cfg map[string]any, env Env) *Runner {
	t.Helper()
	eng := webEngine(t)
	cfg, err := CheckConfig(typ, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eng.PutSource(record.Source{ID: "src", Name: "S", Type: typ, Enabled: true, Config: cfg}); err != nil {
		t.Fatal(err)
	}
	r := NewRunner(eng, RunnerOptions{Env: env})
	t.Cleanup(r.Close)
	return r
}

// refused checks that Test and Crawl of the runner's source fail with the
// guard's error naming want ("127.0.0.1 is a loopback address").
func refused(t *testing.T, r *Runner, want string) {
	t.Helper()
	tr, err := r.Test(t.Context(), "src")
	if err != nil || tr.OK || !strings.Contains(tr.Error, "; set allowPrivate to reach private addresses") || !strings.Contains(tr.Error, want) {
		t.Errorf("test: %+v %v, want it refused: %s", tr, err, want)
	}
	if _, err := r.Crawl("src", false); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("crawl: %v, want it refused: %s", err, want)
	}
}

func with(cfg map[string]any, k string, v any) map[string]any {
	cfg[k] = v
	return cfg
}

// TestConnectorsRefusePrivateAddresses: without allowPrivate no connector
// reaches a loopback address, whether given as IPv4, IPv6 or a name, and
// nothing reaches the server; with it, they work.
func TestConnectorsRefusePrivateAddresses(t *testing.T) {
	for _, c := range connectorCases {
		t.Run(c.typ, func(t *testing.T) {
			h := c.fake(t)
			v4 := newRecorder(t, "127.0.0.1:0", h)
			v6 := newRecorder(t, "[::1]:0", h)
			targets := []struct{ base, want string }{
				{v4.URL, "refused: 127.0.0.1 is a loopback address"},
				{"http://localhost:" + v4.port(), "is a loopback address"}, // 127.0.0.1 or ::1
				{"http://[::ffff:127.0.0.1]:" + v4.port(), "127.0.0.1 is a loopback address"},
				{"http://0.0.0.0:" + v4.port(), "refused: 0.0.0.0 is an unspecified"}, // Linux connects it to the host
				{"http://[::]:" + v4.port(), "refused: :: is the unspecified address"},
				{"http://169.254.169.254", "refused: 169.254.169.254 is a link-local address"}, // cloud metadata
				{"http://10.0.0.1:" + v4.port(), "refused: 10.0.0.1 is a private address (RFC 1918)"},
			}
			if v6 != nil {
				targets = append(targets, struct{ base, want string }{v6.URL, "refused: ::1 is a loopback address"})
			} else {
				t.Log("no IPv6 loopback here: [::1] not tried")
			}
			for _, target := range targets {
				refused(t, connectorSource(t, c.typ, c.config(target.base), Env{}), target.want)
			}
			if n := len(v4.requests()); n != 0 {
				t.Fatalf("%d requests reached the IPv4 server", n)
			}
			if v6 != nil && len(v6.requests()) != 0 {
				t.Fatalf("%d requests reached the IPv6 server", len(v6.requests()))
			}

			r := connectorSource(t, c.typ, with(c.config(v4.URL), "allowPrivate", true), Env{})
			if tr, err := r.Test(t.Context(), "src"); err != nil || !tr.OK {
				t.Fatalf("test with allowPrivate: %+v %v", tr, err)
			}
			if res, err := r.Crawl("src", false); err != nil || res.Messages == 0 {
				t.Fatalf("crawl with allowPrivate: %+v %v", res, err)
			}
			if len(v4.requests()) == 0 {
				t.Fatal("the server saw no request")
			}
		})
	}
}

// TestConnectorsRefuseRedirectInward: the guard is on the address dialled,
// so a public server's redirect to a private one is refused. The Env hook
// makes 127.0.0.1 public and 127.0.0.2 private here.
func TestConnectorsRefuseRedirectInward(t *testing.T) {
	only2 := func(ip net.IP) bool { return ip.Equal(net.ParseIP("127.0.0.2")) }
	for _, c := range connectorCases {
		t.Run(c.typ, func(t *testing.T) {
			inner := newRecorder(t, "127.0.0.2:0", c.fake(t))
			if inner == nil {
				t.Skip("cannot listen on 127.0.0.2 here")
			}
			outer := newRecorder(t, "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, inner.URL+r.URL.RequestURI(), http.StatusTemporaryRedirect)
			}))
			refused(t, connectorSource(t, c.typ, c.config(outer.URL), Env{blocked: only2}), "refused: 127.0.0.2 is a loopback address")
			if len(outer.requests()) == 0 || len(inner.requests()) != 0 {
				t.Fatalf("requests: %d to the public server, %d to the private one", len(outer.requests()), len(inner.requests()))
			}
			// The same redirect, with nothing refused, does reach it.
			r := connectorSource(t, c.typ, c.config(outer.URL), Env{blocked: func(net.IP) bool { return false }})
			r.Test(t.Context(), "src")
			if len(inner.requests()) == 0 {
				t.Fatal("the redirect was not followed at all")
			}
		})
	}
}

// TestConnectorsKeepCredentialsOnTheirOrigin: a redirect to another port or
// host is followed without the credential headers (Go itself would keep
// Authorization on another port); one to the same origin keeps them.
func TestConnectorsKeepCredentialsOnTheirOrigin(t *testing.T) {
	for _, c := range connectorCases {
		t.Run(c.typ, func(t *testing.T) {
			h := c.fake(t)
			other := newRecorder(t, "127.0.0.1:0", h)
			var moved *recorder // same origin: paths under /moved
			moved = newRecorder(t, "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if rest, ok := strings.CutPrefix(r.URL.Path, "/moved"); ok {
					r.URL.Path = rest
					h.ServeHTTP(w, r)
					return
				}
				http.Redirect(w, r, "/moved"+r.URL.RequestURI(), http.StatusTemporaryRedirect)
			}))
			targets := map[string]string{
				"another port": other.URL,
				"another host": "http://localhost:" + other.port(),
			}
			for name, to := range targets {
				from := newRecorder(t, "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					http.Redirect(w, r, to+r.URL.RequestURI(), http.StatusFound)
				}))
				r := connectorSource(t, c.typ, with(c.config(from.URL), "allowPrivate", true), Env{})
				before := len(other.requests())
				r.Test(t.Context(), "src")
				sent := from.requests()
				if len(sent) == 0 || len(other.requests()) == before {
					t.Fatalf("%s: the redirect was not followed", name)
				}
				for k, v := range c.creds {
					if sent[0].Get(k) != v {
						t.Fatalf("%s: the first request's %s is %q, want %q", name, k, sent[0].Get(k), v)
					}
				}
				for _, got := range other.requests()[before:] {
					for _, k := range []string{"Authorization", "Api-Key", "Api-Username"} {
						if got.Get(k) != "" {
							t.Errorf("%s: %s %q reached another origin", name, k, got.Get(k))
						}
					}
				}
			}
			r := connectorSource(t, c.typ, with(c.config(moved.URL), "allowPrivate", true), Env{})
			if tr, err := r.Test(t.Context(), "src"); err != nil || !tr.OK {
				t.Fatalf("same-origin redirect: %+v %v", tr, err)
			}
			for _, got := range moved.requests() {
				for k, v := range c.creds {
					if got.Get(k) != v {
						t.Fatalf("same origin: %s is %q, want %q", k, got.Get(k), v)
					}
				}
			}
		})
	}
}
