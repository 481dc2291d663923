// Package weaviatetest runs real Weaviate clusters on loopback for tests:
// it installs the pinned weaviate-server with `go install` into a cache
// outside the repository when it is missing (so tests need only Go), then
// starts nodes as child processes with their own ports and data
// directories, and can kill (SIGKILL) and restart them.
package weaviatetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Version is the Weaviate release the tests run against. It holds the fix
// of weaviate#11780 (BM25 with a limit left out top hits still in a
// memtable), which the Weaviate store's ranked search relies on.
const Version = "v1.39.0"

// version is the release to run: Version, or $SIFT_WEAVIATE_VERSION to
// measure or test another one (installed beside it).
func version() string {
	if v := os.Getenv("SIFT_WEAVIATE_VERSION"); v != "" {
		return v
	}
	return Version
}

// Binary returns the path of weaviate-server, installing it first when it
// is missing: `go install github.com/weaviate/weaviate/cmd/weaviate-server`
// at version() into $SIFT_WEAVIATE_CACHE (default: the user cache directory's
// sift/weaviate/<version>). An install takes minutes of CPU once; a lock
// file keeps test packages running at once from installing it twice.
func Binary(tb testing.TB) string {
	tb.Helper()
	dir := os.Getenv("SIFT_WEAVIATE_CACHE")
	if dir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			tb.Fatalf("weaviatetest: no cache directory: %v", err)
		}
		dir = filepath.Join(base, "sift", "weaviate")
	}
	v := version()
	dir = filepath.Join(dir, v)
	bin := filepath.Join(dir, "weaviate-server")
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	lock, err := os.OpenFile(filepath.Join(dir, ".install.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		tb.Fatal(err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		tb.Fatal(err)
	}
	if _, err := os.Stat(bin); err == nil { // another package installed it meanwhile
		return bin
	}
	tb.Logf("weaviatetest: installing weaviate-server %s into %s (once; a few minutes)", v, dir)
	cmd := exec.Command("go", "install", "github.com/weaviate/weaviate/cmd/weaviate-server@"+v)
	cmd.Env = append(os.Environ(), "GOBIN="+dir, "GOFLAGS=-mod=mod")
	cmd.Dir = os.TempDir() // outside any module
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("weaviatetest: go install weaviate-server: %v\n%s", err, out)
	}
	return bin
}

// Node is one weaviate-server process.
type Node struct {
	Name                                    string
	HTTP, GRPC, Gossip, Data, Raft, RaftRPC int
	Dir                                     string

	mu  sync.Mutex
	cmd *exec.Cmd
	log *os.File
}

// URL is the node's REST address.
func (n *Node) URL() string { return "http://127.0.0.1:" + strconv.Itoa(n.HTTP) }

// GRPCAddr is the node's gRPC address.
func (n *Node) GRPCAddr() string { return "127.0.0.1:" + strconv.Itoa(n.GRPC) }

// Cluster is a set of nodes on loopback.
type Cluster struct {
	Nodes []*Node
	bin   string
	tb    testing.TB
	opts  Options
}

// Options are what a test may change of the nodes' settings.
type Options struct {
	// Env holds NAME=value settings given to every node after the
	// harness's own, which they override (e.g. QUERY_MAXIMUM_RESULTS=300
	// for a test of paging past it with little data). Weaviate's defaults
	// hold for the rest of its settings.
	Env []string
}

// Start starts an n-node cluster with Weaviate's default query settings
// and waits until every node is ready. The cluster is stopped when the
// test ends.
func Start(tb testing.TB, n int) *Cluster {
	tb.Helper()
	return StartWith(tb, n, Options{})
}

// StartWith is Start with settings of opts.
func StartWith(tb testing.TB, n int, opts Options) *Cluster {
	tb.Helper()
	c := &Cluster{bin: Binary(tb), tb: tb, opts: opts}
	root := tb.TempDir()
	ports := reservePorts(tb, 5*n)
	for i := range n {
		p := ports[5*i:]
		c.Nodes = append(c.Nodes, &Node{
			Name: fmt.Sprint("node", i+1), HTTP: p[0], GRPC: p[1], Gossip: p[2], Data: p[3],
			Raft: p[4], RaftRPC: p[4] + 1, Dir: filepath.Join(root, fmt.Sprint("node", i+1)),
		})
	}
	tb.Cleanup(c.Stop)
	// The first node must listen before the others join it; none is
	// ready before the expected voters have formed the schema's Raft.
	c.startNode(c.Nodes[0])
	if err := waitPath(c.Nodes[0].URL(), "/v1/.well-known/live", 2*time.Minute); err != nil {
		c.fail(c.Nodes[0], err)
	}
	for _, nd := range c.Nodes[1:] {
		c.startNode(nd)
	}
	for _, nd := range c.Nodes {
		c.waitReady(nd, 2*time.Minute)
	}
	return c
}

// URLs returns every node's REST address.
func (c *Cluster) URLs() []string {
	var out []string
	for _, n := range c.Nodes {
		out = append(out, n.URL())
	}
	return out
}

