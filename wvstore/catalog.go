package wvstore

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sync"

	"github.com/go-openapi/strfmt"
	"github.com/sift-search/sift/record"
	"github.com/weaviate/weaviate/entities/models"
)

// The catalog is every source and channel record: what each read needs to
// name a hit's channel and source and to decide what callers without
// credentials may see. It is small beside the messages (channels number in
// the thousands), so each process keeps a copy and checks it is current
// with one read: every write that changes a source or a channel stores a
// fresh token in Meta after its change, and a process whose copy carries
// another token loads the catalog again. A read that starts after a write
// was acknowledged reads the write's token (QUORUM), so it sees the write.

// chanKey names a channel by source and platform id.
type chanKey struct{ source, id string }

type catalog struct {
	token    string
	sources  map[string]*record.Source // current versions, without cursors
	versions map[string]uint64
	chans    map[chanKey]*record.Channel // as stored (Hidden unset)
	bySlug   map[string]chanKey
	hidden   map[chanKey]bool
}

// catalogCache is a process's copy of the catalog.
type catalogCache struct {
	mu     sync.Mutex
	cached *catalog
}

const catalogKey = "catalog"

// cat returns a current catalog.
func (s *sources) cat(ctx context.Context) (*catalog, error) {
	props, _, err := getProps(ctx, s.c, s.class("Meta"), metaID(s.opts.Namespace, catalogKey))
	if err != nil {
		return nil, err
	}
	token, _ := props["value"].(string)
	s.cache.mu.Lock()
	c := s.cache.cached
	s.cache.mu.Unlock()
	if c != nil && c.token == token && token != "" {
		return c, nil
	}
	c, err = s.loadCatalog(ctx, token)
	if err != nil {
		return nil, err
	}
	s.cache.mu.Lock()
	s.cache.cached = c
	s.cache.mu.Unlock()
	return c, nil
}

func (s *sources) loadCatalog(ctx context.Context, token string) (*catalog, error) {
	c := &catalog{token: token, sources: map[string]*record.Source{}, versions: map[string]uint64{},
		chans: map[chanKey]*record.Channel{}, bySlug: map[string]chanKey{}, hidden: map[chanKey]bool{}}
	h, err := s.hints(ctx, "")
	if err != nil {
		return nil, err
	}
	for id, v := range h {
		if id == settingsID {
			continue
		}
		cur, err := s.latest(ctx, id, v)
		if err != nil {
			return nil, err
		}
		if cur.Rec != nil {
			c.sources[id], c.versions[id] = cur.Rec, cur.Version
		}
	}
	objs, err := s.getAll(ctx, getQuery{class: s.class("Channel"), fields: []string{"record"}})
	if err != nil {
		return nil, err
	}
	for _, o := range objs {
		var ch record.Channel
		if err := decodeRecord(o, &ch); err != nil {
			return nil, err
		}
		if c.sources[ch.SourceID] == nil {
			continue // its source's deletion is under way
		}
		k := chanKey{ch.SourceID, ch.ID}
		c.chans[k] = &ch
		c.bySlug[ch.Slug] = k
	}
	for k, ch := range c.chans {
		c.hidden[k] = record.ChannelHiddenBy(c.sources[k.source], ch, func(id string) *record.Channel {
			return c.chans[chanKey{k.source, id}]
		})
	}
	return c, nil
}

// changed records that the catalog changed: a fresh token, and this
// process's copy dropped.
func (s *sources) changed(ctx context.Context) error {
	var b [12]byte
	rand.Read(b[:])
	err := s.upsert(ctx, []*models.Object{{Class: s.class("Meta"), ID: strfmt.UUID(metaID(s.opts.Namespace, catalogKey)),
		Properties: map[string]any{"key": catalogKey, "value": hex.EncodeToString(b[:])}}})
	s.cache.mu.Lock()
	s.cache.cached = nil
	s.cache.mu.Unlock()
	if err != nil {
		return err
	}
	return s.wrote(ctx)
}

