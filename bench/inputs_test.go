package bench

import (
	"testing"
	"time"

	"github.com/lockbench/lockbench/chaos"
	"github.com/lockbench/lockbench/cluster"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/workload"
)

// TestVerdictLineSingular: one run is "1 run".
func TestVerdictLineSingular(t *testing.T) {
	o := Outcome{Runs: 1, AsExpected: 1, Paths: OutcomePaths{Markdown: "out/report.md", HTML: "out/index.html"}}
	if got, want := o.VerdictLine(), "1 run, 1 as expected, 0 unexpected; report: out/report.md (also index.html)"; got != want {
		t.Errorf("VerdictLine = %q, want %q", got, want)
	}
}

// TestDefaultWorkloadsResolve: every pair of every profile, and every pair
// under run's default flags (TTL 100 ms, 2 s, and its shortest sensible
// duration), resolves: the workload checks (a critical section no longer
// than the duration, ...) refuse none of them, including the scenarios
// that fix their own TTL or duration.
func TestDefaultWorkloadsResolve(t *testing.T) {
	var bases []workload.Config
	for _, p := range Profiles() {
		bases = append(bases, p.Workload)
	}
	for _, d := range []time.Duration{2 * time.Second, 100 * time.Millisecond} {
		bases = append(bases, workload.Config{Clients: 16, Keys: 1, TTL: 100 * time.Millisecond, Duration: d, Reentrancy: 1, OpTimeout: 500 * time.Millisecond})
	}
	for _, w := range bases {
		for _, st := range impl.All() {
			for _, sc := range chaos.All() {
				if ok, _ := sc.AppliesTo(st.Info()); !ok {
					continue
				}
				s := Spec{Strategy: st.Name(), Scenario: sc.Name, Seed: 1, Workload: w, Cluster: cluster.Options{Backend: cluster.BackendProcess}}
				if _, _, _, _, err := s.Resolved(); err != nil {
					t.Errorf("%s/%s, duration %v: %v", st.Name(), sc.Name, w.Duration, err)
				}
			}
		}
	}
}
