package weaviatetest

import (
	"errors"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// reservePorts returns n ports for a cluster's nodes, each followed by a
// free port too (a node's Raft RPC port is its Raft port's next), and
// holds them for the rest of the test.
//
// The ports are chosen below the kernel's ephemeral range: a port from
// that range, released when a node is killed, can be taken by any
// outgoing connection on the machine as its local port before the node
// restarts ("address already in use" on its Raft RPC port under make
// test). Ports outside the range are only ever taken by explicit binds,
// and the explicit binds here are other test processes' clusters: make
// test runs packages in parallel, and a port free when one package looked
// was bound a second later by another package's node (a node's HTTP port
// answering with another node's gRPC). So every port is reserved in a
// registry shared by the machine's test processes, a directory of one
// file per port naming its holder's process, kept under a lock; a
// holder's reservations are dropped when its test ends, or when a later
// process finds the holder gone.
func reservePorts(tb testing.TB, n int) []int {
	tb.Helper()
	dir := filepath.Join(os.TempDir(), "sift-weaviatetest-ports")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	lock, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		tb.Fatal(err)
	}
	defer lock.Close() // closing releases the lock
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		tb.Fatal(err)
	}
	lo, hi := 20000, ephemeralLow()
	if hi-lo < 1000 {
		lo = 1024
	}
	usable := func(p int) bool { return !reserved(dir, p) && portFree(p) }
	var out, held []int
	seen := map[int]bool{}
	for tries := 0; len(out) < n; tries++ {
		if tries > 10000 {
			tb.Fatalf("weaviatetest: no free ports in %d-%d", lo, hi)
		}
		p := lo + rand.IntN(hi-lo-1)
		if seen[p] || seen[p+1] || !usable(p) || !usable(p+1) {
			continue
		}
		seen[p], seen[p+1] = true, true
		out = append(out, p)
		held = append(held, p, p+1)
	}
	pid := []byte(strconv.Itoa(os.Getpid()))
	for _, p := range held {
		if err := os.WriteFile(filepath.Join(dir, strconv.Itoa(p)), pid, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	tb.Cleanup(func() {
		for _, p := range held {
			os.Remove(filepath.Join(dir, strconv.Itoa(p)))
		}
	})
	return out
}

// reserved reports whether a live process holds port p in the registry
// at dir.
func reserved(dir string, p int) bool {
	b, err := os.ReadFile(filepath.Join(dir, strconv.Itoa(p)))
	if err != nil {
		return false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return false
	}
	err = syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// ephemeralLow is the lowest port the kernel hands to outgoing
// connections (32768 when it cannot be read).
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return 32768
	}
	p, err := strconv.Atoi(f[0])
	if err != nil || p <= 1024 {
		return 32768
	}
	return p
}

// portFree reports whether p can be bound on loopback, for TCP and UDP
// both (the gossip port takes both).
func portFree(p int) bool {
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
	if err != nil {
		return false
	}
	l.Close()
	u, err := net.ListenPacket("udp", "127.0.0.1:"+strconv.Itoa(p))
	if err != nil {
		return false
	}
	u.Close()
	return true
}
