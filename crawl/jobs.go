package crawl

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
)

// A job holds a source: one crawl, import or deletion at a time per
// source. Jobs are kept in Runner.jobs, guarded by Runner.mu.
type job struct {
	id        string
	kind      string // crawl, import, delete
	scheduled bool
	cancel    context.CancelFunc
	done      chan struct{}
}

// claim reserves the source for one job.
func (r *Runner) claim(sourceID, kind string, scheduled bool) (*job, context.Context, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ctx.Err() != nil {
		return nil, nil, errors.New("the crawl runner is shutting down")
	}
	if j, ok := r.jobs[sourceID]; ok {
		return nil, nil, fmt.Errorf("%w (job %s, %s)", ErrBusy, j.id, j.kind)
	}
	ctx, cancel := context.WithCancel(r.ctx)
	j := &job{id: newJobID(), kind: kind, scheduled: scheduled, cancel: cancel, done: make(chan struct{})}
	r.jobs[sourceID] = j
	r.wg.Add(1)
	return j, ctx, nil
}

func (r *Runner) release(sourceID string, j *job) {
	r.mu.Lock()
	delete(r.jobs, sourceID)
	r.mu.Unlock()
	j.cancel()
	close(j.done)
	r.wg.Done()
}

func newJobID() string {
	var b [8]byte
	rand.Read(b[:])
	return "j_" + hex.EncodeToString(b[:])
}

// Running reports the job running for a source, if any: its id and kind.
func (r *Runner) Running(sourceID string) (id, kind string, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	j, ok := r.jobs[sourceID]
	if !ok {
		return "", "", false
	}
	return j.id, j.kind, true
}

// scheduledJobs counts the running jobs the scheduler started.
func (r *Runner) scheduledJobs() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, j := range r.jobs {
		if j.scheduled {
			n++
		}
	}
	return n
}

// Delete removes a source with everything it produced. A crawl or import
// running for it is cancelled first, so nothing of it is written after.
func (r *Runner) Delete(sourceID string) error {
	var j *job
	for {
		var err error
		if j, _, err = r.claim(sourceID, "delete", false); err == nil {
			break
		}
		if !errors.Is(err, ErrBusy) {
			return err
		}
		r.mu.Lock()
		running := r.jobs[sourceID]
		r.mu.Unlock()
		if running != nil {
			running.cancel()
			<-running.done
		}
	}
	defer r.release(sourceID, j)
	if err := r.sink.DeleteSource(sourceID); err != nil {
		return err
	}
	r.log.Info("source deleted", "source", sourceID)
	return nil
}
