package lint

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// surfaceLimit is the most exported names a package of the pipeline may
// have, counted as `go doc -short` lists them (a type, a function, or a
// group of constants or variables: one each).
const surfaceLimit = 30

// surfaceDebt lists the packages that exported more than surfaceLimit
// names when the limit came in, each with its count then: a ceiling, so
// they do not grow while they wait to be split as results was (into
// results, stats, figures, outdir, compare and report). results keeps the
// schema's 19 types and so a little more than the limit.
var surfaceDebt = map[string]int{
	"results": 33,
}

// TestExportedSurface fails for a package of the pipeline whose exported
// names outgrow surfaceLimit (or its ceiling in surfaceDebt), naming the
// count: split it along its jobs instead.
func TestExportedSurface(t *testing.T) {
	for pkg := range layers {
		if strings.HasPrefix(pkg, "internal/") || strings.HasPrefix(pkg, "scripts/") || strings.HasPrefix(pkg, "adapters/") || pkg == "cmd/lockbench" || pkg == "history/synth" {
			continue
		}
		n := exportedSurface(t, pkg)
		limit := surfaceLimit
		if d, ok := surfaceDebt[pkg]; ok {
			limit = d
		}
		if n > limit {
			t.Errorf("package %s exports %d names (go doc -short), more than %d: split it along its jobs (as results was) or unexport what only it uses", pkg, n, limit)
		}
	}
}

// exportedSurface counts the exported top-level names of the package in
// folder pkg as `go doc -short` lists them: each type and function, and
// each const or var declaration holding an exported name.
func exportedSurface(t *testing.T, pkg string) int {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("../..", pkg, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	n := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range af.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil && d.Name.IsExported() {
					n++
				}
			case *ast.GenDecl:
				exported := false
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() {
							n++
						}
					case *ast.ValueSpec:
						for _, name := range s.Names {
							exported = exported || name.IsExported()
						}
					}
				}
				if exported {
					n++
				}
			}
		}
	}
	return n
}
