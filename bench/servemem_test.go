package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/sift-search/sift/engine"
	"github.com/sift-search/sift/record"
)

// TestMakeServeDataDir writes a data dir of $SIFT_SERVE_N synthetic
// messages (the benchmarks' corpus, loaded as builtEngine loads it) into
// the empty dir $SIFT_SERVE_DATA, and the raw text's size beside it in
// $SIFT_SERVE_DATA.info, for servemem.sh to measure a whole server on.
// The store alone: the server builds its semantic index itself. Skipped
// unless both are set. The file compiles at earlier commits too, so
// the "before" binary can be given a data dir in its own format.
func TestMakeServeDataDir(t *testing.T) {
	n, err := strconv.Atoi(os.Getenv("SIFT_SERVE_N"))
	dir := os.Getenv("SIFT_SERVE_DATA")
	if err != nil || n <= 0 || dir == "" {
		t.Skip("set SIFT_SERVE_N and SIFT_SERVE_DATA to make a data dir")
	}
	if ents, _ := os.ReadDir(dir); len(ents) > 0 {
		t.Fatalf("%s is not empty", dir)
	}
	start := time.Now()
	e, err := engine.Open(engine.Options{DataDir: dir, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	s := NewSynth(42, vocabSize, channels)
	load(t, e, "synth", s.Channels(), nil)
	var text int64
	batch := make([]record.Message, 0, batchSize)
	for i := 0; i < n; i++ {
		m := s.Next()
		text += int64(len(m.Content))
		if batch = append(batch, m); len(batch) == batchSize || i == n-1 {
			if _, err := e.PutMessages(batch); err != nil {
				t.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	if err := e.Snapshot(); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	info := fmt.Sprintf("messages=%d raw_text_bytes=%d build_time=%s\n", n, text, time.Since(start).Round(time.Second))
	if err := os.WriteFile(filepath.Clean(dir)+".info", []byte(info), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Log(info)
}
