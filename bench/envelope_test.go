package bench

import (
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/strategies"
	"github.com/lockbench/lockbench/workload"
)

// TestEnvelopeTTL checks which strategies a profile runs at a longer TTL:
// those whose call budget at the profile's TTL is below MinCallBudget,
// at the first doubling where it fits, with their critical section kept.
func TestEnvelopeTTL(t *testing.T) {
	tests := []struct {
		strategy string
		ttl      time.Duration
		want     time.Duration
	}{
		{"token-lua", 100 * time.Millisecond, 100 * time.Millisecond}, // no budget declared
		{"redlock", 100 * time.Millisecond, 100 * time.Millisecond},   // TTL/10 = 10 ms
		{"redsync", 100 * time.Millisecond, 200 * time.Millisecond},   // 0.05×TTL = 5 ms
		{"redsync-single", 50 * time.Millisecond, 200 * time.Millisecond},
		{"redsync", 2 * time.Second, 2 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.strategy+"@"+tt.ttl.String(), func(t *testing.T) {
			st, err := strategies.Lookup(tt.strategy)
			if err != nil {
				t.Fatal(err)
			}
			got, why := envelopeTTL(st, tt.ttl)
			if got != tt.want {
				t.Errorf("TTL %v, want %v (%s)", got, tt.want, why)
			}
			if (why != "") != (got != tt.ttl) || (why != "" && !strings.Contains(why, "call budget")) {
				t.Errorf("reason %q for TTL %v at profile TTL %v", why, got, tt.ttl)
			}
			w := envelopeWorkload(st, workload.Config{TTL: tt.ttl})
			if w.TTL != tt.want {
				t.Errorf("workload TTL %v, want %v", w.TTL, tt.want)
			}
			if got != tt.ttl && (w.CS.Kind != workload.CSFixed || w.CS.Min != tt.ttl/20) {
				t.Errorf("critical section %v, want fixed %v (the profile's)", w.CS, tt.ttl/20)
			}
		})
	}
}

// TestCellsRunBudgetedStrategiesInTheirEnvelope checks that the ci
// profile plans redsync's cells at the longer TTL, the consensus locks'
// cost cells at their servers' TTL floor, and the others at the profile's.
func TestCellsRunBudgetedStrategiesInTheirEnvelope(t *testing.T) {
	p, err := LookupProfile("ci")
	if err != nil {
		t.Fatal(err)
	}
	specs, _, err := cells(p, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range specs {
		want := p.Workload.TTL
		if strings.HasPrefix(s.Strategy, "redsync") {
			want = 2 * p.Workload.TTL
		}
		if st, _ := strategies.Lookup(s.Strategy); st.Info().Server != impl.ServerRedis && s.Scenario == CostScenario {
			want = ConsensusMinTTL // a cost cell at the servers' floor, its critical section kept
		}
		if s.Workload.TTL != want {
			t.Errorf("%s/%s planned at TTL %v, want %v", s.Strategy, s.Scenario, s.Workload.TTL, want)
		}
	}
}

// TestCostCellsLikeForLike checks that the ci profile's cost cells
// (CostScenario) run every family with the profile's critical section and
// think time, the consensus locks at their TTL floor, while their safety
// cells keep the TTL-scaled default (TTL/20 of the TTL they run at).
func TestCostCellsLikeForLike(t *testing.T) {
	p, err := LookupProfile("ci")
	if err != nil {
		t.Fatal(err)
	}
	specs, _, err := cells(p, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		strategy, scenario string
		wantCS             time.Duration // critical section of the resolved run
	}{
		{"token-lua", CostScenario, 5 * time.Millisecond},
		{"redsync", CostScenario, 5 * time.Millisecond}, // at its envelope TTL
		{"etcd-mutex", CostScenario, 5 * time.Millisecond},
		{"zk-lock", CostScenario, 5 * time.Millisecond},
		{"etcd-mutex", "gc-pause", ConsensusMinTTL / 20}, // a safety cell: TTL-scaled
	}
	for _, tt := range tests {
		t.Run(tt.strategy+"/"+tt.scenario, func(t *testing.T) {
			for _, s := range specs {
				if s.Strategy != tt.strategy || s.Scenario != tt.scenario {
					continue
				}
				_, _, _, w, err := s.Resolved()
				if err != nil {
					t.Fatal(err)
				}
				if w.CS.Kind != workload.CSFixed || w.CS.Min != tt.wantCS || w.Think != p.Workload.Think {
					t.Errorf("critical section %v, think %v at TTL %v; want fixed(%v), think %v", w.CS, w.Think, w.TTL, tt.wantCS, p.Workload.Think)
				}
				adj, _ := s.Adjustments()
				for _, a := range adj {
					if tt.scenario == CostScenario && (a.Flag == "--ttl" || a.Flag == "--cs" || a.Flag == "--think") {
						t.Errorf("a cost cell's run changes its timing: %v", a)
					}
				}
				return
			}
			t.Fatalf("no cell %s/%s in the ci profile", tt.strategy, tt.scenario)
		})
	}
}

// TestCostProfileLikeForLike checks the must-show table's premise: in the
// cost profile (and the ci and full profiles), every run behind the cost
// table (the baseline cells, whose handoff it shows, and the uncontended
// cost runs at every client count) resolves to the same critical section
// and think time for every strategy, whatever TTL its servers or call
// budget need: no cell compares a 5 ms critical section with a 50 ms one.
func TestCostProfileLikeForLike(t *testing.T) {
	for _, name := range []string{"cost", "ci", "full"} {
		t.Run(name, func(t *testing.T) {
			p, err := LookupProfile(name)
			if err != nil {
				t.Fatal(err)
			}
			specs, _, err := cells(p, 1, 1)
			if err != nil {
				t.Fatal(err)
			}
			cost, err := costCells(p, 1)
			if err != nil {
				t.Fatal(err)
			}
			type timing struct {
				cs    workload.CSDist
				think time.Duration
			}
			var first *timing
			strategies := map[string]bool{}
			for _, s := range append(specs, cost...) {
				if s.Scenario != CostScenario {
					continue
				}
				_, _, _, w, err := s.Resolved()
				if err != nil {
					t.Fatalf("%s/%s: %v", s.Strategy, s.Scenario, err)
				}
				got := timing{w.CS, w.Think}
				if first == nil {
					first = &got
				}
				if got != *first {
					t.Errorf("%s/%s at %d clients, TTL %v: critical section %v, think %v; the first cost cell ran %v, think %v",
						s.Strategy, s.Scenario, w.Clients, w.TTL, w.CS, w.Think, first.cs, first.think)
				}
				strategies[s.Strategy] = true
			}
			if first == nil {
				t.Fatal("no cost cell planned")
			}
			if first.cs.Kind != workload.CSFixed || first.cs.Min <= 0 {
				t.Errorf("cost cells' critical section %v, want a fixed one (the capacity bound needs its length)", first.cs)
			}
			if name == "cost" {
				for _, st := range costProfileStrategies() {
					if !strategies[st] {
						t.Errorf("the cost profile plans no cost cell for %s", st)
					}
				}
			}
		})
	}
}
