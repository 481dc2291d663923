package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sift-search/sift/engine"
	"github.com/sift-search/sift/record"
)

func TestVerifyCommand(t *testing.T) {
	dir := t.TempDir()
	eng, err := engine.Open(engine.Options{DataDir: dir, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	eng.PutSource(record.Source{ID: "chat", Name: "Chat", Type: "slack", Enabled: true})
	eng.PutChannels([]record.Channel{{SourceID: "chat", ID: "c1", Name: "general"}, {SourceID: "chat", ID: "c2", Name: "random"}})
	now := time.Now()
	if _, err := eng.PutMessages([]record.Message{
		{SourceID: "chat", ChannelID: "c1", ID: "1", Author: "ana", Content: "alpha", Timestamp: now},
		{SourceID: "chat", ChannelID: "c1", ID: "2", Author: "bo", Content: "beta", Timestamp: now},
		{SourceID: "chat", ChannelID: "c2", ID: "3", Author: "bo", Content: "gamma", Timestamp: now},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.PutDocuments([]record.Document{{Title: "guide", Content: "how to"}}); err != nil {
		t.Fatal(err)
	}
	if err := eng.PutInsights([]record.Insight{{Day: 20000, Endpoint: 2, Count: 3}, {Day: 20000, Endpoint: 2, Text: "how to", Count: 3}}); err != nil {
		t.Fatal(err)
	}
	if err := eng.Close(); err != nil {
		t.Fatal(err)
	}
	snap := eng.LastSnapshot()
	out, err := run(t, "verify", snap.Path)
	// Two sources: the built-in uploads source and chat.
	for _, want := range []string{"verified", "format version  7", "2 sources, 2 channels, 3 messages, 1 documents, 0 chunks",
		"insights        2 counts of searches and questions by day",
		"created         " + now.UTC().Format("2006-01-02"), "bytes"} {
		if err != nil || !strings.Contains(out, want) {
			t.Fatalf("verify a good snapshot: %v, want %q in\n%s", err, want, out)
		}
	}
	if !strings.Contains(out, "sequence") || !strings.Contains(out, " "+strconv.FormatUint(snap.Seq, 10)+"\n") {
		t.Errorf("verify does not name the sequence number %d:\n%s", snap.Seq, out)
	}

	b, _ := os.ReadFile(snap.Path)
	b[len(b)/2] ^= 0xff
	bad := filepath.Join(t.TempDir(), "bad.sift")
	os.WriteFile(bad, b, 0o600)
	if out, err := run(t, "verify", bad); err == nil || !strings.Contains(out, "damaged") {
		t.Fatalf("verify a damaged file: %v\n%s", err, out)
	}
	os.WriteFile(bad, b[:20], 0o600)
	if out, err := run(t, "verify", bad); err == nil || !strings.Contains(out, "header") {
		t.Fatalf("verify a truncated file: %v\n%s", err, out)
	}
	if out, err := run(t, "verify"); err == nil || !strings.Contains(out, "usage") {
		t.Fatalf("verify without a file: %v\n%s", err, out)
	}
}

// segmentedDir is a data dir with documents written one a write across
// many small log segments: a snapshot after 30 (s1), 60 more, the final
// snapshot at close (s2). seqs are the documents' sequence numbers.
type segmentedDir struct {
	dir    string
	s1, s2 uint64
	seqs   []uint64
}

func writeSegmentedDir(t *testing.T) *segmentedDir {
	t.Helper()
	d := &segmentedDir{dir: t.TempDir()}
	eng, err := engine.Open(engine.Options{DataDir: d.dir, NoSync: true, SegmentBytes: 1024})
	if err != nil {
		t.Fatal(err)
	}
	put := func(n int) {
		for range n {
			title := fmt.Sprintf("doc %03d", len(d.seqs))
			if _, err := eng.PutDocuments([]record.Document{{Title: title, Content: "alpha " + title}}); err != nil {
				t.Fatal(err)
			}
			d.seqs = append(d.seqs, eng.Seq())
		}
	}
	put(30)
	if err := eng.Snapshot(); err != nil {
		t.Fatal(err)
	}
	d.s1 = eng.Seq()
	put(60)
	d.s2 = eng.Seq()
	if err := eng.Close(); err != nil {
		t.Fatal(err)
	}
	return d
}

func (d *segmentedDir) snapshot(seq uint64) string {
	return filepath.Join(d.dir, fmt.Sprintf("snapshot-%020d.sift", seq))
}

// segments lists the log segments holding records, in order.
func (d *segmentedDir) segments(t *testing.T) []string {
	t.Helper()
	all, _ := filepath.Glob(filepath.Join(d.dir, "wal", "*.wal"))
	slices.Sort(all)
	var out []string
	for _, p := range all {
		if fi, err := os.Stat(p); err == nil && fi.Size() > 12 {
			out = append(out, p)
		}
	}
	return out
}

// breakLog damages the newest snapshot by one byte and deletes a log
// segment between the two snapshots, as issue 22 reported; it returns the
// missing records.
func (d *segmentedDir) breakLog(t *testing.T) (from, to uint64) {
	t.Helper()
	flip(t, d.snapshot(d.s2))
	var between []string
	for _, p := range d.segments(t) {
		if first, _ := engine.SegmentName(p); first > d.s1+1 {
			between = append(between, p)
		}
	}
	if len(between) < 3 {
		t.Fatalf("want several segments after the first snapshot, have %v", between)
	}
	gone, next := between[1], between[2]
	from, _ = engine.SegmentName(gone)
	to, _ = engine.SegmentName(next)
	if err := os.Remove(gone); err != nil {
		t.Fatal(err)
	}
	return from, to - 1
}

func (d *segmentedDir) docsUpTo(seq uint64) int {
	n := 0
	for _, s := range d.seqs {
		if s <= seq {
			n++
		}
	}
	return n
}

func flip(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0x40
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// verifyExit runs sift verify and returns its output and exit status.
func verifyExit(t *testing.T, args ...string) (string, int) {
	t.Helper()
	out, err := run(t, append([]string{"verify"}, args...)...)
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	if ee != nil {
		return out, ee.ExitCode()
	}
	return out, 0
}

// TestVerifyDataDir: sift verify --data-dir says what start-up would do
// and exits with the severity: 0 for a sound data dir, 1 when start-up
// recovers by itself (a damaged older snapshot, a torn tail), 2 for
// issue 22's data dir, whose missing records it names.
func TestVerifyDataDir(t *testing.T) {
	d := writeSegmentedDir(t)
	out, code := verifyExit(t, "--data-dir", d.dir)
	if code != 0 || !strings.Contains(out, fmt.Sprintf("OK: serves every acknowledged write, up to %d", d.s2)) ||
		!strings.Contains(out, "valid: sequence "+strconv.FormatUint(d.s2, 10)) {
		t.Fatalf("a sound data dir: exit %d\n%s", code, out)
	}

	flip(t, d.snapshot(d.s1))
	out, code = verifyExit(t, "--data-dir", d.dir)
	if code != 1 || !strings.Contains(out, d.snapshot(d.s1)+"  DAMAGED") || !strings.Contains(out, "RECOVERS by itself") {
		t.Fatalf("a damaged older snapshot: exit %d\n%s", code, out)
	}

	all, _ := filepath.Glob(filepath.Join(d.dir, "wal", "*.wal"))
	slices.Sort(all)
	last := all[len(all)-1] // the segment the last start-up (or snapshot) began
	appendTo(t, last, []byte{200, 0, 0, 0, 1, 2, 3})
	out, code = verifyExit(t, "--data-dir", d.dir)
	if code != 1 || !strings.Contains(out, "cuts the torn tail of "+last) {
		t.Fatalf("a torn tail: exit %d\n%s", code, out)
	}

	d = writeSegmentedDir(t)
	from, to := d.breakLog(t)
	out, code = verifyExit(t, "--data-dir", d.dir)
	t.Logf("sift verify --data-dir says:\n%s", out)
	for _, want := range []string{d.snapshot(d.s2) + "  DAMAGED", "falling back past the damaged newer snapshot",
		fmt.Sprintf("REFUSES to start: acknowledged writes %d to %d cannot be replayed (exit 2)", from, d.s2),
		fmt.Sprintf("missing   records %d to %d", from, to), "--accept-data-loss", "sift restore"} {
		if code != 2 || !strings.Contains(out, want) {
			t.Fatalf("issue 22's data dir: exit %d, want %q in\n%s", code, want, out)
		}
	}
	if _, code := verifyExit(t, "--data-dir", filepath.Join(d.dir, "nothing")); code != 2 {
		t.Fatalf("a missing data dir: exit %d", code)
	}
	if out, code := verifyExit(t, "--data-dir", t.TempDir()); code != 2 || !strings.Contains(out, "holds no Sift data") {
		t.Fatalf("a directory that is no data dir: exit %d\n%s", code, out)
	}
}

func appendTo(t *testing.T, path string, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
}

// TestVerifySegment: sift verify on one log segment names its records and
// grades it: whole 0, a torn tail 1, damage before valid records 2.
func TestVerifySegment(t *testing.T) {
	d := writeSegmentedDir(t)
	seg := d.segments(t)[1]
	first, _ := engine.SegmentName(seg)
	out, code := verifyExit(t, seg)
	if code != 0 || !strings.Contains(out, "whole: every frame, checksum and record verified") ||
		!strings.Contains(out, fmt.Sprintf("sequence %d to ", first)) {
		t.Fatalf("a whole segment: exit %d\n%s", code, out)
	}
	b, _ := os.ReadFile(seg)
	cut := filepath.Join(t.TempDir(), filepath.Base(seg))
	os.WriteFile(cut, b[:len(b)-3], 0o600)
	if out, code := verifyExit(t, cut); code != 1 || !strings.Contains(out, "torn tail at offset") {
		t.Fatalf("a torn segment: exit %d\n%s", code, out)
	}
	b[len(b)/3] ^= 0x40
	os.WriteFile(cut, b, 0o600)
	if out, code := verifyExit(t, cut); code != 2 || !strings.Contains(out, "DAMAGED at offset") || !strings.Contains(out, "valid records") {
		t.Fatalf("a damaged segment: exit %d\n%s", code, out)
	}
}

// TestServeRefusesLostWrites: sift serve on issue 22's data dir exits
// non-zero naming the missing records and the ways on; with
// --accept-data-loss it starts, serves what replays and logs the loss at
// ERROR.
func TestServeRefusesLostWrites(t *testing.T) {
	d := writeSegmentedDir(t)
	from, to := d.breakLog(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	port := freePort(t)
	out, err := exec.CommandContext(ctx, siftBin, "serve", "--data-dir", d.dir, "--port", fmt.Sprint(port), "--addr", fmt.Sprintf("127.0.0.1:%d", port)).CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() == 0 {
		t.Fatalf("serve on a log with writes missing: %v\n%s", err, out)
	}
	for _, want := range []string{"refusing to start", fmt.Sprintf("records %d to %d are missing", from, to),
		"sift verify --data-dir " + d.dir, "--accept-data-loss"} {
		if !strings.Contains(string(out), want) {
			t.Fatalf("refusal lacks %q:\n%s", want, out)
		}
	}
	t.Logf("sift serve says:\n%s", out)

	p := startSift(t, d.dir, "--accept-data-loss")
	defer p.kill()
	if n := len(p.documentIDs(t)); n != d.docsUpTo(from-1) {
		t.Errorf("serving %d documents, want the %d written before record %d", n, d.docsUpTo(from-1), from)
	}
	logs := p.stderr.String()
	if !strings.Contains(logs, "level=ERROR") || !strings.Contains(logs, "ACCEPTED DATA LOSS") ||
		!strings.Contains(logs, fmt.Sprintf("lost=\"%d to %d\"", from, d.s2)) {
		t.Fatalf("the loss is not logged at ERROR:\n%s", logs)
	}
}
