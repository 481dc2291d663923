package engine

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sift-search/sift/engine/internal/wal"
	"github.com/sift-search/sift/engine/internal/wal/waltest"
	"github.com/sift-search/sift/query"
	"github.com/sift-search/sift/record"
)

// logBuffer collects an engine's log; the engine logs from several
// goroutines.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func withLog(l *logBuffer) func(*Options) {
	return func(o *Options) { o.Logger = slog.New(slog.NewTextHandler(l, nil)) }
}

func globTemps(dir string) []string {
	tmps, _ := filepath.Glob(filepath.Join(dir, "*"+tmpSuffix))
	return tmps
}

// titles lists the titles of e's documents.
func titles(e *Engine) []string {
	docs, _ := e.Documents(0, 1<<30, true)
	var out []string
	for _, d := range docs {
		out = append(out, d.Title)
	}
	slices.Sort(out)
	return out
}

// TestFullDiskDuringSnapshotRecovers: a snapshot tick while the disk is
// full fails to start a new log segment. Reads go on; writes fail while the
// disk is full and succeed as soon as space returns, without a restart; the
// next tick takes the snapshot; every acknowledged write survives a crash
// and no refused one appears.
func TestFullDiskDuringSnapshotRecovers(t *testing.T) {
	dir := t.TempDir()
	const interval = 100 * time.Millisecond
	var logs logBuffer
	opts := func(o *Options) {
		o.NoSync = false
		o.SnapshotInterval = interval
		o.SegmentBytes = 2048 // writes start segments too
	}
	e := openDir(t, dir, opts, withLog(&logs))
	var disk waltest.FullDisk
	disk.Install(e.wal)
	var acked, refused []string
	n := 0
	put := func() error {
		n++
		title := fmt.Sprintf("doc%03d", n)
		_, err := e.PutDocuments([]record.Document{{Title: title, Content: "body of " + title + strings.Repeat(" filler", 30)}})
		if err == nil {
			acked = append(acked, title)
		} else {
			refused = append(refused, title)
		}
		return err
	}
	for range 5 {
		if err := put(); err != nil {
			t.Fatal(err)
		}
	}

	// Fill the disk right after a write, so the next tick must snapshot.
	// A tick may slip in between; then try again.
	failed := false
	for attempt := 0; attempt < 5 && !failed; attempt++ {
		disk.Full.Store(false)
		if err := put(); err != nil {
			t.Fatal(err)
		}
		disk.Full.Store(true)
		for deadline := time.Now().Add(50 * interval); time.Now().Before(deadline); time.Sleep(interval / 10) {
			info := e.LastSnapshot()
			if info != nil && info.Err != "" {
				if !strings.Contains(info.Err, "no space") {
					t.Fatalf("snapshot failed otherwise: %s", info.Err)
				}
				failed = true
				break
			}
			if info != nil && info.Seq == e.Seq() {
				break // snapshotted before the disk filled
			}
		}
	}
	if !failed {
		t.Fatal("no snapshot tick failed on the full disk")
	}

	// While full: every write is refused, reads work.
	for range 4 {
		if err := put(); !errors.Is(err, record.ErrUnavailable) {
			t.Fatalf("write on a full disk: %v", err)
		}
	}
	time.Sleep(2 * interval) // more ticks fail
	if got := titles(e); !slices.Equal(got, acked) {
		t.Fatalf("reads on a full disk: %v, want %v", got, acked)
	}
	if r := search(t, e, query.SearchRequest{Query: "filler", Limit: 100}); r.TotalDocuments != len(acked) {
		t.Fatalf("search on a full disk: %d documents, want %d", r.TotalDocuments, len(acked))
	}

	// Space returns: writes succeed within one snapshot interval.
	disk.Full.Store(false)
	back := time.Now()
	for {
		err := put()
		if err == nil {
			break
		}
		if time.Since(back) > interval {
			t.Fatalf("writes still fail %v after space returned: %v", time.Since(back), err)
		}
		time.Sleep(interval / 10)
	}
	for range 10 {
		if err := put(); err != nil {
			t.Fatalf("write after space returned: %v", err)
		}
	}
	// The next ticks take the snapshot.
	recovered := e.Seq()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(interval / 10) {
		if info := e.LastSnapshot(); info != nil && info.Err == "" && info.Seq >= recovered {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no snapshot after space returned: %+v", e.LastSnapshot())
		}
	}
	for range 5 {
		if err := put(); err != nil {
			t.Fatal(err)
		}
	}
	if tmps := globTemps(filepath.Join(dir, "wal")); len(tmps) != 0 {
		t.Errorf("failed segment starts left %v", tmps)
	}
	if !strings.Contains(logs.String(), "snapshot failed") {
		t.Error("the failed snapshot was not logged")
	}
	e.crash()

	e = openDir(t, dir, opts)
	defer e.Close()
	slices.Sort(acked)
	if got := titles(e); !slices.Equal(got, acked) {
		t.Fatalf("after a crash: %v\nwant (acknowledged) %v\nrefused %v", got, acked, refused)
	}
}

