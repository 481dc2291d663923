package wvstore

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/sift-search/sift/record"
	"github.com/weaviate/weaviate-go-client/v5/weaviate/graphql"
	"github.com/weaviate/weaviate/entities/models"
)

// Sources are kept as append-only versions: each version is an object of
// its own (a deterministic id of source and version), the current one is
// the highest, a deletion is a tombstone version. A version is written
// only by the winner of the step "from the version before" (step.go), so
// two writers never both move a source on; completing a step's write late
// never overwrites a newer version. Versions are kept (a source changes a
// few times a day): a writer that takes a long-dropped step again finds the
// version it would write and stands down. Versions keep rising across a deletion
// and a re-creation, as the memory store's do, so a compare-and-set read
// before the deletion cannot land on the new source. Reads and writes are
// at consistency QUORUM.

// opTimeout bounds one store call on the cluster.
const opTimeout = time.Minute

// sourceVersion is one stored version; rec is nil for a tombstone.
type sourceVersion struct {
	Version uint64         `json:"version"`
	Rec     *record.Source `json:"record,omitempty"`
}

func (s *sources) sourceObjID(id string, v uint64) string {
	return uuid.NewSHA1(uuid.NameSpaceURL, []byte("sift:"+s.opts.Namespace+":source:"+id+":"+strconv.FormatUint(v, 10))).String()
}

func sourceStep(id string, from uint64) string {
	return "source/" + id + "/from/" + strconv.FormatUint(from, 10)
}

// getVersion reads version v of a source: ok false when it is not written.
func (s *sources) getVersion(ctx context.Context, id string, v uint64) (sv sourceVersion, ok bool, err error) {
	props, ok, err := getProps(ctx, s.c, s.opts.Namespace+"Source", s.sourceObjID(id, v))
	if err != nil || !ok {
		return sv, false, err
	}
	rec, _ := props["record"].(string)
	if err := json.Unmarshal([]byte(rec), &sv); err != nil || sv.Version != v {
		return sv, false, fmt.Errorf("source %q version %d: a damaged record (%v)", id, v, err)
	}
	return sv, true, nil
}

// sourcePage is how many version objects a listing reads per query, at
// most maxResults (a variable for tests).
var sourcePage = 1000

// hints returns the highest version each source's objects show to a
// query, which may lag: latest probes on from there (no version is ever
// deleted, so the probe always reaches the newest). For one source it asks
// for its highest version; for all, it pages through every version object
// (a source changes a few times a day, so they stay few).
func (s *sources) hints(ctx context.Context, id string) (map[string]uint64, error) {
	class := s.opts.Namespace + "Source"
	out := map[string]uint64{}
	add := func(res *models.GraphQLResponse, err error) ([]map[string]any, error) {
		if err == nil && len(res.Errors) > 0 {
			err = errors.New(res.Errors[0].Message)
		}
		if err != nil {
			return nil, fmt.Errorf("list sources: %w", err)
		}
		objs := getObjects(res, class)
		for _, o := range objs {
			sid, _ := o["sourceId"].(string)
			v, _ := o["version"].(float64)
			out[sid] = max(out[sid], uint64(v))
		}
		return objs, nil
	}
	fields := []graphql.Field{{Name: "sourceId"}, {Name: "version"}, {Name: "_additional", Fields: []graphql.Field{{Name: "id"}}}}
	if id != "" {
		_, err := add(s.c.GraphQL().Get().WithClassName(class).WithFields(fields...).WithWhere(eqText("sourceId", id)).
			WithSort(graphql.Sort{Path: []string{"version"}, Order: graphql.Desc}).WithLimit(1).Do(ctx))
		return out, err
	}
	page := perQuery(sourcePage)
	after := ""
	for {
		q := s.c.GraphQL().Get().WithClassName(class).WithFields(fields...).WithLimit(page)
		if after != "" {
			q = q.WithAfter(after)
		}
		objs, err := add(q.Do(ctx))
		if err != nil {
			return nil, err
		}
		if len(objs) < page {
			return out, nil
		}
		extra, _ := objs[len(objs)-1]["_additional"].(map[string]any)
		if after, _ = extra["id"].(string); after == "" {
			return nil, errors.New("list sources: a page without object ids")
		}
	}
}

// latest returns a source's current version (0 and no record when it was
// never written): from the query's hint, probing the next versions at
// QUORUM until one is missing.
func (s *sources) latest(ctx context.Context, id string, hint uint64) (sourceVersion, error) {
	cur := sourceVersion{}
	if hint > 0 {
		sv, ok, err := s.getVersion(ctx, id, hint)
		if err != nil {
			return cur, err
		}
		if ok {
			cur = sv
		}
	}
	for {
		sv, ok, err := s.getVersion(ctx, id, cur.Version+1)
		if err != nil {
			return cur, err
		}
		if !ok {
			return cur, nil
		}
		cur = sv
	}
}

