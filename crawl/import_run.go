package crawl

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/sift-search/sift/record"
)

// ImportResult is the outcome of one import.
type ImportResult struct {
	JobID  string
	File   string // the file's name, if given
	Format string // discord, slack, telegram
	record.ImportCounts
	Changed    int // Stored + Updated; 0 when the file was imported before
	StartedAt  time.Time
	FinishedAt time.Time
}

// ImportFile is an export file to import.
type ImportFile struct {
	Name string      // as its owner named it (a path's last element is kept); may be empty
	R    io.ReaderAt // the file
	Size int64
}

// skipKeptOut counts the messages an operator keeps out of the source.
const skipKeptOut = "kept out by an operator (excluded channel or opted-out author)"

// Import reads an export file (DiscordChatExporter JSON, Slack export zip,
// Telegram result.json) into a source whose type takes that format. The
// whole file is parsed and checked before anything is written, so a
// malformed file, or a DiscordChatExporter file of another server than the
// source's guildId, is refused and changes nothing; importing the same
// file again changes nothing but the record. An import that gets to
// writing is a job, recorded on the source as its LastImport, whether it
// ends well or not.
func (r *Runner) Import(sourceID string, f ImportFile) (ImportResult, error) {
	src, ok := r.sink.Source(sourceID)
	if !ok {
		return ImportResult{}, record.ErrNotFound
	}
	want := ImportFormat(src.Type)
	if want == "" {
		return ImportResult{}, invalidConfig("sources of type %s do not take imports (discord, slack and telegram sources do)", src.Type)
	}
	format, err := DetectFile(f.R)
	if err != nil {
		return ImportResult{}, err
	}
	if format != want {
		return ImportResult{}, invalidConfig("this file is a %s export; source %s has type %s and imports %s exports", format, sourceID, src.Type, want)
	}
	return r.runImport(sourceID, f.Name, format, func() (*Export, error) {
		return ParseExport(format, f.R, f.Size, sourceID)
	})
}

// ImportExport imports an export read by ReadExport, as Import does.
func (r *Runner) ImportExport(sourceID, fileName string, x *Export) (ImportResult, error) {
	src, ok := r.sink.Source(sourceID)
	if !ok {
		return ImportResult{}, record.ErrNotFound
	}
	if want := ImportFormat(src.Type); want != x.Format {
		return ImportResult{}, invalidConfig("this file is a %s export; source %s has type %s", x.Format, sourceID, src.Type)
	}
	return r.runImport(sourceID, fileName, x.Format, func() (*Export, error) { return x, nil })
}

