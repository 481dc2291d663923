package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/sift-search/sift/engine"
	"github.com/sift-search/sift/semantic"
)

// backup writes a consistent snapshot of an offline data dir to a file.
func backup(args []string) error {
	fs := flag.NewFlagSet("backup", flag.ContinueOnError)
	dir := fs.String("data-dir", "./data", "data dir to back up (no server may be running on it)")
	out := fs.String("out", "", "file to write")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" || fs.NArg() > 0 {
		return errors.New("usage: sift backup --data-dir DIR --out FILE")
	}
	if _, err := os.Stat(filepath.Join(*dir, "wal")); err != nil {
		return fmt.Errorf("%s is not a Sift data dir", *dir)
	}
	// The semantic index follows, so that the backup holds its section
	// (chunks and vectors) as the data dir's snapshots do.
	eng, _, err := semantic.Open(engine.Options{DataDir: *dir}, semantic.Options{})
	if err != nil {
		return err
	}
	defer eng.Close()
	tmp := *out + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	seq, err := eng.Backup(f)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, *out)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("backup: %w", err)
	}
	c := eng.Counts(true)
	fmt.Printf("wrote %s: sequence %d, %d messages, %d documents\n", *out, seq, c.Messages, c.Documents)
	return nil
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
	seq, msgs, docs, err := engine.Restore(*dir, fs.Arg(0))
	if err != nil {
		return err
	}
	fmt.Printf("restored %s into %s: sequence %d, %d messages, %d documents\n", fs.Arg(0), *dir, seq, msgs, docs)
	return nil
}