// current returns a source's current version.
func (s *sources) current(ctx context.Context, id string) (sourceVersion, error) {
	h, err := s.hints(ctx, id)
	if err != nil {
		return sourceVersion{}, err
	}
	return s.latest(ctx, id, h[id])
}

// writeVersion stores sv (idempotent: the same version always holds the
// same record, its step's intent).
func (s *sources) writeVersion(ctx context.Context, id string, sv sourceVersion) error {
	b, err := json.Marshal(sv)
	if err != nil {
		return err
	}
	_, err = createObject(ctx, s.c, s.opts.Namespace+"Source", s.sourceObjID(id, sv.Version),
		map[string]any{"sourceId": id, "version": sv.Version, "record": string(b)})
	return err
}

// advance moves source id from version from to next (whose Version is
// from+1): the step's winner writes it; a loser completes the winner's
// write and reports a conflict.
func (s *sources) advance(ctx context.Context, id string, from uint64, next sourceVersion) error {
	intent, err := json.Marshal(next)
	if err != nil {
		return err
	}
	won, theirs, err := s.takeStep(ctx, sourceStep(id, from), intent)
	if err != nil {
		return err
	}
	if !won {
		var sv sourceVersion
		if theirs != nil && json.Unmarshal(theirs, &sv) == nil && sv.Version == from+1 {
			if err := s.writeVersion(ctx, id, sv); err != nil {
				return err
			}
		}
		return fmt.Errorf("%w: source %q moved on from version %d", record.ErrConflict, id, from)
	}
	// The version may be written already: by a loser completing this
	// intent (then the write is done), or — a step dropped long ago and
	// taken again by a writer that read before — by the step's first
	// winner (then this writer is behind).
	if have, ok, err := s.getVersion(ctx, id, from+1); err != nil {
		return err
	} else if ok {
		mine, _ := json.Marshal(have)
		if string(mine) != string(intent) {
			return fmt.Errorf("%w: source %q is past version %d", record.ErrConflict, id, from)
		}
		return nil
	}
	if err := s.writeVersion(ctx, id, next); err != nil {
		return err
	}
	// The step that made the version before can go: a writer that takes it
	// again finds that version written and stands down. Versions stay, so
	// that check always holds (a source changes rarely).
	if from > 0 {
		s.dropStep(ctx, sourceStep(id, from-1))
	}
	return nil
}

// Source returns one source.
func (s *sources) Source(id string) (record.Source, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	cur, err := s.current(ctx, id)
	if err != nil || cur.Rec == nil {
		return record.Source{}, false
	}
	out := record.CopySource(cur.Rec)
	out.Cursor, _ = s.cursor(ctx, id)
	return out, true
}

