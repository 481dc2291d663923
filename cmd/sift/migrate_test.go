package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sift-search/sift/engine"
	"github.com/sift-search/sift/internal/weaviatetest"
	"github.com/sift-search/sift/record"
	"github.com/sift-search/sift/storetest"
	"github.com/sift-search/sift/wvstore"
)

// TestMigrate: sift migrate copies a data dir into a cluster so that the
// cluster holds what the data dir holds — every source (cursor, rules,
// creation time), channel and document with the data dir's slug (gaps
// included), message, the settings, the counts — and finds the same hits
// for the same searches; it prints its progress and how to serve from the
// cluster; run again, it finds every stage done. An interrupted migration
// resumes and ends complete, nothing written twice. A namespace holding
// anything else, or a data dir changed since the run it would resume, is
// refused.
func TestMigrate(t *testing.T) {
	cl := weaviatetest.Start(t, 1)
	url := cl.Nodes[0].URL()
	dir := filepath.Join(t.TempDir(), "data")
	eng, err := engine.Open(engine.Options{DataDir: dir, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	storetest.FillContent(t, eng)
	if err := eng.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := engine.Open(engine.Options{DataDir: dir, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer data.Close()
	total := data.Counts(true).Messages
	open := func(ns string) *wvstore.Store {
		t.Helper()
		st, err := wvstore.Open(context.Background(), wvstore.Options{URL: url, Namespace: ns})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	migrate := func(env []string, args ...string) (string, error) {
		cmd := exec.Command(siftBin, append([]string{"migrate", "--data-dir", dir, "--to", "weaviate"}, args...)...)
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}

	t.Run("copies", func(t *testing.T) {
		out, err := migrate([]string{"WEAVIATE_URL=" + url, "WEAVIATE_NAMESPACE=MigA"})
		for _, want := range []string{"migrating " + dir, "sources: 3 copied", "settings: 2 copied", "channels: 9 copied",
			fmt.Sprintf("messages: %d copied", total), "documents: 5 copied", "as the data dir does",
			"STORE=weaviate WEAVIATE_URL=" + url + " WEAVIATE_NAMESPACE=MigA sift serve"} {
			if err != nil || !strings.Contains(out, want) {
				t.Fatalf("migrate: %v: want %q in\n%s", err, want, out)
			}
		}
		if strings.Contains(out, "is taken") {
			t.Errorf("a slug moved:\n%s", out)
		}
		storetest.SameContent(t, data, open("MigA"))
		out, err = migrate(nil, "--weaviate-url", url, "--weaviate-namespace", "MigA")
		if err != nil || !strings.Contains(out, "resuming") || strings.Count(out, "copied by an earlier run") != 5 || !strings.Contains(out, "as the data dir does") {
			t.Fatalf("migrate again: %v\n%s", err, out)
		}
	})

	// sift backup with STORE=weaviate backs up the cluster; sift restore
	// with it set refuses (a cluster-backed server reads no data dir) and
	// names the way in; without it, it installs the cluster's backup.
	t.Run("backup and restore", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "cluster.sift")
		cluster := []string{"STORE=weaviate", "WEAVIATE_URL=" + url, "WEAVIATE_NAMESPACE=MigA"}
		cli := func(env []string, args ...string) (string, error) {
			cmd := exec.Command(siftBin, args...)
			cmd.Env = append(os.Environ(), env...)
			out, err := cmd.CombinedOutput()
			return string(out), err
		}
		out, err := cli(cluster, "backup", "--out", file)
		if err != nil || !strings.Contains(out, fmt.Sprintf("%d messages, 5 documents", total)) {
			t.Fatalf("backup of the cluster: %v\n%s", err, out)
		}
		fresh := filepath.Join(t.TempDir(), "fresh")
		out, err = cli(cluster, "restore", "--data-dir", fresh, file)
		if err == nil || !strings.Contains(out, "sift migrate --data-dir") || !strings.Contains(out, "STORE=weaviate") {
			t.Fatalf("restore with STORE=weaviate: %v\n%s", err, out)
		}
		if _, err := os.Stat(fresh); !os.IsNotExist(err) {
			t.Errorf("the refused restore made %s", fresh)
		}
		if out, err := cli(nil, "restore", "--data-dir", fresh, file); err != nil || !strings.Contains(out, fmt.Sprintf("%d messages, 5 documents", total)) {
			t.Fatalf("restore: %v\n%s", err, out)
		}
	})

	t.Run("resumes", func(t *testing.T) {
		defer func(n int) { reportEvery = n }(reportEvery)
		reportEvery = 100
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		wv := wvstore.Options{URL: url, Namespace: "MigB"}
		var out bytes.Buffer
		m := &migration{dir: dir, wv: wv, out: &out, batch: 40, afterBatch: func(n int) {
			if n >= 120 {
				cancel()
			}
		}}
		if err := m.run(ctx); !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "interrupted after 120 of") {
			t.Fatalf("an interrupted migration: %v\n%s", err, out.String())
		}
		st := open("MigB")
		if c := st.Counts(true); c.Messages != 120 || c.Documents != 0 {
			t.Fatalf("after the interruption the cluster holds %+v, want 120 messages", c)
		}
		out.Reset()
		m = &migration{dir: dir, wv: wv, out: &out, batch: 40}
		if err := m.run(context.Background()); err != nil {
			t.Fatalf("resume: %v\n%s", err, out.String())
		}
		for _, want := range []string{"resuming", "sources: copied by an earlier run", "channels: copied by an earlier run",
			fmt.Sprintf("messages: %d copied", total-120), fmt.Sprintf("messages: 240 of %d (", total), "documents: 5 copied"} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("resume: want %q in\n%s", want, out.String())
			}
		}
		storetest.SameContent(t, data, st)
	})

	t.Run("refuses", func(t *testing.T) {
		for _, c := range []struct {
			args []string
			want string
		}{
			{[]string{"--weaviate-namespace", "MigA"}, "--weaviate-url (WEAVIATE_URL) is required"},
			{[]string{"--weaviate-url", url, "--weaviate-namespace", "lower"}, "namespace \"lower\""},
			{[]string{"--weaviate-url", url, "--weaviate-replication", "0"}, "replication must be"},
		} {
			if out, err := migrate(nil, c.args...); err == nil || !strings.Contains(out, c.want) {
				t.Errorf("migrate %v: %v, want %q in\n%s", c.args, err, c.want, out)
			}
		}
		if out, err := run(t, "migrate", "--data-dir", dir, "--weaviate-url", url); err == nil || !strings.Contains(out, "usage") {
			t.Errorf("migrate without --to: %v\n%s", err, out)
		}
		// A namespace with content of its own.
		if _, err := open("MigC").PutSource(record.Source{ID: "mine", Name: "Mine", Type: "web"}); err != nil {
			t.Fatal(err)
		}
		if out, err := migrate(nil, "--weaviate-url", url, "--weaviate-namespace", "MigC"); err == nil || !strings.Contains(out, "already holds 1 sources") {
			t.Errorf("migrate into a namespace in use: %v\n%s", err, out)
		}
		// The data dir changed since the migration the namespace holds.
		data.Close()
		eng, err := engine.Open(engine.Options{DataDir: dir, NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := eng.PutDocuments([]record.Document{{Title: "Later", Content: "written after the migration"}}); err != nil {
			t.Fatal(err)
		}
		eng.Close()
		out, err := migrate(nil, "--weaviate-url", url, "--weaviate-namespace", "MigA")
		if err == nil || !strings.Contains(out, "holds a migration of "+dir+" at sequence") {
			t.Errorf("migrate a changed data dir into its old namespace: %v\n%s", err, out)
		}
	})
}