// TestFullDiskOnRealFileSystem repeats the full-disk story on a small tmpfs,
// with the kernel's own ENOSPC for log, snapshot and start-up: a start-up
// on the full disk serves reads, and writes resume when space returns. It
// needs root (mount) and is skipped elsewhere.
func TestFullDiskOnRealFileSystem(t *testing.T) {
	if testing.Short() {
		t.Skip("mounts a tmpfs")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs: %v %s", err, out)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	data := filepath.Join(dir, "data")
	const interval = 100 * time.Millisecond
	opts := func(o *Options) {
		o.NoSync = false
		o.SnapshotInterval = interval
	}
	filler := filepath.Join(dir, "filler")
	fillDisk := func() {
		f, err := os.Create(filler)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		block := make([]byte, 64<<10)
		for {
			if _, err := f.Write(block); err != nil {
				if !errors.Is(err, syscall.ENOSPC) {
					t.Fatal(err)
				}
				return
			}
		}
	}
	e := openDir(t, data, opts)
	var acked []string
	n := 0
	put := func() error {
		n++
		title := fmt.Sprintf("doc%03d", n)
		_, err := e.PutDocuments([]record.Document{{Title: title, Content: strings.Repeat("filler text ", 200)}})
		if err == nil {
			acked = append(acked, title)
		}
		return err
	}
	for range 5 {
		if err := put(); err != nil {
			t.Fatal(err)
		}
	}
	failed := false
	for attempt := 0; attempt < 5 && !failed; attempt++ {
		os.Remove(filler)
		if err := put(); err != nil {
			t.Fatal(err)
		}
		fillDisk()
		for deadline := time.Now().Add(50 * interval); time.Now().Before(deadline); time.Sleep(interval / 10) {
			if info := e.LastSnapshot(); info != nil && info.Err != "" {
				failed = true
				break
			} else if info != nil && info.Seq == e.Seq() {
				break
			}
		}
	}
	if !failed {
		t.Fatal("no snapshot tick failed on the full disk")
	}
	for range 3 {
		if err := put(); !errors.Is(err, record.ErrUnavailable) {
			t.Fatalf("write on a full disk: %v", err)
		}
	}
	if got := titles(e); len(got) != len(acked) {
		t.Fatalf("reads on a full disk: %d documents, want %d", len(got), len(acked))
	}
	os.Remove(filler)
	if err := put(); err != nil {
		t.Fatalf("write after space returned: %v", err)
	}
	// A crash and a start-up while the disk is full: reads are served,
	// writes wait for space.
	fillDisk()
	e.crash()
	e = openDir(t, data, opts)
	if got := titles(e); len(got) != len(acked) {
		t.Fatalf("start-up on a full disk: %d documents, want %d", len(got), len(acked))
	}
	if err := put(); !errors.Is(err, record.ErrUnavailable) {
		t.Fatalf("write on a full disk: %v", err)
	}
	os.Remove(filler)
	for range 3 {
		if err := put(); err != nil {
			t.Fatalf("write after space returned: %v", err)
		}
	}
	e.crash()
	e = openDir(t, data, opts)
	defer e.Close()
	slices.Sort(acked)
	if got := titles(e); !slices.Equal(got, acked) {
		t.Fatalf("after a crash: %v, want %v", got, acked)
	}
}

// twoSnapshots writes a history with two snapshots and log segments after
// both, crashes, and returns the second snapshot's sequence number.
func twoSnapshots(t *testing.T, dir string) (want string, snap uint64) {
	t.Helper()
	e := openDir(t, dir, smallSegments)
	fill(t, e, 3)
	if err := e.Snapshot(); err != nil {
		t.Fatal(err)
	}
	fill(t, e, 5)
	if err := e.Snapshot(); err != nil {
		t.Fatal(err)
	}
	snap = e.Seq()
	fill(t, e, 4)
	want = fingerprint(t, e)
	e.crash()
	return want, snap
}

func smallSegments(o *Options) { o.SegmentBytes = 1024 }

// segmentsAround returns the segments holding records, split into those the
// snapshot at snap covers (the next segment starts at most at snap+1) and
// the others but the last.
func segmentsAround(t *testing.T, dir string, snap uint64) (covered, after []string) {
	t.Helper()
	segs, err := wal.Segments(filepath.Join(dir, "wal"))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(segs); i++ {
		if fi, err := os.Stat(segs[i].Path); err != nil || fi.Size() <= wal.HeaderSize {
			continue
		}
		if segs[i+1].First-1 <= snap {
			covered = append(covered, segs[i].Path)
		} else if segs[i].First > snap {
			after = append(after, segs[i].Path)
		}
	}
	if len(covered) == 0 || len(after) == 0 {
		t.Fatalf("want segments before and after the snapshot at %d, have %v", snap, segs)
	}
	return covered, after
}

func flipByte(t *testing.T, path string, at int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if at < 0 {
		at = len(b) / 2
	}
	b[at] ^= 0x40
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestDamageInCoveredSegmentIsSkipped: a flipped byte in a log segment
// whose records the newest snapshot holds costs nothing: start-up warns,
// naming the file and offset, and loads everything; the next snapshot
// removes the segment.
func TestDamageInCoveredSegmentIsSkipped(t *testing.T) {
	for _, c := range []struct {
		name string
		at   int
	}{{"record", -1}, {"header", 2}} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			want, snap := twoSnapshots(t, dir)
			covered, _ := segmentsAround(t, dir, snap)
			seg := covered[len(covered)/2]
			flipByte(t, seg, c.at)
			var logs logBuffer
			e := openDir(t, dir, smallSegments, withLog(&logs))
			defer e.Close()
			if got := fingerprint(t, e); got != want {
				t.Fatalf("state differs after skipping a covered segment:\n%s\nvs\n%s", got, want)
			}
			var warning string
			for _, line := range strings.Split(logs.String(), "\n") {
				if strings.Contains(line, "level=WARN") && strings.Contains(line, "skipping damage") {
					warning = line
				}
			}
			if !strings.Contains(warning, seg) || !strings.Contains(warning, "offset=") {
				t.Fatalf("no warning naming the segment and offset:\n%s", logs.String())
			}
			if _, err := e.PutDocuments([]record.Document{{Title: "one more"}}); err != nil {
				t.Fatal(err)
			}
			if err := e.Snapshot(); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(seg); !os.IsNotExist(err) {
				t.Errorf("the next snapshot kept the damaged segment: %v", err)
			}
		})
	}
}

