package weaviatetest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

func TestReservePorts(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	dir := filepath.Join(os.TempDir(), "sift-weaviatetest-ports")
	var first []int
	t.Run("hold", func(t *testing.T) {
		first = reservePorts(t, 15)
		second := reservePorts(t, 15)
		taken := map[int]bool{}
		for _, p := range append(append([]int{}, first...), second...) {
			for _, q := range []int{p, p + 1} {
				if taken[q] {
					t.Fatalf("port %d handed out twice", q)
				}
				taken[q] = true
				if !reserved(dir, q) {
					t.Fatalf("port %d not in the registry", q)
				}
			}
		}
	})
	for _, p := range first {
		if _, err := os.Stat(filepath.Join(dir, strconv.Itoa(p))); !os.IsNotExist(err) {
			t.Fatalf("port %d still reserved after its test ended (%v)", p, err)
		}
	}

	// A holder that is gone no longer holds; a live one does.
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	write := func(port, pid int) {
		if err := os.WriteFile(filepath.Join(dir, strconv.Itoa(port)), []byte(strconv.Itoa(pid)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(20001, gone.Process.Pid)
	write(20002, os.Getppid())
	write(20003, 0)
	if reserved(dir, 20001) || !reserved(dir, 20002) || reserved(dir, 20003) || reserved(dir, 20004) {
		t.Fatalf("reserved: dead %v, live %v, bad %v, none %v",
			reserved(dir, 20001), reserved(dir, 20002), reserved(dir, 20003), reserved(dir, 20004))
	}
}
