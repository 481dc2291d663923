package httpapi

import (
	"html"
	"maps"
	"os"
	"strings"
	"testing"
)

// TestImportIsRecorded: an import through the API answers with figures
// that add up to the messages of the file, and shows on the source's
// record, on the dashboard and on the console's source page; a Discord
// file of another guild is refused naming both ids.
func TestImportIsRecorded(t *testing.T) {
	ts := start(t)
	basicAuth := []string{"Authorization", "Basic " + basic(testUser, testPass)}
	export, err := os.ReadFile("../internal/demo/discord-export.json")
	if err != nil {
		t.Fatal(err)
	}
	// An import-only Discord source needs no guildId; this one has it.
	if r := ts.do(t, "POST", "/api/sources", strings.NewReader(`{"id":"io","name":"Import only","type":"discord","config":{}}`), adminJSON...); r.status != 201 {
		t.Fatalf("an import-only discord source: %d %s", r.status, r.body)
	}
	wantError(t, ts.do(t, "POST", "/api/sources", strings.NewReader(`{"name":"Bot","type":"discord","config":{"token":"t"}}`), adminJSON...), 400, "config.guildId")
	ts.do(t, "POST", "/api/sources", strings.NewReader(`{"id":"chat","name":"Chat","type":"discord","config":{"guildId":"1102345678901234567"}}`), adminJSON...)

	body, ct := multipartBody(t, map[string]string{"wren-help.json": string(export)})
	r := ts.do(t, "POST", "/api/sources/chat/import", body, "Content-Type", ct, "Authorization", "Bearer "+testKey)
	if r.status != 200 {
		t.Fatalf("import: %d %s", r.status, r.body)
	}
	imp := r.json(t)
	n := func(m map[string]any, k string) int { f, _ := m[k].(float64); return int(f) }
	reasons := map[string]int{}
	for k, v := range imp["skippedReasons"].(map[string]any) {
		reasons[k] = int(v.(float64))
	}
	if n(imp, "messages") != 325 || n(imp, "stored")+n(imp, "updated")+n(imp, "unchanged")+n(imp, "skipped") != 325 ||
		n(imp, "stored") != 320 || !maps.Equal(reasons, map[string]int{"unsupported type GuildMemberJoin": 5}) ||
		imp["file"] != "wren-help.json" || imp["jobId"] == "" || imp["format"] != "discord" || n(imp, "changed") != 320 {
		t.Fatalf("import: %s", r.body)
	}

	rec := ts.get(t, "/api/sources/chat", bearer...).json(t)
	li, _ := rec["lastImport"].(map[string]any)
	if li == nil || li["jobId"] != imp["jobId"] || li["status"] != "ok" || li["file"] != "wren-help.json" || n(li, "stored") != 320 ||
		n(li, "messages") != 325 || n(li, "skipped") != 5 || li["finishedAt"] == nil || li["error"] != "" || rec["lastCrawl"] != nil {
		t.Fatalf("the source's record: %v", rec)
	}
	if r := ts.do(t, "PATCH", "/api/sources/chat", strings.NewReader(`{"name":"Chat","lastImport":{"status":"x"}}`), adminJSON...); r.status != 200 {
		t.Fatalf("a PATCH sending back the record: %d %s", r.status, r.body)
	}

	// The dashboard's row of the source and the source's page show it.
	page := html.UnescapeString(string(ts.get(t, "/dashboard", basicAuth...).body))
	row := page[strings.Index(page, `<a href="/dashboard/sources/chat">`):]
	row = row[:strings.Index(row, "</tr>")]
	for _, want := range []string{"Import: ok", "wren-help.json", "325 messages in the file: 320 stored, 0 updated, 0 unchanged, 5 skipped",
		"(unsupported type GuildMemberJoin: 5)"} {
		if !strings.Contains(row, want) {
			t.Errorf("the dashboard's row lacks %q: %s", want, row)
		}
	}
	if strings.Contains(row, "never") {
		t.Errorf("the dashboard says never: %s", row)
	}
	page = html.UnescapeString(string(ts.get(t, "/dashboard/sources/chat", basicAuth...).body))
	if !strings.Contains(page, "Last import: ok") || !strings.Contains(page, "320 stored") || strings.Contains(page, "Last crawl: never") {
		t.Errorf("the source's page: %s", page)
	}

	// Another guild's file: refused with both ids; nothing changes.
	other := `{"guild":{"id":"222333444555666777","name":"Other"},"channel":{"id":"9","type":"GuildTextChat","name":"general"},
		"messages":[{"id":"10","type":"Default","timestamp":"2024-04-30T09:00:00+00:00","content":"hi","author":{"id":"5","name":"ana"}}]}`
	seq := ts.eng.Seq()
	wantError(t, ts.do(t, "POST", "/api/sources/chat/import", strings.NewReader(other), bearer...), 409, "222333444555666777", "1102345678901234567")
	if ts.eng.Seq() != seq {
		t.Fatalf("the refused import changed the engine")
	}
	// From the console, the refusal is said in the same words.
	o := newOperator(t, ts)
	o.failed(o.upload("/dashboard/sources/chat/import", map[string]string{"other.json": other}), 409, "222333444555666777", "1102345678901234567")
	// And a good import there says its figures.
	o.done(o.upload("/dashboard/sources/chat/import", map[string]string{"wren-help.json": string(export)}),
		"325 messages in the file; 0 new or changed: 0 stored, 0 updated, 320 unchanged, 5 skipped (unsupported type GuildMemberJoin: 5)")
}
