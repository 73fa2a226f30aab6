package verdicts

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/chaos"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/strategies"
	"github.com/lockbench/lockbench/resource"
	"github.com/lockbench/lockbench/workload"
)

var update = flag.Bool("update", false, "rewrite testdata/matrix.golden.md and the matrix in docs/verdicts.md from MatrixMarkdown")

// TestMatrixGolden pins the whole verdict matrix (every expectation and
// reason, and the pairs that do not apply) to testdata/matrix.golden.md: a
// verdict changes only with a deliberate update of the file
// (go test ./verdicts -run TestMatrixGolden -update), which a reviewer sees
// in the diff.
func TestMatrixGolden(t *testing.T) {
	const golden = "testdata/matrix.golden.md"
	got := MatrixMarkdown()
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got == string(want) {
		return
	}
	gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
	for i := 0; i < max(len(gl), len(wl)); i++ {
		g, w := "", ""
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if g != w {
			t.Errorf("line %d differs from %s:\n got: %s\nwant: %s", i+1, golden, g, w)
		}
	}
}

// TestVerdictTableComplete: every (strategy, scenario) pair of the
// registries (strategies.All × chaos.All) whose scenario applies to the strategy
// has exactly one row; every row names a registered strategy and scenario
// and a pair that applies; every strategy's rows live in one family file.
func TestVerdictTableComplete(t *testing.T) {
	for _, p := range tableProblems(strategies.All(), chaos.All(), families()) {
		t.Error(p)
	}
}

// tableProblems is TestVerdictTableComplete's check of the verdict-table
// families fams against the strategies and scenarios registered: one line
// per problem, naming the strategy, the scenario and the fix.
func tableProblems(all []impl.Strategy, scs []chaos.Scenario, fams []map[string][]row) []string {
	var out []string
	errorf := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	strategies := map[string]impl.Info{}
	for _, st := range all {
		strategies[st.Name()] = st.Info()
	}
	scenarios := map[string]chaos.Scenario{}
	for _, sc := range scs {
		scenarios[sc.Name] = sc
	}
	family := map[string]int{}
	rows := map[string]map[string]bool{}
	for i, fam := range fams {
		for st, frows := range fam {
			if j, ok := family[st]; ok {
				errorf("strategy %s has rows in two families (%d and %d): keep a strategy's rows in one file", st, j, i)
			}
			family[st] = i
			info, known := strategies[st]
			if !known {
				errorf("rows for %s, which strategies.All does not register", st)
				continue
			}
			seen := map[string]bool{}
			rows[st] = seen
			for _, r := range frows {
				sc, ok := scenarios[r.scenario]
				switch {
				case !ok:
					errorf("%s: a row for scenario %s, which chaos.All does not list", st, r.scenario)
					continue
				case seen[r.scenario]:
					errorf("%s: two rows for scenario %s", st, r.scenario)
				}
				seen[r.scenario] = true
				if applies, why := sc.AppliesTo(info); !applies {
					errorf("%s: a row for %s, which does not apply to it (%s): remove the row", st, r.scenario, why)
				}
				if r.exp.Reason == "" {
					errorf("%s/%s: a row without a reason", st, r.scenario)
				}
				for _, e := range []Expect{r.exp.Exclusion, r.exp.Resource, r.exp.Liveness} {
					if e != Hold && e != Break && e != AtRisk {
						errorf("%s/%s: expectation %q (want hold, break or at-risk)", st, r.scenario, e)
					}
				}
				if f := r.exp.Fencing; f != "" && f != Hold && f != Break && f != AtRisk {
					errorf("%s/%s: fencing expectation %q", st, r.scenario, f)
				}
				if d := r.exp.DuringFaults; d != "" && d != Granting && d != NotGranting {
					errorf("%s/%s: during-faults expectation %q", st, r.scenario, d)
				}
			}
		}
	}
	for _, st := range all {
		for _, sc := range scs {
			applies, _ := sc.AppliesTo(st.Info())
			if applies && !rows[st.Name()][sc.Name] {
				errorf("%s/%s applies but has no verdict row: add one to the strategy's verdicts_*.go file", st.Name(), sc.Name)
			}
		}
	}
	return out
}

