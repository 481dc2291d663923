package crawl

import (
	"maps"
	"testing"
)

// TestMergeConfigSecretsStayWithTheirServer: a patch that moves apiBase or
// baseUrl to another origin drops the stored secrets, unless it sends new
// ones; other patches keep them.
func TestMergeConfigSecretsStayWithTheirServer(t *testing.T) {
	stored := map[string]any{"token": "t0", "guildId": "1", "apiBase": "https://api.example/v1"}
	f := func(name string, stored, patch, want map[string]any) {
		t.Helper()
		if got := MergeConfig(stored, patch); !maps.Equal(got, want) {
			t.Errorf("%s: %v, want %v", name, got, want)
		}
	}
	f("another host", stored, map[string]any{"apiBase": "https://evil.example/v1"},
		map[string]any{"guildId": "1", "apiBase": "https://evil.example/v1"})
	f("another port", stored, map[string]any{"apiBase": "https://api.example:8443/v1"},
		map[string]any{"guildId": "1", "apiBase": "https://api.example:8443/v1"})
	f("another scheme", stored, map[string]any{"apiBase": "http://api.example/v1"},
		map[string]any{"guildId": "1", "apiBase": "http://api.example/v1"})
	f("a subdomain", stored, map[string]any{"apiBase": "https://x.api.example/v1"},
		map[string]any{"guildId": "1", "apiBase": "https://x.api.example/v1"})
	f("masked token sent back", stored, map[string]any{"apiBase": "https://evil.example", "token": Masked},
		map[string]any{"guildId": "1", "apiBase": "https://evil.example"})
	f("back to the default", stored, map[string]any{"apiBase": nil},
		map[string]any{"guildId": "1"})
	f("from the default", map[string]any{"token": "t0", "repo": "a/b"}, map[string]any{"apiBase": "https://ghe.example/api/v3"},
		map[string]any{"repo": "a/b", "apiBase": "https://ghe.example/api/v3"})
	f("new token with it", stored, map[string]any{"apiBase": "https://other.example", "token": "t1"},
		map[string]any{"token": "t1", "guildId": "1", "apiBase": "https://other.example"})

	f("same origin, another path", stored, map[string]any{"apiBase": "https://API.example:443/v2"},
		map[string]any{"token": "t0", "guildId": "1", "apiBase": "https://API.example:443/v2"})
	f("other fields", stored, map[string]any{"guildId": "2", "token": Masked},
		map[string]any{"token": "t0", "guildId": "2", "apiBase": "https://api.example/v1"})
	f("no apiBase either side", map[string]any{"token": "t0", "guildId": "1"}, map[string]any{"apiBase": nil},
		map[string]any{"token": "t0", "guildId": "1"})

	forum := map[string]any{"baseUrl": "https://forum.example", "apiKey": "k0", "apiUsername": "system"}
	f("discourse moved", forum, map[string]any{"baseUrl": "https://elsewhere.example"},
		map[string]any{"baseUrl": "https://elsewhere.example", "apiUsername": "system"})
	f("discourse moved with a key", forum, map[string]any{"baseUrl": "https://elsewhere.example", "apiKey": "k1"},
		map[string]any{"baseUrl": "https://elsewhere.example", "apiKey": "k1", "apiUsername": "system"})
	f("discourse renamed user", forum, map[string]any{"apiUsername": "bot"},
		map[string]any{"baseUrl": "https://forum.example", "apiKey": "k0", "apiUsername": "bot"})
}