// TestDamageInUncoveredSegmentIsRefused: a flipped byte in a segment
// holding writes after the snapshot (not a torn tail) stops start-up with a
// CorruptionError naming the file and offset — also when the newest
// snapshot is damaged too, so the older one no longer covers the segment.
func TestDamageInUncoveredSegmentIsRefused(t *testing.T) {
	check := func(t *testing.T, dir, seg string) {
		t.Helper()
		_, err := Open(Options{DataDir: dir, NoSync: true, SegmentBytes: 1024})
		var ce *CorruptionError
		if !errors.As(err, &ce) || ce.File != seg || ce.Offset < wal.HeaderSize {
			t.Fatalf("want a CorruptionError in %s, got %v", seg, err)
		}
		if msg := err.Error(); !strings.Contains(msg, seg) || !strings.Contains(msg, fmt.Sprint("offset ", ce.Offset)) {
			t.Fatalf("error does not name file and offset: %v", err)
		}
	}
	t.Run("after the snapshot", func(t *testing.T) {
		dir := t.TempDir()
		_, snap := twoSnapshots(t, dir)
		_, after := segmentsAround(t, dir, snap)
		flipByte(t, after[0], -1)
		check(t, dir, after[0])
	})
	t.Run("newest snapshot damaged", func(t *testing.T) {
		dir := t.TempDir()
		_, snap := twoSnapshots(t, dir)
		covered, _ := segmentsAround(t, dir, snap)
		flipByte(t, covered[0], -1)
		flipByte(t, snapshotPath(dir, snap), -1)
		check(t, dir, covered[0])
	})
}

// TestInspectSnapshot: what InspectSnapshot reports matches the engine the
// snapshot came from, and damage is refused.
func TestInspectSnapshot(t *testing.T) {
	dir := t.TempDir()
	e := openDir(t, dir, withFollower(&testFollower{}))
	fill(t, e, 3)
	c := e.Counts(true)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	info := e.LastSnapshot()
	b, err := os.ReadFile(info.Path)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := InspectSnapshot(bytes.NewReader(b), nil)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Version != snapVersion || sum.Seq != info.Seq || sum.Sources != c.Sources || sum.Channels != c.Channels+c.Threads ||
		sum.Messages != c.Messages || sum.Documents != c.Documents ||
		time.Since(sum.Created) > time.Minute {
		t.Fatalf("summary %+v for counts %+v at %d", sum, c, info.Seq)
	}
	b[len(b)/2] ^= 0xff
	if _, err := InspectSnapshot(bytes.NewReader(b), nil); err == nil {
		t.Fatal("damaged snapshot passed")
	}
	if _, err := InspectSnapshot(bytes.NewReader(b[:10]), nil); err == nil {
		t.Fatal("truncated snapshot passed")
	}
}
