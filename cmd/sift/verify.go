package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/sift-search/sift/engine"
	"github.com/sift-search/sift/semantic"
)

// verify reads a snapshot or backup file completely, checking every checksum
// and structure, and prints what it holds. Damage is an error naming it.
func verify(args []string) error {
	fs := flag.NewFlagSet("verify", flag.ContinueOnError)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("usage: sift verify FILE")
	}
	path := fs.Arg(0)
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return fmt.Errorf("%s is a directory; name a snapshot or backup file", path)
	}
	// The semantic index validates its section and says what it holds.
	idx := semantic.New(semantic.Options{})
	sum, err := engine.InspectSnapshot(f, idx)
	if err != nil {
		return fmt.Errorf("verify %s: damaged or not a snapshot: %w", path, err)
	}
	fmt.Printf("%s: valid, every checksum and structure verified\n", path)
	fmt.Printf("  format version  %d\n", sum.Version)
	fmt.Printf("  sequence        %d\n", sum.Seq)
	fmt.Printf("  created         %s\n", sum.Created.UTC().Format(time.RFC3339))
	fmt.Printf("  size            %d bytes\n", fi.Size())
	sem := idx.Status()
	fmt.Printf("  holds           %d sources, %d channels, %d messages, %d documents, %d chunks (%d embedded)\n",
		sum.Sources, sum.Channels, sum.Messages, sum.Documents, sem.Chunks, sem.Vectors)
	switch sum.Version {
	case 1:
		fmt.Println("  note            written before semantic search; start-up builds its chunks and vectors")
	case 2, 3:
		fmt.Println("  note            its semantic index is in an older layout, not counted above; start-up rebuilds its chunks and vectors")
	}
	if sum.Rebuilt {
		fmt.Println("  note            its indexes were written by another tokenizer version; start-up rebuilds them")
	}
	return nil
}
