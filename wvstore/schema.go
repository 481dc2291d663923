// Package wvstore keeps Sift's records in a Weaviate cluster: the second
// store behind the seam (docs/store.md), for communities that outgrow one
// machine. This file is the schema: the collections Sift creates and
// migrates at start-up, safely when several Sift processes start at once
// against an empty cluster.
package wvstore

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/weaviate/weaviate-go-client/v5/weaviate"
	"github.com/weaviate/weaviate-go-client/v5/weaviate/fault"
	"github.com/weaviate/weaviate/entities/models"
)

// SchemaVersion is the version of the collections below. A cluster whose
// recorded version is newer was written by a newer Sift and is refused; an
// older one is migrated (properties added) and its version raised.
//
//	1: the collections below
//	2: "len" on messages and documents, their length in words (phrase
//	   scores need the mean; records written before lack it until
//	   written again, so a cluster of version 1 is best migrated afresh)
//	3: "pairs" on messages and documents, the pairs of a stop word and
//	   another word they hold at consecutive positions
//	   (analysis.IndexPairs), which narrow the candidates of a phrase
//	   with stop words to nearly its holders. Records written before
//	   lack them, so a cluster raised from an older version keeps
//	   filtering phrases by their words (pairsMetaKey)
const SchemaVersion = 3

// prop describes one property.
type prop struct {
	name, dataType string
	tokenization   string // for text: "field" (exact), "whitespace" (Sift's analysed terms)
	searchable     bool   // in the BM25 index
	filterable     bool   // in the filter index (always for a field, a date or an int)
}

// collection describes one collection, named Namespace+suffix.
type collection struct {
	suffix  string
	props   []prop
	vectors bool // objects carry vectors Sift computes
}

var (
	field = func(name string) prop { return prop{name: name, dataType: "text", tokenization: "field"} }
	terms = func(name string) prop {
		return prop{name: name, dataType: "text", tokenization: "whitespace", searchable: true}
	}
	stored = func(name, typ string) prop { return prop{name: name, dataType: typ} }
	// pairs are analysis.IndexPairs: filtered on, never ranked.
	pairs = prop{name: "pairs", dataType: "text", tokenization: "whitespace", filterable: true}
)

// collections is the schema: records keep their Sift form in "record" (JSON,
// not indexed) beside the properties queries filter or rank on.
var collections = []collection{
	{suffix: "Meta", props: []prop{field("key"), stored("value", "text")}},
	{suffix: "Source", props: []prop{field("sourceId"), stored("version", "int"), stored("record", "text")}},
	{suffix: "Cursor", props: []prop{field("sourceId"), stored("cursor", "text")}},
	{suffix: "Channel", props: []prop{field("sourceId"), field("channelId"), field("slug"), field("parentId"), stored("record", "text")}},
	{suffix: "Message", props: []prop{
		field("sourceId"), field("channelId"), field("chan"), field("msgId"), field("author"), field("authorName"),
		terms("terms"), stored("ts", "date"), stored("record", "text"), stored("len", "int"), pairs,
	}},
	{suffix: "Document", props: []prop{
		field("sourceId"), field("docId"), field("docKey"), field("slug"), terms("terms"), stored("updated", "date"), stored("record", "text"),
		stored("len", "int"), pairs,
	}},
	{suffix: "Change", props: []prop{field("owner"), field("sourceId"), stored("at", "int")}},
	{suffix: "Chunk", vectors: true, props: []prop{
		field("sourceId"), field("owner"), terms("terms"), stored("record", "text"),
		field("kind"), field("chan"), field("embedder"), stored("seq", "int"), stored("span", "text"), stored("hash", "text"), stored("textHash", "text"),
	}},
}

// Options configure the connection and the collections.
type Options struct {
	URL         string // REST address, e.g. http://127.0.0.1:8080
	GRPCAddr    string // gRPC host:port; when set, batches go over gRPC
	APIKey      string
	Namespace   string  // collection-name prefix, default "Sift"
	Replication int     // replication factor, default 1
	Shards      int     // shards per collection, default 1
	K1, B       float32 // BM25 parameters, the memory store's
	// NoPhrasePairs makes a new cluster without the pairs that narrow
	// phrases' candidates (pairsMetaKey): faster imports, slower
	// phrases. A cluster keeps the choice it was made with.
	NoPhrasePairs bool
}

