package weaviatetest

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// nodes returns the names and statuses /v1/nodes reports.
func nodes(t *testing.T, url string) map[string]string {
	t.Helper()
	res, err := http.Get(url + "/v1/nodes")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var body struct {
		Nodes []struct{ Name, Status string }
	}
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, n := range body.Nodes {
		out[n.Name] = n.Status
	}
	return out
}

// TestCluster: three nodes on loopback form one cluster; a killed node
// comes back on its data and rejoins.
func TestCluster(t *testing.T) {
	c := Start(t, 3)
	want := map[string]string{"node1": "HEALTHY", "node2": "HEALTHY", "node3": "HEALTHY"}
	deadline := time.Now().Add(time.Minute)
	for {
		got := nodes(t, c.Nodes[0].URL())
		if len(got) == 3 && got["node1"] == want["node1"] && got["node2"] == want["node2"] && got["node3"] == want["node3"] {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("nodes: %v", got)
		}
		time.Sleep(200 * time.Millisecond)
	}
	c.Kill(2)
	if err := WaitReady(c.Nodes[2].URL(), time.Second); err == nil {
		t.Fatal("a killed node answers")
	}
	c.Restart(2)
	deadline = time.Now().Add(time.Minute)
	for nodes(t, c.Nodes[2].URL())["node3"] != "HEALTHY" {
		if time.Now().After(deadline) {
			t.Fatalf("node3 did not rejoin: %v", nodes(t, c.Nodes[2].URL()))
		}
		time.Sleep(200 * time.Millisecond)
	}
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