func (c *Cluster) env(nd *Node) []string {
	var raftJoin []string
	for _, o := range c.Nodes {
		raftJoin = append(raftJoin, o.Name+":"+strconv.Itoa(o.Raft))
	}
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + os.Getenv("HOME"),
		"PERSISTENCE_DATA_PATH=" + nd.Dir,
		"AUTHENTICATION_ANONYMOUS_ACCESS_ENABLED=true",
		"DISABLE_TELEMETRY=true",
		"LOG_LEVEL=warning",
		"GRPC_PORT=" + strconv.Itoa(nd.GRPC),
		"CLUSTER_HOSTNAME=" + nd.Name,
		"CLUSTER_IN_LOCALHOST=true",
		"CLUSTER_ADVERTISE_ADDR=127.0.0.1",
		"CLUSTER_GOSSIP_BIND_PORT=" + strconv.Itoa(nd.Gossip),
		"CLUSTER_DATA_BIND_PORT=" + strconv.Itoa(nd.Data),
		"RAFT_PORT=" + strconv.Itoa(nd.Raft),
		"RAFT_INTERNAL_RPC_PORT=" + strconv.Itoa(nd.RaftRPC),
		"RAFT_JOIN=" + strings.Join(raftJoin, ","),
		"RAFT_BOOTSTRAP_EXPECT=" + strconv.Itoa(len(c.Nodes)),
		"ASYNC_REPLICATION_DISABLED=false",
		"GO_PROFILING_DISABLE=true", // every node would bind :6060
		// A node back from a crash is repaired sooner than by default
		// (batches of 100, objects younger than 30 s left for later), so
		// the catch-up tests wait on seconds, not minutes.
		"ASYNC_REPLICATION_PROPAGATION_BATCH_SIZE=1000",
		"ASYNC_REPLICATION_PROPAGATION_DELAY=5s",
	}
	if nd != c.Nodes[0] {
		env = append(env, "CLUSTER_JOIN=127.0.0.1:"+strconv.Itoa(c.Nodes[0].Gossip))
	}
	// The last of a name wins (os/exec keeps the last value of each).
	return append(env, c.opts.Env...)
}

func (c *Cluster) startNode(nd *Node) {
	c.tb.Helper()
	nd.mu.Lock()
	defer nd.mu.Unlock()
	if err := os.MkdirAll(nd.Dir, 0o755); err != nil {
		c.tb.Fatal(err)
	}
	logf, err := os.OpenFile(nd.Dir+".log", os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		c.tb.Fatal(err)
	}
	cmd := exec.Command(c.bin, "--host", "127.0.0.1", "--port", strconv.Itoa(nd.HTTP), "--scheme", "http")
	cmd.Env = c.env(nd)
	cmd.Dir = nd.Dir
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		c.tb.Fatalf("weaviatetest: start %s: %v", nd.Name, err)
	}
	nd.cmd, nd.log = cmd, logf
	go cmd.Wait()
}

// waitReady waits until the node answers /v1/.well-known/ready with 200.
func (c *Cluster) waitReady(nd *Node, timeout time.Duration) {
	c.tb.Helper()
	if err := WaitReady(nd.URL(), timeout); err != nil {
		c.fail(nd, err)
	}
}

func (c *Cluster) fail(nd *Node, err error) {
	c.tb.Helper()
	log, _ := os.ReadFile(nd.Dir + ".log")
	c.tb.Fatalf("weaviatetest: %s: %v\n%s", nd.Name, err, tail(log, 4000))
}

// WaitReady polls a node's readiness endpoint until it answers 200 (a node
// counts as up then, not when /v1/nodes calls it healthy).
func WaitReady(url string, timeout time.Duration) error {
	return waitPath(url, "/v1/.well-known/ready", timeout)
}

func waitPath(url, path string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(ctx, "GET", url+path, nil)
		res, err := http.DefaultClient.Do(req)
		if err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			if err == nil {
				err = errors.New("not ready")
			}
			return fmt.Errorf("%s: %w", url, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Kill stops node i with SIGKILL, as a crash would.
func (c *Cluster) Kill(i int) {
	nd := c.Nodes[i]
	nd.mu.Lock()
	defer nd.mu.Unlock()
	if nd.cmd != nil && nd.cmd.Process != nil {
		syscall.Kill(-nd.cmd.Process.Pid, syscall.SIGKILL)
		nd.cmd = nil
	}
	if nd.log != nil {
		nd.log.Close()
		nd.log = nil
	}
}

// Restart starts a killed node again on its data and waits until it is
// ready: up to five minutes, since a node rejoining the Raft while the
// machine runs other clusters (make test runs packages in parallel on two
// cores) took more than two.
func (c *Cluster) Restart(i int) {
	c.tb.Helper()
	c.startNode(c.Nodes[i])
	c.waitReady(c.Nodes[i], 5*time.Minute)
}

// Stop kills every node.
func (c *Cluster) Stop() {
	for i := range c.Nodes {
		c.Kill(i)
	}
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// ObjectCounts returns how many objects of a collection each node's
// replicas hold, as /v1/nodes reports them on the node at url.
func ObjectCounts(url, collection string) (map[string]int, error) {
	res, err := http.Get(url + "/v1/nodes?output=verbose&collection=" + collection)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	var body struct {
		Nodes []struct {
			Name   string
			Shards []struct {
				Class       string
				ObjectCount int
			}
		}
	}
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
		return nil, fmt.Errorf("/v1/nodes: %w", err)
	}
	out := map[string]int{}
	for _, n := range body.Nodes {
		for _, sh := range n.Shards {
			if sh.Class == collection {
				out[n.Name] += sh.ObjectCount
			}
		}
	}
	return out, nil
}
