package wvstore

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/weaviate/weaviate-go-client/v5/weaviate/data/replication"
)

// A lease lets exactly one Sift process at a time do a job the cluster
// shares (scheduled crawls). It runs in terms: each term is an object of
// its own in Meta, holding its holder and expiry; the current term is the
// highest. A process takes term t+1 by winning the step "from term t"
// (step.go), and only when term t has expired or is its own; only a term's
// holder renews it. A holder that dies stops renewing, its term expires
// and another process takes the next one. Expiry is the holder's wall
// clock: a lease's time to live must be well above the clocks' skew.

// leaseTerm is one term of a lease.
type leaseTerm struct {
	Term    uint64    `json:"term"`
	Holder  string    `json:"holder"`
	Expires time.Time `json:"expires"`
}

func (s *core) leaseObjID(name string, term uint64) string {
	return uuid.NewSHA1(uuid.NameSpaceURL, []byte("sift:"+s.opts.Namespace+":lease:"+name+":"+strconv.FormatUint(term, 10))).String()
}

func (s *core) readTerm(ctx context.Context, name string, term uint64) (leaseTerm, bool, error) {
	props, ok, err := getProps(ctx, s.c, s.opts.Namespace+"Meta", s.leaseObjID(name, term))
	if err != nil || !ok {
		return leaseTerm{}, false, err
	}
	v, _ := props["value"].(string)
	var lt leaseTerm
	if err := json.Unmarshal([]byte(v), &lt); err != nil || lt.Term != term {
		return leaseTerm{}, false, fmt.Errorf("lease %s term %d: a damaged record", name, term)
	}
	return lt, true, nil
}

// currentTerm returns a lease's newest term (Term 0 before the first),
// probing from the last term this process saw.
func (s *core) currentTerm(ctx context.Context, name string, from uint64) (leaseTerm, error) {
	cur := leaseTerm{}
	if from > 0 {
		lt, ok, err := s.readTerm(ctx, name, from)
		if err != nil {
			return cur, err
		}
		if ok {
			cur = lt
		}
	}
	for {
		lt, ok, err := s.readTerm(ctx, name, cur.Term+1)
		if err != nil || !ok {
			return cur, err
		}
		cur = lt
	}
}

func (s *core) writeTerm(ctx context.Context, name string, lt leaseTerm, replace bool) error {
	b, err := json.Marshal(lt)
	if err != nil {
		return err
	}
	props := map[string]any{"key": "lease:" + name, "value": string(b)}
	id := s.leaseObjID(name, lt.Term)
	if replace {
		err = s.c.Data().Updater().WithClassName(s.opts.Namespace + "Meta").WithID(id).
			WithConsistencyLevel(replication.ConsistencyLevel.QUORUM).WithProperties(props).Do(ctx)
	} else {
		_, err = createObject(ctx, s.c, s.opts.Namespace+"Meta", id, props) // one there: a loser completed it
	}
	if err != nil {
		return fmt.Errorf("write lease %s term %d: %w", name, lt.Term, err)
	}
	return nil
}

// Lease is one process's view of a named lease.
type Lease struct {
	s      *core
	name   string
	holder string
	ttl    time.Duration
	seen   uint64 // the newest term this process saw
}

// Lease returns the lease name as process holder sees it, with terms of
// ttl.
func (s *core) Lease(name, holder string, ttl time.Duration) *Lease {
	return &Lease{s: s, name: name, holder: holder, ttl: ttl}
}

// Acquire takes or renews the lease and reports whether this process holds
// it until the returned time. Call it well within ttl to keep it.
func (l *Lease) Acquire(ctx context.Context) (held bool, until time.Time, err error) {
	cur, err := l.s.currentTerm(ctx, l.name, l.seen)
	if err != nil {
		return false, time.Time{}, err
	}
	l.seen = cur.Term
	now := time.Now()
	if cur.Term > 0 && cur.Holder == l.holder {
		cur.Expires = now.Add(l.ttl) // only a term's holder writes it again
		if err := l.s.writeTerm(ctx, l.name, cur, true); err != nil {
			return false, time.Time{}, err
		}
		// Another process may have taken the next term meanwhile (this
		// one was stalled past its expiry): then it is theirs.
		if _, taken, err := l.s.readTerm(ctx, l.name, cur.Term+1); err != nil || taken {
			return false, time.Time{}, err
		}
		return true, cur.Expires, nil
	}
	if cur.Term > 0 && now.Before(cur.Expires) {
		return false, time.Time{}, nil // another process holds it
	}
	next := leaseTerm{Term: cur.Term + 1, Holder: l.holder, Expires: now.Add(l.ttl)}
	intent, _ := json.Marshal(next)
	won, theirs, err := l.s.takeStep(ctx, "lease/"+l.name+"/from/"+strconv.FormatUint(cur.Term, 10), intent)
	if err != nil {
		return false, time.Time{}, err
	}
	if !won {
		var lt leaseTerm
		if theirs != nil && json.Unmarshal(theirs, &lt) == nil && lt.Term == cur.Term+1 {
			if err := l.s.writeTerm(ctx, l.name, lt, false); err != nil {
				return false, time.Time{}, err
			}
		}
		return false, time.Time{}, nil
	}
	if err := l.s.writeTerm(ctx, l.name, next, false); err != nil {
		return false, time.Time{}, err
	}
	l.seen = next.Term
	if cur.Term > 0 {
		l.s.dropStep(ctx, "lease/"+l.name+"/from/"+strconv.FormatUint(cur.Term-1, 10))
	}
	return true, next.Expires, nil
}

// Hold runs job while this process holds the lease, until ctx ends: it
// takes or renews the lease every third of its time to live, starts job
// when it holds it, and cancels job (waiting for it to return) when it
// loses it, or when it could not renew before the last third of its term.
func (l *Lease) Hold(ctx context.Context, job func(ctx context.Context)) {
	every := l.ttl / 3
	var cancel context.CancelFunc
	var done chan struct{}
	var until time.Time
	stop := func() {
		if cancel != nil {
			cancel()
			<-done
			cancel = nil
		}
	}
	defer stop()
	for {
		held, u, err := l.Acquire(ctx)
		switch {
		case err == nil && held:
			until = u
		case err != nil:
			held = time.Until(until) > every // keep it only while the term surely lasts
		}
		if held && cancel == nil {
			cancel, done = start(ctx, job)
		} else if !held {
			stop()
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(every):
		}
	}
}

// Release ends this process's term at once, so another takes the lease
// without waiting for it to expire; nothing happens when it is not held.
func (l *Lease) Release(ctx context.Context) error {
	cur, err := l.s.currentTerm(ctx, l.name, l.seen)
	if err != nil || cur.Term == 0 || cur.Holder != l.holder {
		return err
	}
	cur.Expires = time.Now()
	return l.s.writeTerm(ctx, l.name, cur, true)
}

// start runs job in a goroutine with a context of its own.
func start(ctx context.Context, job func(ctx context.Context)) (context.CancelFunc, chan struct{}) {
	jctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); job(jctx) }()
	return cancel, done
}
