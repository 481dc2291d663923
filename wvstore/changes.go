package wvstore

import (
	"context"
	"time"

	"github.com/go-openapi/strfmt"
	"github.com/weaviate/weaviate/entities/models"
)

// The change log the semantic indexer follows: one object per channel or
// document whose content changed, holding when it last did (unix
// microseconds; last writer wins). Every write of messages, documents or
// channels marks what it touched after the write itself, so an indexer
// that reads the marks finds the content already there; a process that
// dies between the two leaves a write unmarked until the content is
// written again (the indexer's full pass, docs/weaviate.md, catches it).

// contentChanged marks channels and documents (owners, as channelOwner
// and documentOwner name them, with their sources) as changed now.
func (s *content) contentChanged(ctx context.Context, owners map[string]string) error {
	if len(owners) == 0 {
		return nil
	}
	at := time.Now().UnixMicro()
	objs := make([]*models.Object, 0, len(owners))
	for owner, source := range owners {
		objs = append(objs, &models.Object{Class: s.class("Change"), ID: strfmt.UUID(s.objID("change", owner)),
			Properties: map[string]any{"owner": owner, "sourceId": source, "at": at}})
	}
	return s.upsert(ctx, objs)
}
