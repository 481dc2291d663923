package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/sift-search/sift/crawl"
	"github.com/sift-search/sift/engine"
	"github.com/sift-search/sift/record"
	"github.com/sift-search/sift/semantic"
)

// importCmd imports a chat export into an offline data dir. A source that
// does not exist yet is created, of the export's type. The whole file is
// read first: a file that cannot be imported changes nothing, and leaves
// no source (nor data dir) behind.
func importCmd(args []string) error {
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	dir := fs.String("data-dir", envOr("DATA_DIR", "./data"), "data dir (no server may be running on it) (env DATA_DIR)")
	sourceID := fs.String("source", "", "id of the source to import into; created when missing")
	name := fs.String("name", "", "name of a source created by the import (default: its id)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *sourceID == "" || fs.NArg() != 1 {
		return errors.New("usage: sift import --data-dir DIR --source ID [--name NAME] FILE")
	}
	path := fs.Arg(0)
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	x, err := crawl.ReadExport(f, st.Size(), *sourceID)
	if err != nil {
		return fmt.Errorf("%s: %w; nothing was imported", path, err)
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		return err
	}
	// The semantic index follows, so that the snapshot written on close
	// keeps its section (chunks and vectors) for the server.
	eng, _, err := openFollowed(engine.Options{DataDir: filepath.Clean(*dir)}, semantic.Options{})
	if err != nil {
		return fmt.Errorf("open data dir %s: %w", *dir, err)
	}
	defer eng.Close()
	created := false
	if _, ok := eng.Source(*sourceID); !ok {
		if !record.ValidSourceID(*sourceID) {
			return fmt.Errorf("--source: an id is 1 to 64 characters of a-z, 0-9, '-', '_' and '.'")
		}
		src := record.Source{ID: *sourceID, Name: *name, Type: x.Format, Enabled: true, Config: map[string]any{}}
		if src.Name == "" {
			src.Name = *sourceID
		}
		switch _, err := eng.CreateSource(src); {
		case err == nil:
			created = true
		case !errors.Is(err, record.ErrConflict): // a conflict: it exists after all, so import into it
			return err
		}
	}
	runner := crawl.NewRunner(eng, crawl.RunnerOptions{})
	res, err := runner.ImportExport(*sourceID, filepath.Base(path), x)
	runner.Close()
	if err != nil {
		if created {
			// Nothing of a failed import stays: not the source it created.
			if derr := eng.DeleteSource(*sourceID); derr != nil {
				return fmt.Errorf("%s: %w (and the source it created could not be removed: %v)", path, err, derr)
			}
		}
		return fmt.Errorf("%s: %w", path, err)
	}
	if created {
		fmt.Printf("created source %s (type %s)\n", *sourceID, x.Format)
	}
	fmt.Printf("imported %s: %s export, %d channels, %d messages in the file (%d new or changed): %s\n",
		path, res.Format, res.Channels, res.Messages, res.Changed, importFigures(res))
	return nil
}

// importFigures says what became of an import's messages: "320 stored,
// 0 updated, 0 unchanged, 5 skipped (unsupported type GuildMemberJoin: 5)".
func importFigures(r crawl.ImportResult) string {
	s := fmt.Sprintf("%d stored, %d updated, %d unchanged, %d skipped", r.Stored, r.Updated, r.Unchanged, r.SkippedTotal())
	if len(r.Skipped) == 0 {
		return s
	}
	reasons := make([]string, 0, len(r.Skipped))
	for why, n := range r.Skipped {
		reasons = append(reasons, fmt.Sprintf("%s: %d", why, n))
	}
	sort.Strings(reasons)
	return s + " (" + strings.Join(reasons, ", ") + ")"
}

// envOr is the value of an environment variable, or def when it is unset.
func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
