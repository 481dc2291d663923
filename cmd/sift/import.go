package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/sift-search/sift/crawl"
	"github.com/sift-search/sift/engine"
)

// importCmd imports a chat export into an offline data dir. A source that
// does not exist yet is created, of the export's type.
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
	f, err := os.Open(fs.Arg(0))
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	head := make([]byte, crawl.DetectBytes)
	n, err := f.ReadAt(head, 0)
	if err != nil && err != io.EOF {
		return err
	}
	format := crawl.DetectFormat(head[:n])
	if format == "" {
		return fmt.Errorf("%s: not a DiscordChatExporter JSON file, a Slack export zip or a Telegram result.json", fs.Arg(0))
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		return err
	}
	eng, err := engine.Open(engine.Options{DataDir: filepath.Clean(*dir)})
	if err != nil {
		return fmt.Errorf("open data dir %s: %w", *dir, err)
	}
	defer eng.Close()
	if _, ok := eng.Source(*sourceID); !ok {
		if !engine.ValidSourceID(*sourceID) {
			return fmt.Errorf("--source: an id is 1 to 64 characters of a-z, 0-9, '-', '_' and '.'")
		}
		src := engine.Source{ID: *sourceID, Name: *name, Type: format, Enabled: true, Config: map[string]any{}}
		if src.Name == "" {
			src.Name = *sourceID
		}
		if _, err := eng.PutSource(src); err != nil {
			return err
		}
		fmt.Printf("created source %s (type %s)\n", src.ID, src.Type)
	}
	runner := crawl.NewRunner(eng, crawl.RunnerOptions{})
	defer runner.Close()
	res, err := runner.Import(*sourceID, f, st.Size())
	if err != nil {
		return err
	}
	fmt.Printf("imported %s: %s export, %d channels, %d messages (%d new or changed)\n",
		fs.Arg(0), res.Format, res.Channels, res.Messages, res.Changed)
	return nil
}

// envOr is the value of an environment variable, or def when it is unset.
func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
