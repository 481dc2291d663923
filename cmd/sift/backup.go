package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sift-search/sift/engine"
	"github.com/sift-search/sift/record"
	"github.com/sift-search/sift/semantic"
	"github.com/sift-search/sift/transfer"
	"github.com/sift-search/sift/wvstore"
)

// backup writes a consistent snapshot of an offline data dir, or with
// STORE=weaviate of the cluster, to a file.
func backup(args []string) error {
	b := &binder{fs: flag.NewFlagSet("backup", flag.ContinueOnError)}
	var dir, store string
	var wv wvstore.Options
	b.str(&dir, "data-dir", "DATA_DIR", "./data", "data dir to back up (no server may be running on it)")
	b.str(&store, "store", "STORE", "memory", "what to back up: memory (the data dir) or weaviate (the cluster WEAVIATE_URL names)")
	clusterFlags(b, &wv, "collection-name prefix of the instance to back up")
	out := b.fs.String("out", "", "file to write")
	if err := b.fs.Parse(args); err != nil {
		return err
	}
	if *out == "" || b.fs.NArg() > 0 {
		return errors.New("usage: sift backup --data-dir DIR --out FILE (STORE=weaviate: sift backup --weaviate-url URL --out FILE)")
	}
	var st interface {
		Counts(private bool) record.Counts
	}
	var write func(io.Writer) (uint64, error)
	switch store {
	case "memory":
		if _, err := os.Stat(filepath.Join(dir, "wal")); err != nil {
			return fmt.Errorf("%s is not a Sift data dir", dir)
		}
		// The semantic index follows, so that the backup holds its section
		// (chunks and vectors) as the data dir's snapshots do.
		eng, _, err := openFollowed(engine.Options{DataDir: dir}, semantic.Options{})
		if err != nil {
			return err
		}
		defer eng.Close()
		st, write = eng, eng.Backup
	case "weaviate":
		if bad := checkCluster(b, &wv); len(bad) > 0 {
			return errors.New(strings.Join(bad, "\n"))
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cl, err := wvstore.Open(ctx, wv)
		if err != nil {
			return fmt.Errorf("open the Weaviate store at %s: %w", wv.URL, err)
		}
		st, write = cl, func(w io.Writer) (uint64, error) { return backupCluster(cl, w) }
	default:
		return fmt.Errorf("store %q must be memory or weaviate", store)
	}
	seq, err := writeAtomically(*out, write)
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	c := st.Counts(true)
	fmt.Printf("wrote %s: sequence %d, %d messages, %d documents\n", *out, seq, c.Messages, c.Documents)
	return nil
}

// backupCluster writes everything the cluster holds — sources with their
// crawl cursors, channels, messages, documents and settings — as an
// ordinary Sift snapshot, the file `sift backup` writes of a data dir:
// `sift restore` installs it into an empty data dir, `sift verify` checks
// it. It returns the file's sequence number.
//
// The records are copied (transfer.Copy) into a memory store (an engine
// without a data dir, which holds all of them while the backup runs) whose
// Backup writes the file; channels and documents keep their slugs, sources
// their creation times. Chunks and vectors are left out: a server restored
// from the file builds them again.
func backupCluster(cl *wvstore.Store, w io.Writer) (uint64, error) {
	eng, err := engine.Open(engine.Options{})
	if err != nil {
		return 0, fmt.Errorf("backup: open a memory store: %w", err)
	}
	defer eng.Close()
	if err := transfer.Copy(eng, cl); err != nil {
		return 0, fmt.Errorf("backup: %w", err)
	}
	seq, err := eng.Backup(w)
	if err != nil {
		return 0, fmt.Errorf("backup: write the snapshot: %w", err)
	}
	return seq, nil
}

// writeAtomically writes a file with write: a temporary file, synced, then
// renamed into place; nothing is left on failure.
func writeAtomically(name string, write func(io.Writer) (uint64, error)) (uint64, error) {
	tmp := name + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return 0, err
	}
	seq, err := write(f)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, name)
	}
	if err != nil {
		os.Remove(tmp)
		return 0, err
	}
	return seq, nil
}

// restore verifies a backup file and installs it into an empty data dir.
func restore(args []string) error {
	fs := flag.NewFlagSet("restore", flag.ContinueOnError)
	dir := fs.String("data-dir", "./data", "empty data dir to restore into")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("usage: sift restore --data-dir DIR FILE")
	}
	if os.Getenv("STORE") == "weaviate" {
		// A cluster-backed server never reads a data dir.
		return fmt.Errorf("STORE=weaviate is set, and sift restore installs a backup into a data dir, which a cluster-backed server does not read.\n"+
			"To load the backup into the cluster: restore it into an empty data dir without STORE, then copy that dir into an empty namespace:\n"+
			"  env -u STORE sift restore --data-dir /tmp/sift-restore %s\n"+
			"  sift migrate --data-dir /tmp/sift-restore --to weaviate --weaviate-url URL --weaviate-namespace NS", fs.Arg(0))
	}
	seq, msgs, docs, err := engine.Restore(*dir, fs.Arg(0))
	if err != nil {
		return err
	}
	fmt.Printf("restored %s into %s: sequence %d, %d messages, %d documents\n", fs.Arg(0), *dir, seq, msgs, docs)
	return nil
}
