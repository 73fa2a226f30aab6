package lint

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// layers places every lockbench package on a layer of the pipeline
// scenario (chaos) → cluster → workload → history → checker → validate →
// results → plots → report, with the orchestrators (bench, perf), the hunt
// and the command above them. A package may import only packages on a
// lower layer: every import arrow points down, so no stage reaches back
// into one that uses it, and none reaches the orchestrators.
//
// The layers are the flow's stages ordered by what each one needs:
//   - the history format and the servers (cluster) are what every stage
//     shares, at the bottom, with the internal helpers (internal/proc
//     reads a process's state from /proc); below cluster sit the pieces
//     it runs its servers with, each needing nothing of it: security (AUTH
//     and TLS, which the strategies and adapters use too), clockshim (the
//     LD_PRELOAD clock shim and its offset file, which exec: strategies
//     preload into adapters too), proxy (the TCP proxy the fault scenarios
//     put on links) and dockerd (the Docker daemon: the images, the labels,
//     the sweep of leftovers); preflight (the checks of the backend and of
//     external servers before a run, the server clock measurement, the
//     deletion of an external run's keys) checks cluster's options and
//     topologies, so it sits just above it, beside impl;
//   - impl (the lock API: Strategy, Locker, Lease, Config, errors) is
//     what the workload drives; impl/adapterclient implements it for any
//     lock run as an adapter process (exec:); impl/strategies, the
//     built-in strategies and their registry, sits above both, its Lookup
//     handing exec: names to the adapter client; beside impl,
//     resource (the protected resource the critical sections act on) and
//     commandstats (the servers' command counts from INFO, which the
//     workload's dialer hook mirrors client-side), which need only the
//     servers;
//   - chaos is five packages, each importing only those below it:
//     chaos/keystate reads a lock key on a node (cluster only, so beside
//     impl); chaos/fault/link is the per-link proxies and the faults
//     played on them (beside impl/adapterclient, which it does not
//     import); chaos/fault is the Fault interface and the other
//     primitives (a crash or a pause strikes a workload event, so above
//     the workload, beside observer);
//     chaos/schedule is fault schedules as data (steps, primitives),
//     beside checker; chaos, the scenarios that place faults at lock
//     events, their registry and the player of a schedule, is on top
//     (beside results, which it does not import), as a schedule's
//     expectations come from the scenarios that exercise its primitives;
//     observer (the reads of the lock keys during a run) sits above the
//     workload whose dialer and recorder it uses and whose clients ask it
//     for reads;
//   - measure (history/measure) measures a history and judges nothing
//     (holds, grants, fault windows, outcomes, evidence): it needs only
//     the history format, so it sits just above it, and every stage that
//     draws figures from a history may use it; the checks' witnesses
//     (checker/witness: the violations as data, with their times printed
//     through measure) sit one layer higher;
//   - checker reads histories and judges them on measure's holds,
//     returning witnesses; the cross-host check (checker/crosshost) uses
//     checker's statuses, so it sits above it, beside results; stats is
//     the statistics (no lockbench import); results is the schema of
//     checked runs and its files;
//     figures cuts a run's cost samples and computes the cost table from
//     that schema, outdir guards the output folder; verdicts is the
//     verdict table (what each strategy × scenario pair must show: it
//     knows scenarios, strategies, the workload's settings and the
//     checker's options, and no results), above chaos, beside figures;
//     validate judges a checked history into a results.Run against that
//     table; plots draws results;
//   - compare (two results files side by side), then report (report.md,
//     details.md, index.html, and the plots it draws for them from a
//     results file and its histories; it names compare's gate), read
//     everything below;
//   - shard (the part of a bench a runner runs, --shard I/N) is a value
//     with no lockbench import but its errors, at the bottom; merge
//     (writing a sharded bench's parts back into one folder, with its
//     plots and report) sits beside the orchestrators, above report;
//   - diff (the upgrade check: two locks under the same schedules) and
//     hunt (the search for surprises over fault schedules) run cells
//     through bench, so they sit between the orchestrators and the
//     command; so does sweeptable (the verdicts-sweep table of
//     docs/verdicts.md), which reads the results of bench's
//     verdicts-sweep profile at that profile's scales.
var layers = map[string]int{
	"internal/errs":       0,
	"internal/noise":      0,
	"internal/adapter":    0,
	"internal/redislog":   0,
	"internal/leakcheck":  0,
	"internal/atomicfile": 0,
	"internal/proc":       0,
	"history":             1,
	"shard":               2,
	"cluster/security":    1,
	"cluster/clockshim":   1,
	"cluster/proxy":       1,
	"cluster/dockerd":     1,
	"cluster":             2,
	"cluster/preflight":   3,
	"impl":                3,
	"impl/adapterclient":  4,
	"impl/strategies":     5,
	"resource":            3,
	"commandstats":        3,
	"history/measure":     3,
	"workload":            6,
	"checker/witness":     6,
	"chaos/keystate":      3,
	"chaos/fault/link":    4,
	"chaos/fault":         7,
	"chaos/schedule":      8,
	"chaos":               9,
	"observer":            7,
	"checker":             8,
	"checker/crosshost":   9,
	"stats":               8,
	"results":             9,
	"verdicts":            10,
	"figures":             10,
	"outdir":              10,
	"validate":            11,
	"plots":               12,
	"compare":             13,
	"report":              14,
	"bench":               15,
	"perf":                15,
	"merge":               15,
	"diff":                16,
	"hunt":                16,
	"locktest":            16,
	"sweeptable":          16,
	"cmd/lockbench":       17,
	// Programs and tests beside the pipeline.
	"adapters/go":          17,
	"adapters/redis-py":    17,
	"scripts/dockerimage":  17,
	"scripts/verdictsweep": 17,
	"scripts/costagree":    17,
	"internal/lint":        17,
	"internal/resultstest": 17,
	"internal/clustertest": 17,
	"mutants":              17,
	// Seeded synthetic histories (benchmarks, lockbench perf).
	"history/synth": 3,
}

