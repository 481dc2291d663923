// Package archtest checks the layering the store seam promises (docs/store.md):
// what the store of record may import, and that consumers depend on their
// own small interfaces rather than the concrete store.
package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/sift-search/sift"

// deps lists what a package imports, directly or not (tests excluded).
func deps(t *testing.T, pkg string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", pkg).Output()
	if err != nil {
		t.Fatalf("go list %s: %v", pkg, err)
	}
	return strings.Fields(string(out))
}

// TestStoreImports: the store (engine and its packages) imports neither
// the semantic layer, the embedders, net/http, nor any of its consumers.
func TestStoreImports(t *testing.T) {
	forbidden := []string{module + "/semantic", module + "/embed", module + "/ann", "net/http",
		module + "/httpapi", module + "/crawl", module + "/ask", module + "/agent", module + "/llm"}
	for _, pkg := range []string{module + "/engine", module + "/index", module + "/storetest", module + "/record", module + "/query", module + "/analysis"} {
		for _, d := range deps(t, pkg) {
			if slices.Contains(forbidden, d) {
				t.Errorf("%s imports %s", pkg, d)
			}
		}
	}
}

// TestVocabularyImportsNoStore: record, query, analysis, follow,
// semantic/chunk, semantic/fusion and semantic/training, the vocabulary
// and rules every store shares, and transfer, which copies between
// stores, import no store, no HTTP and no page code.
func TestVocabularyImportsNoStore(t *testing.T) {
	forbidden := []string{module + "/engine", module + "/wvstore", module + "/httpapi", "net/http",
		"github.com/valyala/fasthttp", "html/template"}
	for _, pkg := range []string{module + "/record", module + "/query", module + "/index", module + "/analysis",
		module + "/follow", module + "/transfer", module + "/semantic/chunk", module + "/semantic/fusion",
		module + "/semantic/training"} {
		for _, d := range deps(t, pkg) {
			if slices.Contains(forbidden, d) || strings.HasPrefix(d, module+"/engine/") {
				t.Errorf("%s imports %s", pkg, d)
			}
		}
	}
}

// TestOnlyCommandsImportStores: only the commands that wire stores,
// cmd/sift and the evaluation bench/cmd/eval, import a concrete store,
// engine or wvstore; neither store imports the other. Tests may: go list's
// Imports leaves test files out.
func TestOnlyCommandsImportStores(t *testing.T) {
	stores := []string{module + "/engine", module + "/wvstore"}
	allowed := []string{module + "/cmd/sift", module + "/bench/cmd/eval"}
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || slices.Contains(allowed, f[0]) {
			continue
		}
		for _, imp := range f[1:] {
			if slices.Contains(stores, imp) && imp != f[0] {
				t.Errorf("%s imports the store %s; only cmd/sift and bench/cmd/eval may", f[0], imp)
			}
		}
	}
}

// TestStoresImportNeitherOther: neither store depends on the other, even
// indirectly, nor on the HTTP API.
func TestStoresImportNeitherOther(t *testing.T) {
	for pkg, other := range map[string]string{module + "/engine": module + "/wvstore", module + "/wvstore": module + "/engine"} {
		for _, d := range deps(t, pkg) {
			if d == other || strings.HasPrefix(d, other+"/") || d == module+"/httpapi" {
				t.Errorf("%s depends on %s", pkg, d)
			}
		}
	}
}

// TestConsumersNameNoStore: httpapi, crawl, ask and agent mention no
// concrete store or semantic type outside their tests; cmd/sift wires them.
func TestConsumersNameNoStore(t *testing.T) {
	concrete := regexp.MustCompile(`\bengine\.(Engine|Open)\b|\bsemantic\.(Index|Open|New)\b`)
	for _, dir := range []string{"httpapi", "crawl", "ask", "agent"} {
		files, _ := filepath.Glob(filepath.Join(root(t), dir, "*.go"))
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for i, line := range strings.Split(string(b), "\n") {
				if concrete.MatchString(line) && !strings.HasPrefix(strings.TrimSpace(line), "//") {
					t.Errorf("%s:%d names a concrete type: %s", f, i+1, strings.TrimSpace(line))
				}
			}
		}
	}
}

// TestPageURLsInOneFile: the page paths (/c/, /d/) are spelled in
// httpapi/urls.go only, among the non-test Go files.
func TestPageURLsInOneFile(t *testing.T) {
	fset := token.NewFileSet()
	var where []string
	filepath.WalkDir(root(t), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s := strings.Trim(lit.Value, "\"`"); strings.HasPrefix(s, "/c/") || strings.HasPrefix(s, "/d/") {
					rel, _ := filepath.Rel(root(t), path)
					where = append(where, rel)
				}
			}
			return true
		})
		return nil
	})
	slices.Sort(where)
	where = slices.Compact(where)
	if !slices.Equal(where, []string{filepath.Join("httpapi", "urls.go")}) {
		t.Errorf("page paths spelled in %v", where)
	}
}

func root(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}
