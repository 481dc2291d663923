package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// maxMethods bounds the methods declared on one type: a type with more
// serves more than one purpose (split it by role, as httpapi's rooms and
// the stores' roles are).
const maxMethods = 40

// TestNoTypeHasTooManyMethods counts the methods declared on each type of
// each package of the module, tests aside.
func TestNoTypeHasTooManyMethods(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{} // "dir.Type" -> methods
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Recv == nil || len(fd.Recv.List) == 0 {
				continue
			}
			if name := receiverType(fd.Recv.List[0].Type); name != "" {
				counts[rel+"."+name]++
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(counts) < 50 {
		t.Fatalf("found methods on only %d types: the walk missed the module", len(counts))
	}
	for typ, n := range counts {
		if n > maxMethods {
			t.Errorf("%s has %d methods (at most %d)", typ, n, maxMethods)
		}
	}
}

// receiverType is the name of a receiver's type: T, *T, T[P] or *T[P].
func receiverType(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}
