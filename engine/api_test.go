package engine_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const enginePath = "github.com/rpcdash/rpcdash/engine"

// The engine's API is deliberate (doc.go names it): every exported name
// is used by another package (main, ui, probes, bench, their tests, e2e),
// or is part of the API of a name that is (the type of an exported field,
// parameter or result; a constant of an enumeration another package uses).
// A name nothing outside uses is unexported, moved to engine/internal or
// deleted; this test names it.
func TestAPI_EveryExportedNameIsUsedOutsideTheEngine(t *testing.T) {
	api := parseAPI(t, ".")
	if len(api.decls) == 0 {
		t.Fatal("no exported names found: the test reads the wrong directory")
	}
	used := usesOutside(t, "..")
	reached := map[string]bool{}
	var visit func(name string)
	visit = func(name string) {
		if reached[name] || api.decls[name] == nil {
			return
		}
		reached[name] = true
		for _, n := range api.decls[name] {
			for _, ref := range api.refs(n) {
				visit(ref)
			}
		}
		for _, sibling := range api.group[name] {
			visit(sibling)
		}
	}
	for name := range used {
		visit(name)
	}
	var unused []string
	for name := range api.decls {
		if !reached[name] {
			unused = append(unused, name)
		}
	}
	sort.Strings(unused)
	for _, name := range unused {
		t.Errorf("engine.%s is exported but used by no other package: unexport it, move it to engine/internal, or delete it", name)
	}
	t.Logf("%d exported names, %d used outside directly", len(api.decls), len(used))
}

// api is the engine's exported package-level names, each with the nodes
// that say what it exposes (its type or signature, and its exported
// methods' signatures), and the constants declared together with it.
type api struct {
	decls map[string][]ast.Node
	group map[string][]string
}

func parseAPI(t *testing.T, dir string) api {
	t.Helper()
	a := api{decls: map[string][]ast.Node{}, group: map[string][]string{}}
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	methods := map[string][]ast.Node{}
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				switch {
				case !d.Name.IsExported():
				case d.Recv == nil:
					a.decls[d.Name.Name] = append(a.decls[d.Name.Name], d.Type)
				default:
					if recv := receiverName(d.Recv.List[0].Type); recv != "" {
						methods[recv] = append(methods[recv], d.Type)
					}
				}
			case *ast.GenDecl:
				var block []string
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() {
							a.decls[s.Name.Name] = append(a.decls[s.Name.Name], exposed(s.Type))
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() {
								a.decls[n.Name] = append(a.decls[n.Name], s)
								block = append(block, n.Name)
							}
						}
					}
				}
				if d.Tok == token.CONST {
					for _, n := range block {
						a.group[n] = block
					}
				}
			}
		}
	}
	for recv, ms := range methods {
		if _, ok := a.decls[recv]; ok {
			a.decls[recv] = append(a.decls[recv], ms...)
		}
	}
	return a
}

// exposed is what a type declaration shows other packages: a struct's
// exported fields, an interface's methods, any other type whole.
func exposed(t ast.Expr) ast.Node {
	st, ok := t.(*ast.StructType)
	if !ok {
		return t
	}
	var shown []ast.Node
	for _, f := range st.Fields.List {
		if len(f.Names) == 0 || f.Names[0].IsExported() {
			shown = append(shown, f.Type)
		}
	}
	return &ast.BlockStmt{List: wrap(shown)}
}

func wrap(nodes []ast.Node) []ast.Stmt {
	out := make([]ast.Stmt, len(nodes))
	for i, n := range nodes {
		out[i] = &ast.ExprStmt{X: n.(ast.Expr)}
	}
	return out
}

func receiverName(t ast.Expr) string {
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	if id, ok := t.(*ast.Ident); ok && id.IsExported() {
		return id.Name
	}
	return ""
}

// refs are the engine's exported names a node mentions.
func (a api) refs(n ast.Node) []string {
	var out []string
	ast.Inspect(n, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			return false // another package's name
		case *ast.Ident:
			if _, ok := a.decls[n.Name]; ok {
				out = append(out, n.Name)
			}
		}
		return true
	})
	return out
}

// usesOutside walks the repository from root, every Go file outside the
// engine's own tree (tests included, e2e included), and returns the names
// X of every engine.X it mentions.
func usesOutside(t *testing.T, root string) map[string]bool {
	t.Helper()
	engineDir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	files := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			abs, _ := filepath.Abs(path)
			if abs == engineDir || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") && path != root {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if !strings.Contains(string(src), strconv.Quote(enginePath)) {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, src, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		files++
		name := ""
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p == enginePath {
				name = "engine"
				if imp.Name != nil {
					name = imp.Name.Name
				}
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if id, ok := sel.X.(*ast.Ident); ok && id.Name == name {
					used[sel.Sel.Name] = true
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files == 0 {
		t.Fatal("no file outside the engine imports it: the test walks the wrong tree")
	}
	return used
}