// Sources returns every source, by id.
func (s *sources) Sources() []record.Source {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	h, err := s.hints(ctx, "")
	if err != nil {
		return nil
	}
	var out []record.Source
	for id, v := range h {
		if id == settingsID {
			continue
		}
		cur, err := s.latest(ctx, id, v)
		if err != nil || cur.Rec == nil {
			continue
		}
		src := record.CopySource(cur.Rec)
		src.Cursor, _ = s.cursor(ctx, id)
		out = append(out, src)
	}
	slices.SortFunc(out, func(a, b record.Source) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// put stores src as the version after cur, stamped as the memory store
// stamps it; without setCursor the stored cursor stays.
func (s *sources) put(ctx context.Context, src record.Source, cur sourceVersion, setCursor bool) (record.Source, error) {
	now := record.ExactTime(time.Now())
	if cur.Rec != nil {
		src.CreatedAt = cur.Rec.CreatedAt
	} else if src.CreatedAt.IsZero() {
		src.CreatedAt = now
	}
	src.CreatedAt, src.UpdatedAt = record.ExactTime(src.CreatedAt), now
	src.Version = cur.Version + 1
	cursor := src.Cursor
	rec := record.CopySource(&src)
	rec.Cursor = "" // a record of its own
	if err := s.advance(ctx, src.ID, cur.Version, sourceVersion{Version: src.Version, Rec: &rec}); err != nil {
		return record.Source{}, err
	}
	if err := s.changed(ctx); err != nil {
		return record.Source{}, err
	}
	if err := s.applyRules(ctx, cur.Rec, &rec); err != nil {
		return record.Source{}, err
	}
	if setCursor {
		if err := s.setCursor(ctx, src.ID, cursor); err != nil {
			return record.Source{}, err
		}
	} else if cur.Rec == nil {
		cursor = ""
	} else {
		cursor, _ = s.cursor(ctx, src.ID)
	}
	src.Cursor = cursor
	return src, nil
}

// PutSource creates or replaces a source (and its cursor).
func (s *sources) PutSource(src record.Source) (record.Source, error) {
	if err := record.CheckSource(&src); err != nil {
		return record.Source{}, err
	}
	return s.retry(src.ID, func(ctx context.Context, cur sourceVersion) (record.Source, error) {
		return s.put(ctx, src, cur, true)
	})
}

// PutSourceIf replaces (or, at version 0, creates) a source only when its
// stored Version is version, else record.ErrConflict; it leaves the crawl
// cursor alone.
func (s *sources) PutSourceIf(src record.Source, version uint64) (record.Source, error) {
	if err := record.CheckSource(&src); err != nil {
		return record.Source{}, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	cur, err := s.current(ctx, src.ID)
	if err != nil {
		return record.Source{}, err
	}
	stored := cur.Version
	if cur.Rec == nil {
		stored = 0
	}
	if stored != version {
		return record.Source{}, fmt.Errorf("%w: source %q is at version %d, not %d", record.ErrConflict, src.ID, stored, version)
	}
	return s.put(ctx, src, cur, false)
}

// CreateSource stores a new source: an id that exists is ErrConflict;
// without an id, one is derived from the name and made unique.
func (s *sources) CreateSource(src record.Source) (record.Source, error) {
	derive := src.ID == ""
	if derive {
		src.ID = record.SourceIDBase(src.Name)
	}
	if err := record.CheckSource(&src); err != nil {
		return record.Source{}, err
	}
	base := src.ID
	for range updateAttempts {
		if derive {
			ids := map[string]bool{}
			for _, x := range s.Sources() {
				ids[x.ID] = true
			}
			src.ID = record.FirstFree(base, func(id string) bool { return ids[id] })
		}
		ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
		cur, err := s.current(ctx, src.ID)
		if err == nil && cur.Rec != nil {
			err = fmt.Errorf("%w: a source with id %q exists", record.ErrConflict, src.ID)
			if !derive {
				cancel()
				return record.Source{}, err
			}
		}
		var out record.Source
		if err == nil {
			out, err = s.put(ctx, src, cur, true)
		}
		cancel()
		if !errors.Is(err, record.ErrConflict) || !derive {
			return out, err
		}
		backoff(1)
	}
	return record.Source{}, fmt.Errorf("%w: could not create a source named %q", record.ErrConflict, src.Name)
}

// updateAttempts bounds retries after conflicts, as the memory store's.
const updateAttempts = 64

// retry runs fn on the current version until it does not conflict.
func (s *sources) retry(id string, fn func(ctx context.Context, cur sourceVersion) (record.Source, error)) (record.Source, error) {
	var err error
	for attempt := range updateAttempts {
		backoff(attempt)
		ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
		var cur sourceVersion
		if cur, err = s.current(ctx, id); err == nil {
			var out record.Source
			out, err = fn(ctx, cur)
			if !errors.Is(err, record.ErrConflict) {
				cancel()
				return out, err
			}
		}
		cancel()
		if !errors.Is(err, record.ErrConflict) {
			return record.Source{}, err
		}
	}
	return record.Source{}, err
}

func backoff(attempt int) {
	if attempt > 0 {
		time.Sleep(time.Duration(rand.IntN(min(attempt, 10)*20)+1) * time.Millisecond)
	}
}

// UpdateSource is read → fn → PutSourceIf on the version read, retried on
// a conflict: fn may run more than once and must not write. The cursor is
// stored only when fn changes it.
func (s *sources) UpdateSource(id string, fn func(*record.Source) error) (record.Source, error) {
	return s.retry(id, func(ctx context.Context, cur sourceVersion) (record.Source, error) {
		if cur.Rec == nil {
			return record.Source{}, record.ErrNotFound
		}
		old := record.CopySource(cur.Rec)
		old.Cursor, _ = s.cursor(ctx, id)
		src := record.CopySource(&old)
		if err := fn(&src); err != nil {
			return record.Source{}, err
		}
		src.ID = id
		if err := record.CheckSource(&src); err != nil {
			return record.Source{}, err
		}
		return s.put(ctx, src, cur, src.Cursor != old.Cursor)
	})
}

// DeleteSource removes a source with its cursor, channels, messages,
// documents and chunks.
func (s *sources) DeleteSource(id string) error {
	if id == record.UploadsSourceID {
		return fmt.Errorf("%w: the built-in %q source cannot be deleted", record.ErrInvalid, id)
	}
	_, err := s.retry(id, func(ctx context.Context, cur sourceVersion) (record.Source, error) {
		if cur.Rec == nil {
			return record.Source{}, record.ErrNotFound
		}
		if err := s.advance(ctx, id, cur.Version, sourceVersion{Version: cur.Version + 1}); err != nil {
			return record.Source{}, err
		}
		if err := s.changed(ctx); err != nil {
			return record.Source{}, err
		}
		if err := s.deleteContent(ctx, id); err != nil {
			return record.Source{}, err
		}
		if err := s.changed(ctx); err != nil {
			return record.Source{}, err
		}
		return record.Source{}, s.deleteCursor(ctx, id)
	})
	return err
}
