package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// getAdmin reads an admin endpoint of a running sift as JSON.
func (p *proc) getAdmin(t *testing.T, path string, v any) {
	t.Helper()
	req, _ := http.NewRequest("GET", p.url+path, nil)
	req.Header.Set("Authorization", "Bearer "+testKey)
	status, body, err := do(req)
	if err != nil || status != 200 {
		t.Fatalf("GET %s: %d %v %s", path, status, err, body)
	}
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
}

var figuresLine = regexp.MustCompile(`(\d+) messages in the file \((\d+) new or changed\): (\d+) stored, (\d+) updated, (\d+) unchanged, (\d+) skipped`)

// importFigures reads the figures sift import printed; they must add up.
func importedFigures(t *testing.T, out string) (inFile, stored, updated, unchanged, skipped int) {
	t.Helper()
	m := figuresLine.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no figures in %q", out)
	}
	n := make([]int, len(m))
	for i := 1; i < len(m); i++ {
		n[i], _ = strconv.Atoi(m[i])
	}
	if n[1] != n[3]+n[4]+n[5]+n[6] || n[2] != n[3]+n[4] {
		t.Fatalf("figures do not add up: %q", m[0])
	}
	return n[1], n[3], n[4], n[5], n[6]
}

// TestImportCommandAccountsAndRefuses: sift import prints figures that add
// up, with the reasons for what it skipped; a file that cannot be imported
// leaves nothing behind, not even the source it would have created; a
// Discord file of another guild is refused naming both, and changes
// nothing; and the last import is on the source once served.
func TestImportCommandAccountsAndRefuses(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte(`{"guild":{"id":"1"},"channel":{"id":"2","name":"x"},"messages":[{"id":"3","type":"Default","timestamp":"nope","content":"hi"}]}`), 0o644)

	// A malformed file into a new data dir: nothing at all is created.
	out, err := run(t, "import", "--data-dir", dir, "--source", "broken", bad)
	if err == nil || !strings.Contains(out, "timestamp") || !strings.Contains(out, "nothing was imported") || strings.Contains(out, "created source") {
		t.Fatalf("malformed export: %v: %s", err, out)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("a failed import created the data dir: %v", err)
	}

	export := filepath.Join("..", "..", "internal", "demo", "discord-export.json")
	out, err = run(t, "import", "--data-dir", dir, "--source", "chat", export)
	if err != nil || !strings.Contains(out, "created source chat (type discord)") {
		t.Fatalf("%v: %s", err, out)
	}
	inFile, stored, _, _, skipped := importedFigures(t, out)
	if inFile != 325 || stored != 320 || skipped != 5 || !strings.Contains(out, "(unsupported type GuildMemberJoin: 5)") {
		t.Fatalf("first import: %s", out)
	}
	out, err = run(t, "import", "--data-dir", dir, "--source", "chat", export)
	if _, stored, _, unchanged, _ := importedFigures(t, out); err != nil || stored != 0 || unchanged != 320 {
		t.Fatalf("second import: %v: %s", err, out)
	}

	// A malformed file into a data dir that exists: no source is left.
	if out, err := run(t, "import", "--data-dir", dir, "--source", "broken", bad); err == nil || !strings.Contains(out, "timestamp") {
		t.Fatalf("malformed export: %v: %s", err, out)
	}

	// The source took the demo's guild id; a file of another guild is refused.
	other := filepath.Join(t.TempDir(), "other-guild.json")
	os.WriteFile(other, []byte(`{"guild":{"id":"222333444555666777","name":"Other"},"channel":{"id":"9","type":"GuildTextChat","name":"general"},
		"messages":[{"id":"10","type":"Default","timestamp":"2024-04-30T09:00:00+00:00","content":"hi","author":{"id":"5","name":"ana"}}]}`), 0o644)
	out, err = run(t, "import", "--data-dir", dir, "--source", "chat", other)
	if err == nil || !strings.Contains(out, "222333444555666777") || !strings.Contains(out, "1102345678901234567") {
		t.Fatalf("a file of another guild: %v: %s", err, out)
	}

	p := startSift(t, dir)
	defer p.kill()
	var list struct {
		Sources []struct {
			ID string `json:"id"`
		} `json:"sources"`
	}
	p.getAdmin(t, "/api/sources", &list)
	for _, s := range list.Sources {
		if s.ID == "broken" {
			t.Fatal("the failed import left its source behind")
		}
	}
	var chat struct {
		Config     map[string]any `json:"config"`
		LastCrawl  any            `json:"lastCrawl"`
		LastImport struct {
			Status, File, Error string
			Messages, Stored    int
			Unchanged, Skipped  int
		} `json:"lastImport"`
	}
	p.getAdmin(t, "/api/sources/chat", &chat)
	li := chat.LastImport
	if chat.Config["guildId"] != "1102345678901234567" || chat.LastCrawl != nil || li.Status != "ok" || li.File != "discord-export.json" ||
		li.Messages != 325 || li.Unchanged != 320 || li.Skipped != 5 || li.Error != "" {
		t.Fatalf("the source after its imports: %+v", chat)
	}
}