// TestFor: a row is returned as it is; a run that left the strategy's
// defaults is at risk with the reason; a pair without a row (an unknown
// strategy) is at risk and says so.
func TestFor(t *testing.T) {
	if got := For("token-lua", "gc-pause", ""); got.Exclusion != Break || got.Summary() != "must-break" {
		t.Errorf("token-lua/gc-pause: %+v", got)
	}
	if got := For("fenced", "gc-pause", ""); got.Resource != Hold || got.Exclusion != Break {
		t.Errorf("fenced/gc-pause: %+v", got)
	}
	if _, ok := Expected("no-such", "baseline"); ok {
		t.Error("Expected(no-such, baseline): ok, want no row")
	}
	if e := For("exec:my-lock", "baseline", ""); e.Summary() != "at-risk" || !strings.HasPrefix(e.Reason, "no verdict rows for this strategy and its claims are unknown") {
		t.Errorf("adapter that cannot start: %+v, want at-risk saying it has no verdict rows and no known claims", e)
	}
	if e := For("no-such-strategy", "baseline", ""); e.Summary() != "at-risk" || e.Reason != "no verdict rows for this strategy: every check is reported, none is gated" {
		t.Errorf("strategy without rows: %+v, want at-risk saying it has no verdict rows", e)
	}
	if e := For("token-lua", "no-such", ""); e.Summary() != "at-risk" || !strings.Contains(e.Reason, "no expectation recorded for token-lua under no-such") {
		t.Errorf("pair without a row: %+v, want at-risk saying no expectation is recorded", e)
	}
	e := For("token-lua", "gc-pause", "custom usage policy (--policy)")
	if e.Summary() != "at-risk" || e.Fencing != AtRisk || !strings.HasPrefix(e.Reason, "custom usage policy (--policy): ") {
		t.Errorf("not gated: %+v", e)
	}
}

// TestNotGated: the strategy's own defaults are gated; a custom policy, a
// fencing mode, a library setting and one client each name themselves.
func TestNotGated(t *testing.T) {
	lookup := func(name string) impl.Strategy {
		st, err := strategies.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	tuned := func(name string, set map[string]string) impl.Strategy {
		st, err := strategies.Tune(lookup(name), set, 100*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	base := func(st impl.Strategy) workload.Config {
		w := workload.Config{Clients: 8, TTL: 100 * 1e6, Policy: st.Info().Policy, Fencing: resource.FencingOff}
		if st.Info().Claims.Fencing {
			w.Fencing = resource.FencingWrites
		}
		return w
	}
	for _, tt := range []struct {
		name     string
		st       impl.Strategy
		scenario string
		change   func(*workload.Config)
		want     string // "" gated, else a part of the reason
	}{
		{"defaults", lookup("token-lua"), "gc-pause", nil, ""},
		{"fenced defaults", lookup("fenced"), "gc-pause", nil, ""},
		{"policy", lookup("token-lua"), "gc-pause", func(w *workload.Config) { w.Policy.CheckValidity = true }, "custom usage policy (--policy)"},
		{"fencing", lookup("token-lua"), "gc-pause", func(w *workload.Config) { w.Fencing = resource.FencingAll }, "fencing all instead of off (--fencing)"},
		{"library", tuned("redsync", map[string]string{"redsync-tries": "3"}), "baseline", nil, "library settings changed (--redsync-tries 3)"},
		{"one client", lookup("token-lua"), "gc-pause", func(w *workload.Config) { w.Clients = 1 }, "1 client (--clients 1) cannot overlap itself"},
	} {
		w := base(tt.st)
		if tt.change != nil {
			tt.change(&w)
		}
		got := NotGated(tt.st, tt.scenario, w)
		if (got == "") != (tt.want == "") || !strings.Contains(got, tt.want) {
			t.Errorf("%s: NotGated = %q, want %q", tt.name, got, tt.want)
		}
	}
}
