package wvstore

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"github.com/weaviate/weaviate-go-client/v5/weaviate"
	"github.com/weaviate/weaviate-go-client/v5/weaviate/auth"
)

// Store is Sift's store in a Weaviate cluster.
type Store struct {
	opts Options
	c    *weaviate.Client
}

// Open connects to the cluster at opts.URL and creates or migrates Sift's
// collections.
func Open(ctx context.Context, opts Options) (*Store, error) {
	opts.defaults()
	u, err := url.Parse(opts.URL)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("WEAVIATE_URL %q: give http(s)://host:port", opts.URL)
	}
	cfg := weaviate.Config{Host: u.Host, Scheme: u.Scheme, Timeout: time.Minute}
	if opts.APIKey != "" {
		cfg.AuthConfig = auth.ApiKey{Value: opts.APIKey}
	}
	c, err := weaviate.NewClient(cfg)
	if err != nil {
		return nil, fmt.Errorf("weaviate client: %w", err)
	}
	if err := migrate(ctx, c, opts); err != nil {
		return nil, err
	}
	return &Store{opts: opts, c: c}, nil
}
