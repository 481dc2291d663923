package main

import (
	"embed"
	"fmt"
	"io/fs"
	"log/slog"
	"path"

	"github.com/sift-search/sift/crawl"
	"github.com/sift-search/sift/engine"
	"github.com/sift-search/sift/extract"
)

// demoFS is the demo content: the documentation and the help channel of
// Wren, a fictional job scheduler (see demo/README.md).
//
//go:embed demo/docs/*.md demo/discord-export.json
var demoFS embed.FS

const (
	demoDocsSource = "wren-docs"
	demoChatSource = "wren-discord"
)

// loadDemo fills an empty engine with the demo content. A data dir that
// holds anything is left alone.
func loadDemo(eng *engine.Engine, log *slog.Logger) error {
	if c := eng.Counts(); c.Messages > 0 || c.Documents > 0 {
		log.Info("data dir is not empty; demo content not loaded")
		return nil
	}
	if _, err := eng.PutSource(engine.Source{ID: demoDocsSource, Name: "Wren documentation", Type: "upload", Enabled: true}); err != nil {
		return err
	}
	files, err := fs.Glob(demoFS, "demo/docs/*.md")
	if err != nil {
		return err
	}
	var docs []engine.Document
	for _, f := range files {
		b, err := demoFS.ReadFile(f)
		if err != nil {
			return err
		}
		content := string(b)
		title := extract.MarkdownTitle(content)
		if title == "" {
			title = extract.TitleFromFileName(f)
		}
		docs = append(docs, engine.Document{
			SourceID: demoDocsSource, Key: path.Base(f), Title: title, Content: content, Format: engine.FormatMarkdown,
		})
	}
	if _, err := eng.PutDocuments(docs); err != nil {
		return err
	}
	if _, err := eng.PutSource(engine.Source{ID: demoChatSource, Name: "Wren Community Discord", Type: "discord", Enabled: true,
		Config: map[string]any{"guildId": "1102345678901234567"}}); err != nil {
		return err
	}
	f, err := demoFS.Open("demo/discord-export.json")
	if err != nil {
		return err
	}
	defer f.Close()
	x, err := crawl.ParseDiscordExport(f, demoChatSource)
	if err != nil {
		return fmt.Errorf("demo export: %w", err)
	}
	n, err := crawl.Import(eng, x)
	if err != nil {
		return err
	}
	log.Info("demo content loaded", "documents", len(docs), "messages", n, "channels", len(x.Channels))
	return nil
}
