package weaviatetest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// nodes returns the names and statuses /v1/nodes reports, and the answer
// as read (for a failure's message).
func nodes(t *testing.T, url string) (map[string]string, string) {
	t.Helper()
	res, err := http.Get(url + "/v1/nodes")
	if err != nil {
		return nil, err.Error()
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	var body struct {
		Nodes []struct{ Name, Status string }
	}
	if res.StatusCode != 200 || json.Unmarshal(b, &body) != nil {
		return nil, fmt.Sprintf("%d %s", res.StatusCode, b)
	}
	out := map[string]string{}
	for _, n := range body.Nodes {
		out[n.Name] = n.Status
	}
	return out, string(b)
}

// TestCluster: three nodes on loopback form one cluster; a killed node
// comes back on its data and rejoins.
func TestCluster(t *testing.T) {
	c := Start(t, 3)
	// /v1/nodes lags readiness while the nodes gossip, more so on a busy
	// machine (make test runs every package at once).
	healthy := func(i int, names ...string) {
		t.Helper()
		deadline := time.Now().Add(3 * time.Minute)
		for {
			got, raw := nodes(t, c.Nodes[i].URL())
			ok := len(got) >= len(names)
			for _, n := range names {
				ok = ok && got[n] == "HEALTHY"
			}
			if ok {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("nodes: %v (answer %.500s)", got, raw)
			}
			time.Sleep(250 * time.Millisecond)
		}
	}
	healthy(0, "node1", "node2", "node3")
	c.Kill(2)
	if err := WaitReady(c.Nodes[2].URL(), time.Second); err == nil {
		t.Fatal("a killed node answers")
	}
	c.Restart(2)
	healthy(2, "node3")
}

// TestMakefilePinsTheSameVersion: make test installs the release this
// package runs.
func TestMakefilePinsTheSameVersion(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "WEAVIATE_VERSION := "+Version+"\n") {
		t.Fatalf("the Makefile does not pin weaviate-server %s", Version)
	}
}
