package wvstore

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/sift-search/sift/engine"
	"github.com/sift-search/sift/httpapi"
	"github.com/sift-search/sift/internal/weaviatetest"
	"github.com/sift-search/sift/storetest"
	"github.com/sift-search/sift/transfer"
)

// The server runs on either store; cmd/sift gives the cluster its Backup,
// a copy into a memory store whose snapshot is the backup, as backedUp
// does here.
var _ httpapi.Store = backedUp{}

type backedUp struct{ *Store }

func (b backedUp) Backup(w io.Writer) (uint64, error) {
	mem, err := engine.Open(engine.Options{})
	if err != nil {
		return 0, err
	}
	defer mem.Close()
	if err := transfer.Copy(mem, b.Store); err != nil {
		return 0, err
	}
	return mem.Backup(w)
}

// TestBackup: a backup of a cluster is an ordinary snapshot. It verifies
// as `sift verify` checks files, `sift restore` installs it, and the
// memory store opened on it holds what the cluster holds — every source
// (cursor, rules, creation time), channel and document with its slug
// (gaps included), message, the settings, the counts — and finds the same
// hits for the same searches, private and public.
func TestBackup(t *testing.T) {
	cl := weaviatetest.Start(t, 1)
	s, err := Open(context.Background(), Options{URL: cl.Nodes[0].URL(), Namespace: "BackupT"})
	if err != nil {
		t.Fatal(err)
	}
	storetest.FillContent(t, s)

	var buf bytes.Buffer
	seq, err := backedUp{s}.Backup(&buf)
	if err != nil {
		t.Fatal(err)
	}
	c := s.Counts(true)
	vseq, msgs, docs, err := engine.VerifySnapshot(bytes.NewReader(buf.Bytes()))
	if err != nil || vseq != seq || msgs != c.Messages || docs != c.Documents {
		t.Fatalf("verify the backup: seq %d (backup said %d), %d messages, %d documents (the cluster: %d, %d): %v",
			vseq, seq, msgs, docs, c.Messages, c.Documents, err)
	}
	file := filepath.Join(t.TempDir(), "cluster.sift")
	if err := os.WriteFile(file, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "restored")
	if _, _, _, err := engine.Restore(dir, file); err != nil {
		t.Fatalf("restore the backup: %v", err)
	}
	eng, err := engine.Open(engine.Options{DataDir: dir, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	storetest.SameContent(t, s, eng)
}