func (o *Options) defaults() {
	if o.Namespace == "" {
		o.Namespace = "Sift"
	}
	if o.Replication <= 0 {
		o.Replication = 1
	}
	if o.Shards <= 0 {
		o.Shards = 1
	}
	if o.K1 == 0 {
		o.K1, o.B = 1.2, 0.75
	}
}

// class builds the Weaviate class of c.
func (o *Options) class(c collection) *models.Class {
	cl := &models.Class{
		Class:      o.Namespace + c.suffix,
		Vectorizer: "none",
		InvertedIndexConfig: &models.InvertedIndexConfig{
			Bm25:            &models.BM25Config{K1: o.K1, B: o.B},
			IndexTimestamps: false,
			// Sift's analysed words keep stop words; its queries drop
			// them unless there is nothing else (analysis.CompileSearch).
			Stopwords: &models.StopwordConfig{Preset: "none"},
		},
		// A replica that missed a deletion (down at the time) must not
		// bring the object back when it returns: the later of a deletion
		// and a write wins.
		ReplicationConfig: &models.ReplicationConfig{Factor: int64(o.Replication), AsyncEnabled: o.Replication > 1,
			DeletionStrategy: "TimeBasedResolution"},
	}
	cl.ShardingConfig = map[string]any{"desiredCount": o.Shards}
	if c.vectors {
		cl.VectorIndexType = "hnsw"
	}
	for _, p := range c.props {
		yes, no := true, false
		mp := &models.Property{Name: p.name, DataType: []string{p.dataType}, Tokenization: p.tokenization}
		switch {
		case p.searchable:
			// Filterable too: exclusions, the phrases' words and totals
			// are filters on the words.
			mp.IndexSearchable, mp.IndexFilterable = &yes, &yes
		case p.tokenization == "field" || p.filterable:
			mp.IndexSearchable, mp.IndexFilterable = &no, &yes
		case p.dataType == "date" || p.dataType == "int":
			mp.IndexFilterable, mp.IndexRangeFilters = &yes, &yes
		default:
			mp.IndexSearchable, mp.IndexFilterable = &no, &no
		}
		cl.Properties = append(cl.Properties, mp)
	}
	return cl
}

// ErrNewerSchema: the cluster's collections were made by a newer Sift.
var ErrNewerSchema = errors.New("the cluster's Sift collections are of a newer schema version")

// migrate creates the collections that are missing, adds the properties
// that are missing, and records SchemaVersion; it reports whether every
// record carries its pairs (recordVersion). Several processes may run it
// at once: a collection or property another one created meanwhile ("already
// exists") is read back and checked instead.
func migrate(ctx context.Context, c *weaviate.Client, o Options) (pairs bool, err error) {
	for _, col := range collections {
		want := o.class(col)
		have, err := getClass(ctx, c, want.Class)
		if err != nil {
			return false, err
		}
		if have == nil {
			err := c.Schema().ClassCreator().WithClass(want).Do(ctx)
			if err != nil && !alreadyExists(err) {
				return false, fmt.Errorf("create collection %s: %w", want.Class, err)
			}
			if have, err = getClass(ctx, c, want.Class); err != nil {
				return false, err
			}
			if have == nil {
				return false, fmt.Errorf("collection %s: created, then not found", want.Class)
			}
		}
		if err := addMissing(ctx, c, want, have); err != nil {
			return false, err
		}
	}
	return recordVersion(ctx, c, o)
}

// getClass returns a class, or nil when it does not exist.
func getClass(ctx context.Context, c *weaviate.Client, name string) (*models.Class, error) {
	cl, err := c.Schema().ClassGetter().WithClassName(name).Do(ctx)
	var wce *fault.WeaviateClientError
	if errors.As(err, &wce) && wce.StatusCode == 404 {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read collection %s: %w", name, err)
	}
	return cl, nil
}

