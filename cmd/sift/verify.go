package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/sift-search/sift/engine"
	"github.com/sift-search/sift/semantic"
)

const verifyUsage = `usage: sift verify FILE
       sift verify --data-dir DIR

Reads without changing anything, so it is safe beside a running server.

  FILE            a snapshot or backup: every checksum and structure, and what it
                  holds; or a write-ahead log segment (DIR/wal/*.wal): its records,
                  checksums, first and last sequence numbers, a torn tail
  --data-dir DIR  every snapshot and log segment of a data dir, whether the log
                  continues the newest valid snapshot to the last acknowledged
                  write, and what start-up would do: serve everything, fall back,
                  cut a torn tail, or refuse (and which writes are missing)

Exit status:
  0  nothing is damaged
  1  damage start-up recovers from by itself without losing an acknowledged
     write: a snapshot it falls back from, a torn log tail, damage in a
     segment a snapshot holds; also a damaged snapshot or backup FILE, and
     a segment FILE with a torn tail
  2  damage that loses acknowledged writes or stops start-up (a segment
     FILE damaged before valid records), or nothing could be checked
`

// verify checks a snapshot, backup or log segment file, or a whole data
// dir, and prints what it found; it exits with the severity (verifyUsage).
func verify(args []string) error {
	code, err := runVerify(args)
	if errors.Is(err, flag.ErrHelp) {
		return err
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "sift:", err)
	}
	if code != 0 {
		return exitStatus(code)
	}
	return nil
}

// exitStatus is an error whose words were printed already: the command
// ends with that status and says nothing more.
type exitStatus int

func (e exitStatus) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

func runVerify(args []string) (int, error) {
	fs := flag.NewFlagSet("verify", flag.ContinueOnError)
	dataDir := fs.String("data-dir", "", "check a whole data dir")
	fs.Usage = func() { fmt.Fprint(fs.Output(), verifyUsage) }
	if err := fs.Parse(args); err != nil {
		return 2, err
	}
	switch {
	case *dataDir != "" && fs.NArg() == 0:
		return verifyDir(*dataDir)
	case *dataDir == "" && fs.NArg() == 1:
		return verifyFile(fs.Arg(0))
	}
	return 2, errors.New(strings.SplitN(verifyUsage, "\n\n", 2)[0])
}

// verifyFile checks one snapshot, backup or log segment.
func verifyFile(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 2, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 2, err
	}
	if fi.IsDir() {
		return 2, fmt.Errorf("%s is a directory; name a snapshot, backup or log segment file, or check a data dir with --data-dir", path)
	}
	head := make([]byte, 7)
	n, _ := io.ReadFull(f, head)
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return 2, err
	}
	if strings.HasSuffix(path, ".wal") || bytes.Equal(head[:n], []byte("SIFTWAL")) {
		return verifySegment(f, path)
	}
	return verifySnapshot(f, path, fi.Size())
}

func verifySnapshot(f io.Reader, path string, size int64) (int, error) {
	// The semantic index validates its section and says what it holds.
	idx := semantic.New(semantic.Options{})
	sum, err := engine.InspectSnapshot(f, idx)
	if err != nil {
		return 1, fmt.Errorf("verify %s: damaged or not a snapshot: %w", path, err)
	}
	fmt.Printf("%s: valid, every checksum and structure verified\n", path)
	fmt.Printf("  format version  %d\n", sum.Version)
	fmt.Printf("  sequence        %d\n", sum.Seq)
	fmt.Printf("  created         %s\n", sum.Created.UTC().Format(time.RFC3339))
	fmt.Printf("  size            %d bytes\n", size)
	sem := idx.Status()
	fmt.Printf("  holds           %d sources, %d channels, %d messages, %d documents, %d chunks (%d embedded)\n",
		sum.Sources, sum.Channels, sum.Messages, sum.Documents, sem.Chunks, sem.Vectors)
	if sum.Version >= 7 {
		fmt.Printf("  insights        %d counts of searches and questions by day\n", sum.Insights)
	}
	switch sum.Version {
	case 1:
		fmt.Println("  note            written before semantic search; start-up builds its chunks and vectors")
	case 2, 3:
		fmt.Println("  note            its semantic index is in an older layout, not counted above; start-up rebuilds its chunks and vectors")
	}
	if sum.Rebuilt {
		fmt.Println("  note            its indexes were written by another tokenizer version; start-up rebuilds them")
	}
	return 0, nil
}

func verifySegment(f io.Reader, path string) (int, error) {
	named, ok := engine.SegmentName(path)
	info, err := engine.InspectSegment(f, path, named)
	if err != nil {
		return 2, fmt.Errorf("verify %s: %w", path, err)
	}
	fmt.Printf("%s: write-ahead log segment, format version %d, %d bytes\n", path, info.Version, info.Bytes)
	if ok {
		fmt.Printf("  named after     record %d\n", named)
	} else {
		fmt.Println("  named after     nothing (not a segment's name): records are numbered from the first")
	}
	if info.Records == 0 {
		fmt.Println("  records         none")
	} else {
		fmt.Printf("  records         %d, sequence %d to %d\n", info.Records, info.First, info.Last)
	}
	d := info.Damage
	switch {
	case d == nil:
		fmt.Println("  status          whole: every frame, checksum and record verified")
		return 0, nil
	case info.Torn:
		fmt.Printf("  status          torn tail at offset %d (%v): what a crash in the middle of a write leaves, never acknowledged;\n"+
			"                  start-up cuts it if this is the log's last segment and no later file shows more writes (check with --data-dir)\n", d.Offset, d.Err)
		return 1, nil
	}
	fmt.Printf("  status          DAMAGED at offset %d (%v)", d.Offset, d.Err)
	if info.AfterFirst != 0 {
		fmt.Printf(", and valid records %d to %d follow", info.AfterFirst, info.AfterLast)
	}
	fmt.Println(": not a torn write; the records from there on are lost unless a snapshot holds them")
	return 2, nil
}

