package crawl

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/sift-search/sift/record"
)

// exportFormats are the formats ParseExport reads.
var exportFormats = []string{"discord", "slack", "telegram"}

// DetectBytes is how much of a file DetectFormat looks at.
const DetectBytes = 64 << 10

// DetectFormat names the export format of a file from its first bytes (a
// few KB suffice; at most 64 KiB are looked at): "slack" for a zip,
// "discord" for a DiscordChatExporter JSON (top-level guild and channel),
// "telegram" for a Telegram Desktop result.json (top-level chats, or
// messages with name or type), or "" when it is none of them. Key order
// does not matter; keys past the end of head are not seen.
func DetectFormat(head []byte) string {
	if bytes.HasPrefix(head, []byte("PK\x03\x04")) || bytes.HasPrefix(head, []byte("PK\x05\x06")) {
		return "slack"
	}
	head = bytes.TrimPrefix(head[:min(len(head), DetectBytes)], []byte("\uFEFF"))
	keys, telegramAbout := topLevelKeys(head)
	switch {
	case keys["guild"] && keys["channel"]:
		return "discord"
	case telegramAbout, keys["messages"] && (keys["name"] || keys["type"]),
		keys["chats"] || keys["left_chats"] || keys["personal_information"]:
		return "telegram"
	}
	for _, k := range telegramAccountKeys {
		if keys["about"] && keys[k] {
			return "telegram"
		}
	}
	return ""
}

// telegramAccountKeys follow "about" (a localized blurb) at the top of a
// Telegram full-account export; the chats may come after a long list of
// contacts, past the head.
var telegramAccountKeys = []string{"profile_pictures", "stories", "contacts", "frequent_contacts",
	"sessions", "web_sessions", "other_data"}

// topLevelKeys returns the keys of the JSON object that head starts with,
// as far as head goes, and whether its "about" mentions Telegram (the
// first key of a Telegram full-account export).
func topLevelKeys(head []byte) (map[string]bool, bool) {
	dec := json.NewDecoder(bytes.NewReader(head))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	keys, about := map[string]bool{}, false
	depth, key, last := 1, true, ""
	for depth > 0 {
		t, err := dec.Token()
		if err != nil {
			break // the end of head, or not JSON after all
		}
		switch t := t.(type) {
		case json.Delim:
			if t == '{' || t == '[' {
				depth++
			} else if depth--; depth == 1 {
				key = true
			}
		case string:
			if depth == 1 && key {
				keys[t], last, key = true, t, false
				continue
			}
			if depth == 1 {
				about = about || last == "about" && strings.Contains(t, "Telegram")
				key = true
			}
		default:
			if depth == 1 {
				key = true
			}
		}
	}
	return keys, about
}

// ParseExport parses an export of the given format (see DetectFormat) from
// the size bytes of r.
func ParseExport(format string, r io.ReaderAt, size int64, sourceID string) (*Export, error) {
	switch format {
	case "slack":
		return ParseSlackExport(r, size, sourceID)
	case "discord":
		return ParseDiscordExport(io.NewSectionReader(r, 0, size), sourceID)
	case "telegram":
		return ParseTelegramExport(io.NewSectionReader(r, 0, size), sourceID)
	}
	return nil, formatErr("unknown export format %q: Sift reads %s", format, strings.Join(exportFormats, ", "))
}

// What follows is shared by the importers.

// errExportTooLarge is returned by a capReader past its limit.
var errExportTooLarge = errors.New("too large")

// capReader reads at most limit bytes of r, then fails with errExportTooLarge if
// r holds more.
type capReader struct {
	r     io.Reader
	limit int64
}

func (c *capReader) Read(p []byte) (int, error) {
	if c.limit <= 0 {
		var one [1]byte
		n, err := c.r.Read(one[:])
		if n > 0 {
			return 0, errExportTooLarge
		}
		return 0, err
	}
	if int64(len(p)) > c.limit {
		p = p[:c.limit]
	}
	n, err := c.r.Read(p)
	c.limit -= int64(n)
	return n, err
}

// decodeJSON decodes the one JSON value r holds into v; anything but white
// space after it is an error.
func decodeJSON(r io.Reader, v any) error {
	dec := json.NewDecoder(r)
	if err := dec.Decode(v); err != nil {
		return jsonErr(err)
	}
	switch _, err := dec.Token(); {
	case err == nil:
		return errors.New("data after the JSON value")
	case err != io.EOF:
		return jsonErr(err)
	}
	return nil
}

// jsonErr says where a syntax error is.
func jsonErr(err error) error {
	var syn *json.SyntaxError
	switch {
	case errors.As(err, &syn):
		return fmt.Errorf("%w (at byte %d)", err, syn.Offset)
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		return errors.New("the JSON ends early")
	}
	return err
}

// checkID checks an id the engine will take: not blank, at most max bytes,
// valid UTF-8 and free of control characters.
func checkID(id string, max int) error {
	switch {
	case strings.TrimSpace(id) == "":
		return errors.New("is missing")
	case len(id) > max:
		return fmt.Errorf("is longer than %d bytes", max)
	case !utf8.ValidString(id) || strings.ContainsFunc(id, unicode.IsControl):
		return fmt.Errorf("%q has control characters or is not UTF-8", id)
	}
	return nil
}

// visibleName makes a one-line name of s of at most maxRunes characters,
// cut at a word when it is longer; if s has nothing visible, the fallback.
func visibleName(s string, maxRunes int, fallback string) string {
	words := strings.FieldsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) })
	name := strings.Join(words, " ")
	if utf8.RuneCountInString(name) > maxRunes {
		cut := len(name)
		for i := range name {
			if maxRunes--; maxRunes < 0 {
				cut = i
				break
			}
		}
		if sp := strings.LastIndexByte(name[:cut], ' '); sp > cut/2 {
			cut = sp
		}
		name = name[:cut] + "…"
	}
	if name == "" || len(name) > record.MaxNameBytes {
		return fallback
	}
	return name
}

// DetectFile names the export format of a file (see DetectFormat); a file
// of no format Sift reads is an ErrFormat.
func DetectFile(file io.ReaderAt) (string, error) {
	head := make([]byte, DetectBytes)
	n, err := file.ReadAt(head, 0)
	if err != nil && err != io.EOF {
		return "", err
	}
	format := DetectFormat(head[:n])
	if format == "" {
		return "", formatErr("not a DiscordChatExporter JSON file, a Slack export zip or a Telegram result.json")
	}
	return format, nil
}

// ReadExport detects the format of an export file and parses all of it,
// for sourceID.
func ReadExport(file io.ReaderAt, size int64, sourceID string) (*Export, error) {
	format, err := DetectFile(file)
	if err != nil {
		return nil, err
	}
	return ParseExport(format, file, size, sourceID)
}
