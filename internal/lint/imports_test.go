package lint

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/lockbench/lockbench/"

// imports returns the lockbench packages (relative to the module, e.g.
// "checker") that the Go files named by files import, test files left out.
func imports(t *testing.T, files []string) []string {
	t.Helper()
	fset := token.NewFileSet()
	var out []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, im := range af.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			if rel, ok := strings.CutPrefix(p, module); ok && !slices.Contains(out, rel) {
				out = append(out, rel)
			}
		}
	}
	return out
}

// packageImports returns the lockbench packages the package in the
// folder dir (relative to the repository root) imports directly.
func packageImports(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("../..", dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	return imports(t, files)
}

// reachable returns every lockbench package the given ones import,
// directly or not, with the chain that leads to each.
func reachable(t *testing.T, from []string) map[string]string {
	t.Helper()
	seen := map[string]string{}
	var visit func(pkg, via string)
	visit = func(pkg, via string) {
		if _, ok := seen[pkg]; ok {
			return
		}
		seen[pkg] = via
		for _, next := range packageImports(t, pkg) {
			visit(next, via+" → "+next)
		}
	}
	for _, p := range from {
		visit(p, p)
	}
	return seen
}

// TestJudgementImportsNoOrchestrator: validate, and the check command's
// file, reach no orchestrator (bench, perf) through any import:
// `lockbench check` runs history → checker → validate on a saved file.
// checker reaches neither validate nor results (it comes before them).
func TestJudgementImportsNoOrchestrator(t *testing.T) {
	if _, err := os.Stat("../../cmd/lockbench/check.go"); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name      string
		from      []string
		forbidden []string
	}{
		{"cmd/lockbench/check.go", imports(t, []string{"../../cmd/lockbench/check.go"}), []string{"bench", "perf"}},
		{"validate", []string{"validate"}, []string{"bench", "perf"}},
		{"checker", []string{"checker"}, []string{"bench", "perf", "validate", "results", "plots"}},
	} {
		deps := reachable(t, tt.from)
		for _, f := range tt.forbidden {
			if via, ok := deps[f]; ok {
				t.Errorf("%s reaches %s: %s", tt.name, f, via)
			}
		}
	}
}
