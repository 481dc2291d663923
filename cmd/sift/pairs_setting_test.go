package main

import (
	"flag"
	"strings"
	"testing"

	"github.com/sift-search/sift/wvstore"
)

// TestPhrasePairsSetting: WEAVIATE_PHRASE_PAIRS defaults to true, is
// turned off by the variable or the flag (the flag wins), and refuses a
// value that is not a boolean; sift migrate reads it too.
func TestPhrasePairsSetting(t *testing.T) {
	for _, c := range []struct {
		env, args []string
		off       bool
		bad       string
	}{
		{},
		{env: []string{"WEAVIATE_PHRASE_PAIRS=false"}, off: true},
		{env: []string{"WEAVIATE_PHRASE_PAIRS=true"}},
		{args: []string{"--weaviate-phrase-pairs=false"}, off: true},
		{env: []string{"WEAVIATE_PHRASE_PAIRS=false"}, args: []string{"--weaviate-phrase-pairs"}},
		{env: []string{"WEAVIATE_PHRASE_PAIRS=sometimes"}, bad: `WEAVIATE_PHRASE_PAIRS="sometimes" is not a boolean`},
		{args: []string{"--weaviate-phrase-pairs=often"}, bad: "often"},
	} {
		t.Run(strings.Join(append(c.env, c.args...), " "), func(t *testing.T) {
			for _, kv := range c.env { // restored when the subtest ends
				k, v, _ := strings.Cut(kv, "=")
				t.Setenv(k, v)
			}
			cfg, err := parseServe(c.args)
			switch {
			case c.bad != "" && (err == nil || !strings.Contains(err.Error(), c.bad)):
				t.Errorf("%v %v: %v, want %q", c.env, c.args, err, c.bad)
			case c.bad == "" && err != nil:
				t.Errorf("%v %v: %v", c.env, c.args, err)
			case c.bad == "" && cfg.WeaviateNoPairs != c.off:
				t.Errorf("%v %v: pairs off %v, want %v", c.env, c.args, cfg.WeaviateNoPairs, c.off)
			}
			if c.bad == "" {
				var o wvstore.Options
				b := &binder{fs: flag.NewFlagSet("migrate", flag.ContinueOnError)}
				clusterFlags(b, &o, "")
				if err := b.fs.Parse(c.args); err != nil || o.NoPhrasePairs != c.off {
					t.Errorf("migrate %v %v: %v, pairs off %v, want %v", c.env, c.args, err, o.NoPhrasePairs, c.off)
				}
			}
		})
	}
}