// runImport runs one import job: it parses the file, checks it against the
// source, stores it and records the outcome on the source.
func (r *Runner) runImport(sourceID, fileName, format string, parse func() (*Export, error)) (out ImportResult, err error) {
	j, _, err := r.claim(sourceID, "import", false)
	if err != nil {
		return ImportResult{}, err
	}
	defer r.release(sourceID, j)
	if r.opts.OnImport != nil {
		defer func() { r.opts.OnImport(sourceID, out, err) }()
	}
	fileName = visibleName(path.Base(strings.ReplaceAll(fileName, `\`, "/")), 200, "")
	if fileName == "." || fileName == "/" {
		fileName = ""
	}
	out = ImportResult{JobID: j.id, File: fileName, Format: format, StartedAt: time.Now().UTC()}
	// A file refused (malformed, of another guild) changes nothing, not
	// even the record: what was refused is said to the one who sent it.
	x, err := parse()
	if err != nil {
		return out, err
	}
	guild, err := r.checkGuild(sourceID, x) // the file's, to record on a discord source without one
	if err != nil {
		return out, err
	}
	_, err = r.sink.UpdateSource(sourceID, func(s *record.Source) error {
		s.LastImport = &record.ImportInfo{JobID: j.id, Status: "running", StartedAt: out.StartedAt, File: fileName, Format: format}
		return nil
	})
	if err != nil {
		return out, err
	}
	r.log.Info("import started", "source", sourceID, "job", j.id, "format", format, "file", fileName)

	err = r.store(sourceID, x, &out)
	out.FinishedAt = time.Now().UTC()
	info := &record.ImportInfo{
		JobID: j.id, Status: "ok", StartedAt: out.StartedAt, FinishedAt: out.FinishedAt, File: fileName, Format: format,
		ImportCounts: out.ImportCounts,
	}
	if err != nil {
		info.Status, info.Error = "error", err.Error()
		for _, e := range []error{ErrInvalid, record.ErrInvalid, record.ErrConflict} {
			info.Error = strings.TrimPrefix(info.Error, e.Error()+": ")
		}
	}
	_, uerr := r.sink.UpdateSource(sourceID, func(s *record.Source) error {
		s.LastImport = info
		if err == nil && guild != "" {
			if _, set := s.Config["guildId"]; !set {
				s.Config["guildId"] = guild
			}
		}
		return nil
	})
	if uerr != nil && !errors.Is(uerr, record.ErrNotFound) {
		r.log.Error("could not record an import", "source", sourceID, "job", j.id, "err", uerr)
	}
	if err != nil {
		r.log.Warn("import failed", "source", sourceID, "job", j.id, "format", format, "file", fileName, "err", err)
		return out, err
	}
	r.log.Info("import finished", "source", sourceID, "job", j.id, "format", format, "channels", out.Channels,
		"messages", out.Messages, "stored", out.Stored, "updated", out.Updated, "unchanged", out.Unchanged,
		"skipped", out.SkippedTotal(), "duration", out.FinishedAt.Sub(out.StartedAt).Round(time.Millisecond))
	return out, nil
}

// checkGuild refuses a DiscordChatExporter file of another server than
// the discord source's guildId. Direct messages (the "Direct Messages"
// pseudo-guild, id 0) are of no server and go into any discord source.
// For a source without a guildId, it returns the file's guild id, to be
// recorded once the import succeeds.
func (r *Runner) checkGuild(sourceID string, x *Export) (string, error) {
	src, ok := r.sink.Source(sourceID)
	if !ok {
		return "", record.ErrNotFound
	}
	if src.Type != "discord" || x.GuildID == "" {
		return "", nil
	}
	want, _ := src.Config["guildId"].(string)
	switch {
	case want == "" && x.GuildID != "0" && snowflake.MatchString(x.GuildID):
		return x.GuildID, nil
	case want == "" || want == x.GuildID || x.GuildID == "0":
		return "", nil
	}
	return "", fmt.Errorf("%w: this export is of Discord guild %s, but source %s is for guild %s (config.guildId); import it into a source for guild %s",
		record.ErrConflict, x.GuildID, sourceID, want, x.GuildID)
}

// store writes an export to the engine and counts what became of each of
// its messages. A message id the file holds twice is stored once.
func (r *Runner) store(sourceID string, x *Export, out *ImportResult) error {
	skipped := maps.Clone(x.Skipped)
	if skipped == nil {
		skipped = map[string]int{}
	}
	seen := make(map[string]bool, len(x.Messages))
	msgs := x.Messages[:0:0]
	for _, m := range x.Messages {
		if seen[m.ID] {
			skipped[skipDuplicate]++
			continue
		}
		seen[m.ID] = true
		m.SourceID = sourceID
		msgs = append(msgs, m)
	}
	chans := slices.Clone(x.Channels)
	for i := range chans {
		chans[i].SourceID = sourceID
	}
	out.Channels, out.Messages = len(x.Channels), x.InFile()
	c, err := importCounted(r.sink, &Export{Channels: chans, Messages: msgs})
	if c.KeptOut > 0 {
		skipped[skipKeptOut] += c.KeptOut
	}
	out.Stored, out.Updated, out.Unchanged, out.Changed = c.New, c.Updated, c.Unchanged, c.New+c.Updated
	if len(skipped) > 0 {
		out.Skipped = skipped
	}
	return err
}
