package bench

import (
	"testing"
	"time"

	"github.com/lockbench/lockbench/chaos"
	"github.com/lockbench/lockbench/cluster"
	"github.com/lockbench/lockbench/impl/strategies"
	"github.com/lockbench/lockbench/workload"
)

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
		for _, st := range strategies.All() {
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