// addMissing adds want's properties that have lacks, and refuses a
// property of the same name and another type or tokenization.
func addMissing(ctx context.Context, c *weaviate.Client, want, have *models.Class) error {
	byName := map[string]*models.Property{}
	for _, p := range have.Properties {
		byName[p.Name] = p
	}
	for _, p := range want.Properties {
		h := byName[p.Name]
		if h == nil {
			err := c.Schema().PropertyCreator().WithClassName(want.Class).WithProperty(p).Do(ctx)
			if err != nil && !alreadyExists(err) {
				return fmt.Errorf("add %s.%s: %w", want.Class, p.Name, err)
			}
			continue
		}
		if strings.Join(h.DataType, ",") != strings.Join(p.DataType, ",") || p.Tokenization != "" && h.Tokenization != p.Tokenization {
			return fmt.Errorf("collection %s: property %s is %v/%s, Sift needs %v/%s (another application's collection? set WEAVIATE_NAMESPACE)",
				want.Class, p.Name, h.DataType, h.Tokenization, p.DataType, p.Tokenization)
		}
	}
	return nil
}

func alreadyExists(err error) bool {
	var wce *fault.WeaviateClientError
	return errors.As(err, &wce) && wce.StatusCode == 422 && strings.Contains(wce.Msg, "already exists")
}

// statusOf returns the HTTP status of a client error, 0 for another error.
func statusOf(err error) int {
	var wce *fault.WeaviateClientError
	if errors.As(err, &wce) {
		return wce.StatusCode
	}
	return 0
}

// metaID is the object id of a Meta key: the same on every process.
func metaID(ns, key string) string {
	return uuid.NewSHA1(uuid.NameSpaceURL, []byte("sift:"+ns+":meta:"+key)).String()
}

// pairsMetaKey is the Meta key that says whether every message and
// document of the cluster carries its pairs ("all"), so every process
// writes them, or not ("none", or no key). The first process to make the
// collections decides, at a version that has them (3 on), by
// Options.NoPhrasePairs; a cluster raised from an older version has no
// key, as its records lack them. The pairs cost imports a fifth to a
// third of their speed (docs/benchmarks.md).
const pairsMetaKey = "pairs"

// recordVersion stores SchemaVersion in Meta unless a version is there:
// an older one is raised (the collections were just migrated), a newer one
// refused. It reports whether the records carry their pairs
// (pairsMetaKey).
func recordVersion(ctx context.Context, c *weaviate.Client, o Options) (pairs bool, err error) {
	class, id := o.Namespace+"Meta", metaID(o.Namespace, "schema")
	pairsID := metaID(o.Namespace, pairsMetaKey)
	props, ok, err := getProps(ctx, c, class, id)
	if err != nil {
		return false, fmt.Errorf("read the schema version: %w", err)
	}
	want := map[string]any{"key": "schema", "value": fmt.Sprint(SchemaVersion)}
	if !ok {
		// A new cluster. The pairs' key goes first, so a process that
		// reads the version finds it; of processes starting at once,
		// the first to write it decides for all.
		choice := "all"
		if o.NoPhrasePairs {
			choice = "none"
		}
		existed, err := createObject(ctx, c, class, pairsID, map[string]any{"key": pairsMetaKey, "value": choice})
		if err != nil {
			return false, fmt.Errorf("record the pairs: %w", err)
		}
		if _, err := createObject(ctx, c, class, id, want); err != nil {
			return false, fmt.Errorf("record the schema version: %w", err)
		}
		if !existed {
			return choice == "all", nil
		}
		return hasPairs(ctx, c, class, pairsID)
	}
	var v int
	fmt.Sscan(fmt.Sprint(props["value"]), &v)
	switch {
	case v > SchemaVersion:
		return false, fmt.Errorf("%w: %d, this Sift knows %d", ErrNewerSchema, v, SchemaVersion)
	case v == SchemaVersion:
		return hasPairs(ctx, c, class, pairsID)
	}
	if err := c.Data().Updater().WithClassName(class).WithID(id).WithMerge().WithProperties(want).Do(ctx); err != nil {
		return false, fmt.Errorf("raise the schema version: %w", err)
	}
	return false, nil
}

// hasPairs reads the pairs' key (pairsMetaKey).
func hasPairs(ctx context.Context, c *weaviate.Client, class, id string) (bool, error) {
	p, _, err := getProps(ctx, c, class, id)
	if err != nil {
		return false, fmt.Errorf("read the pairs' key: %w", err)
	}
	return p["value"] == "all", nil
}