// channel returns a copy of a channel with Hidden set.
func (c *catalog) channel(k chanKey) (record.Channel, bool) {
	ch := c.chans[k]
	if ch == nil {
		return record.Channel{}, false
	}
	out := *ch
	out.Hidden = c.hidden[k]
	return out, true
}

// chanRef is the "chan" property of a channel's messages: one field value
// for source and channel.
func chanRef(source, id string) string {
	h := sha256.Sum256([]byte(source + "\x00" + id))
	return hex.EncodeToString(h[:12])
}

// hiddenContent is what anonymous reads of messages leave out: sources
// none of whose channels show, and the hidden channels of the others.
func (c *catalog) hiddenContent() (sources []string, chans []string) {
	shows := map[string]bool{}
	for k, h := range c.hidden {
		if !h {
			shows[k.source] = true
		}
	}
	for id := range c.sources {
		if !shows[id] {
			sources = append(sources, id)
		}
	}
	for k, h := range c.hidden {
		if h && shows[k.source] {
			chans = append(chans, chanRef(k.source, k.id))
		}
	}
	return sources, chans
}

// hiddenSources lists the sources whose documents are hidden.
func (c *catalog) hiddenDocSources() []string {
	var out []string
	for id, src := range c.sources {
		if src.Hidden() {
			out = append(out, id)
		}
	}
	return out
}

// A slug is claimed for one channel (or document) by an object in Meta
// whose key is the slug, written only by the winner of an alias named
// after it: creating an alias goes through Weaviate's Raft, and of
// concurrent creators exactly one succeeds (TestAliasCreationIsLinearizable),
// in a few milliseconds where a collection takes 150. The winner writes
// the claim, then drops the alias; one who takes the alias later finds the
// claim and stands down. A winner that died before writing its claim
// leaves the slug to nobody: uniqueness holds, and the next writer takes
// the next free slug.

func (s *sources) claimKey(kind, slug string) string { return "slug:" + kind + ":" + slug }

// claim tries to claim slug for owner; it reports whether owner holds it.
func (s *sources) claim(ctx context.Context, kind, slug, owner string) (bool, error) {
	key := s.claimKey(kind, slug)
	id := metaID(s.opts.Namespace, key)
	holder := func() (string, bool, error) {
		p, ok, err := getProps(ctx, s.c, s.class("Meta"), id)
		v, _ := p["value"].(string)
		return v, ok, err
	}
	if h, ok, err := holder(); err != nil || ok {
		return h == owner, err
	}
	alias := s.opts.Namespace + "Claim" + hashKey(key)
	won, err := s.takeAlias(ctx, alias)
	if err != nil {
		return false, err
	}
	if !won {
		h, _, err := holder()
		return h == owner, err
	}
	h, ok, err := holder()
	if err != nil || ok {
		s.dropAlias(ctx, alias)
		return h == owner, err
	}
	err = s.upsert(ctx, []*models.Object{{Class: s.class("Meta"), ID: strfmt.UUID(id),
		Properties: map[string]any{"key": key, "value": owner}}})
	if err != nil {
		return false, err
	}
	s.dropAlias(ctx, alias)
	return true, nil
}

// release gives a slug up.
func (s *sources) release(ctx context.Context, kind, slug string) error {
	return s.deleteObject(ctx, s.class("Meta"), metaID(s.opts.Namespace, s.claimKey(kind, slug)))
}

// claimSlug returns a slug of name (fallback when it has none) that owner
// holds: the first free one after those taken says are used, as
// record.SlugFor makes it (hiddenKey: the record's, when it is hidden).
func (s *sources) claimSlug(ctx context.Context, kind, name, fallback, hiddenKey, owner string, taken func(string) bool) (string, error) {
	lost := map[string]bool{}
	for range 1000 {
		slug := record.SlugFor(name, fallback, hiddenKey, func(x string) bool { return lost[x] || taken(x) })
		ok, err := s.claim(ctx, kind, slug, owner)
		if err != nil {
			return "", err
		}
		if ok {
			return slug, nil
		}
		lost[slug] = true
	}
	return "", fmt.Errorf("no free slug for %q", name)
}

func hashKey(key string) string {
	h := sha256.Sum256([]byte(key))
	return hex.EncodeToString(h[:12])
}