// goListImports returns, for every package of the module, the lockbench
// packages it imports (test files left out), as `go list` reports them,
// relative to the module.
func goListImports(t *testing.T) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		pkg := strings.TrimPrefix(f[0], module)
		deps[pkg] = nil
		for _, im := range f[1:] {
			if rel, ok := strings.CutPrefix(im, module); ok {
				deps[pkg] = append(deps[pkg], rel)
			}
		}
	}
	return deps
}

// TestImportsPointDown fails for every import of a lockbench package that
// does not point to a lower layer (see layers), naming it, and for every
// package the layers do not place.
func TestImportsPointDown(t *testing.T) {
	deps := goListImports(t)
	for _, p := range sortedKeys(deps) {
		from, ok := layers[p]
		if !ok {
			t.Errorf("package %s has no layer: place it in internal/lint's layers (scenario → cluster → workload → history → checker → validate → results → plots; bench, perf and cmd on top)", p)
			continue
		}
		for _, im := range deps[p] {
			to, ok := layers[im]
			if ok && to < from {
				continue
			}
			t.Errorf("%s imports %s: %s", p, im, upward(p, im, from, to, ok))
		}
	}
}

// upward says why an import breaks the layering.
func upward(p, im string, from, to int, known bool) string {
	switch {
	case !known:
		return im + " has no layer"
	case to == from:
		return fmt.Sprintf("both are on layer %d; a stage imports only the stages below it", from)
	}
	return fmt.Sprintf("an arrow pointing up (layer %d → %d): move what %s needs from %s down, or the code that needs it up", from, to, p, im)
}

// TestLayersListOnlyPackages fails for a layer entry that names no package
// any more (a moved or deleted package).
func TestLayersListOnlyPackages(t *testing.T) {
	deps := goListImports(t)
	for p := range layers {
		if _, ok := deps[p]; !ok {
			t.Errorf("internal/lint's layers name %s, which is not a package of the module", p)
		}
	}
}

func sortedKeys(m map[string][]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestChaosIgnoresStrategyNames: no scenario branches on a strategy's
// name (a comparison or switch on chaos.Env.Strategy or a Name() call):
// a strategy declares what scenarios need in impl.Info (its claims, node
// count, server, crash point), so adding one touches no scenario.
func TestChaosIgnoresStrategyNames(t *testing.T) {
	var files []string
	for _, pattern := range []string{"../../chaos/*.go", "../../chaos/*/*.go", "../../chaos/*/*/*.go"} {
		f, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f...)
	}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(af, func(n ast.Node) bool {
			var operands []ast.Expr
			switch n := n.(type) {
			case *ast.BinaryExpr:
				if n.Op == token.EQL || n.Op == token.NEQ {
					operands = []ast.Expr{n.X, n.Y}
				}
			case *ast.SwitchStmt:
				operands = []ast.Expr{n.Tag}
			}
			for _, x := range operands {
				if namesStrategy(x) {
					t.Errorf("%s: chaos branches on a strategy's name: decide from impl.Info instead", fset.Position(x.Pos()))
				}
			}
			return true
		})
	}
}

// namesStrategy reports whether x is a strategy's name: a field or
// variable called Strategy, or a call of a Name method.
func namesStrategy(x ast.Expr) bool {
	switch x := x.(type) {
	case *ast.SelectorExpr:
		return x.Sel.Name == "Strategy"
	case *ast.Ident:
		return x.Name == "strategy"
	case *ast.CallExpr:
		s, ok := x.Fun.(*ast.SelectorExpr)
		return ok && s.Sel.Name == "Name" && len(x.Args) == 0
	}
	return false
}
