package wvstore

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"

	"github.com/weaviate/weaviate-go-client/v5/weaviate/alias"
	"github.com/weaviate/weaviate/entities/models"
)

// A step is a change that exactly one of several writers may make — a
// source's move from one version to the next, a new term of the crawl
// lease. Weaviate has no conditional write, but a collection's creation
// goes through its Raft: of concurrent creators of one name, exactly one
// succeeds (TestClassCreationIsLinearizable). So taking a step is creating
// a collection named after it, whose description carries the step's
// intent: the record its winner is about to write. A loser, or anyone who
// finds the step taken and its write not done (its winner died half-way),
// reads the intent and completes the write, which is idempotent.

// stepPrefix names the step collections: Namespace + "Step" + hash.
const stepPrefix = "Step"

// stepClass returns the collection name of the step key.
func (s *core) stepClass(key string) string {
	h := sha256.Sum256([]byte(key))
	return s.opts.Namespace + stepPrefix + hex.EncodeToString(h[:12])
}

// takeStep tries to take the step key with intent. It reports whether this
// call took it; when another writer had, it returns that writer's intent.
func (s *core) takeStep(ctx context.Context, key string, intent []byte) (won bool, theirs []byte, err error) {
	name := s.stepClass(key)
	desc := "sift step " + key + "\n" + base64.StdEncoding.EncodeToString(intent)
	err = s.c.Schema().ClassCreator().WithClass(&models.Class{
		Class: name, Description: desc, Vectorizer: "none",
		Properties:        []*models.Property{{Name: "step", DataType: []string{"text"}}},
		ReplicationConfig: &models.ReplicationConfig{Factor: int64(s.opts.Replication)},
	}).Do(ctx)
	if err == nil {
		return true, intent, nil
	}
	if !alreadyExists(err) {
		return false, nil, fmt.Errorf("take step %s: %w", key, err)
	}
	theirs, err = s.stepIntent(ctx, key)
	return false, theirs, err
}

// stepIntent returns the intent of a step taken, or nil when it is not.
func (s *core) stepIntent(ctx context.Context, key string) ([]byte, error) {
	cl, err := getClass(ctx, s.c, s.stepClass(key))
	if err != nil || cl == nil {
		return nil, err
	}
	head := "sift step " + key + "\n"
	if len(cl.Description) < len(head) || cl.Description[:len(head)] != head {
		return nil, fmt.Errorf("step collection %s holds another step (%.60q)", cl.Class, cl.Description)
	}
	intent, err := base64.StdEncoding.DecodeString(cl.Description[len(head):])
	if err != nil {
		return nil, fmt.Errorf("step %s: %w", key, err)
	}
	return intent, nil
}

// dropStep removes a step no writer can race for any more (one before the
// last of its record). A step already gone is fine.
func (s *core) dropStep(ctx context.Context, key string) error {
	err := s.c.Schema().ClassDeleter().WithClassName(s.stepClass(key)).Do(ctx)
	if err != nil && !notFound(err) {
		return fmt.Errorf("drop step %s: %w", key, err)
	}
	return nil
}

func notFound(err error) bool { return statusOf(err) == 404 }

// takeAlias creates the alias name (of the Meta collection) and reports
// whether this call created it: of concurrent creators exactly one does.
func (s *core) takeAlias(ctx context.Context, name string) (bool, error) {
	err := s.c.Alias().AliasCreator().WithAlias(&alias.Alias{Alias: name, Class: s.class("Meta")}).Do(ctx)
	if err == nil {
		return true, nil
	}
	if alreadyExists(err) {
		return false, nil
	}
	return false, fmt.Errorf("take alias %s: %w", name, err)
}

// dropAlias removes an alias; failing leaves a slug to nobody, not to two.
func (s *core) dropAlias(ctx context.Context, name string) {
	s.c.Alias().AliasDeleter().WithAliasName(name).Do(ctx)
}