// verifyDir checks a whole data dir and says what start-up would do.
func verifyDir(dir string) (int, error) {
	c, err := engine.CheckDataDir(dir, func() engine.Follower { return semantic.New(semantic.Options{}) })
	if err != nil {
		return 2, fmt.Errorf("verify %s: %w", dir, err)
	}
	fmt.Printf("%s: data dir, %d snapshots, %d log segments\n", dir, len(c.Snapshots), len(c.Segments))
	for _, s := range c.Snapshots {
		printSnapshotCheck(s)
	}
	for _, s := range c.Segments {
		printSegmentCheck(s)
	}
	if c.InUse {
		fmt.Println("  note      a server holds this data dir: its log may have grown while it was read")
	}
	printStartup(c)
	printResult(c)
	return c.Severity(), nil
}

func printSnapshotCheck(s engine.SnapshotCheck) {
	if s.Err != nil {
		fmt.Printf("  snapshot  %s  DAMAGED: %v\n", s.Path, s.Err)
		return
	}
	m := s.Summary
	fmt.Printf("  snapshot  %s  valid: sequence %d, format %d, %d sources, %d channels, %d messages, %d documents\n",
		s.Path, m.Seq, m.Version, m.Sources, m.Channels, m.Messages, m.Documents)
}

func printSegmentCheck(s engine.SegmentCheck) {
	if s.Err != nil {
		fmt.Printf("  segment   %s  cannot be read: %v\n", s.Path, s.Err)
		return
	}
	info := s.Info
	what := "empty"
	if info.Records > 0 {
		what = fmt.Sprintf("records %d to %d", info.First, info.Last)
	}
	switch d := info.Damage; {
	case d == nil:
	case info.Torn:
		what += fmt.Sprintf(", then a torn tail at offset %d (%v)", d.Offset, d.Err)
	case info.AfterFirst != 0:
		what += fmt.Sprintf(", then DAMAGED at offset %d (%v), valid records %d to %d after it", d.Offset, d.Err, info.AfterFirst, info.AfterLast)
	default:
		what += fmt.Sprintf(", then DAMAGED at offset %d (%v)", d.Offset, d.Err)
	}
	fmt.Printf("  segment   %s  %s\n", s.Path, what)
}

// printStartup says what start-up would load, replay, skip and cut.
func printStartup(c *engine.DirCheck) {
	switch {
	case c.Loads != nil:
		fmt.Printf("start-up    loads %s (sequence %d)", c.Loads.Path, c.Loads.Seq)
		if c.Loads != &c.Snapshots[0] {
			fmt.Print(", falling back past the damaged newer snapshot")
		}
		fmt.Println()
	case len(c.Snapshots) > 0:
		fmt.Println("start-up    loads no snapshot (none is valid) and replays the log from its start")
	case len(c.Segments) == 0:
		fmt.Println("start-up    finds nothing to load: it starts empty")
	default:
		fmt.Println("start-up    replays the log from its start (no snapshot)")
	}
	for _, s := range c.Skipped {
		fmt.Printf("            skips damage in %s at offset %d: no record is missing for it\n", s.File, s.Offset)
	}
	if s := c.Cut; s != nil {
		fmt.Printf("            cuts the torn tail of %s at offset %d: a write a crash interrupted, never acknowledged\n", s.File, s.Offset)
	}
}

// printResult gives the verdict and, when start-up refuses, the ways on.
func printResult(c *engine.DirCheck) {
	switch le := c.Lost; {
	case le != nil:
		fmt.Printf("result      REFUSES to start: acknowledged writes %d to %d cannot be replayed (exit 2)\n", le.Reached+1, le.Acked)
		missing := fmt.Sprintf("records %d to %d", le.From, le.To)
		if le.From == le.To {
			missing = fmt.Sprintf("record %d", le.From)
		}
		fmt.Printf("  missing   %s: %s\n", missing, le.Break)
		for _, ev := range le.Evidence {
			fmt.Printf("  evidence  %s\n", ev)
		}
		fmt.Printf("  would     serve the writes up to %d only, losing %d\n", le.Reached, le.Lost())
		fmt.Println("  recover   restore a backup into an empty data dir: sift restore --data-dir NEW_DIR BACKUP_FILE")
		fmt.Printf("  or        accept the loss and start with the writes up to %d: sift serve --data-dir %s --accept-data-loss\n", le.Reached, c.Dir)
		fmt.Println("            (it logs the loss at ERROR and moves the files it cannot replay to DATA_DIR/lost-<time>-*/)")
	case c.Err != nil:
		fmt.Printf("result      FAILS to start (exit 2): %v\n", c.Err)
	case c.Severity() == 1:
		fmt.Printf("result      RECOVERS by itself: serves every acknowledged write, up to %d; the damage above loses none (exit 1)\n", c.Reaches)
	default:
		fmt.Printf("result      OK: serves every acknowledged write, up to %d (exit 0)\n", c.Reaches)
	}
}
