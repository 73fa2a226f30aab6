package bench

import (
	"fmt"
	"time"

	"github.com/lockbench/lockbench/chaos"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/strategies"
	"github.com/lockbench/lockbench/workload"
)

// MinCallBudget is the smallest call budget a profile runs a strategy
// with: a strategy whose budget at the profile's TTL is below it (redsync:
// 0.05×TTL, 5 ms at 100 ms) runs at the smallest doubling of that TTL
// where the budget reaches it. 10 ms is twice the loopback round-trip p99
// that a busy 2-core machine shows (docs/performance.md); below it calls
// time out for lack of time, and the run measures the budget, not the
// lock.
const MinCallBudget = 10 * time.Millisecond

// maxTTLDoublings bounds the search for a TTL where a budget fits: a
// strategy whose budget does not reach MinCallBudget within 2^4 = 16× the
// profile's TTL keeps that TTL, and its runs are labelled by their
// envelope as every run is (results.Envelope).
const maxTTLDoublings = 4

// envelopeTTL returns the TTL at which a profile runs st, given the
// profile's TTL ttl, and the reason when it differs ("" when it does not):
// ttl itself unless st declares a call budget (strategies.Budgeted) below
// MinCallBudget at ttl.
func envelopeTTL(st impl.Strategy, ttl time.Duration) (time.Duration, string) {
	b, ok := strategies.BudgetOf(st, ttl)
	if !ok || b.Time >= MinCallBudget || ttl <= 0 {
		return ttl, ""
	}
	for t, i := 2*ttl, 0; i < maxTTLDoublings; t, i = 2*t, i+1 {
		if nb, _ := strategies.BudgetOf(st, t); nb.Time >= MinCallBudget {
			return t, fmt.Sprintf("its call budget (%s, %s) is %v at the profile's TTL %v, below the %v a busy machine's round trips need; at TTL %v it is %v",
				b.Rule, b.Scope, b.Time, ttl, MinCallBudget, t, nb.Time)
		}
	}
	return ttl, ""
}

// envelopeWorkload returns the workload a profile runs st with: w, at
// envelopeTTL's TTL when that differs, with the critical section kept at
// the profile's (w's default TTL/20, made explicit) so that the cost
// figures compare with the other strategies'.
func envelopeWorkload(st impl.Strategy, w workload.Config) workload.Config {
	ttl, why := envelopeTTL(st, w.TTL)
	if why == "" {
		return w
	}
	if w.CS.Kind == "" && w.CS.Min == 0 {
		w.CS = workload.CSDist{Kind: workload.CSFixed, Min: w.TTL / 20}
	}
	w.TTL = ttl
	return w
}

// CostScenario is the scenario of the cost cells: the runs without faults
// whose figures the report compares across strategies (throughput,
// latency, handoff), and whose critical section and think time are the
// same for every family whatever the TTL (costWorkload).
const CostScenario = "baseline"

// costWorkload returns the workload of st's cost cells, given w (the
// profile's workload at st's envelope TTL): w, except for a lock whose
// servers need a longer TTL (locks on etcd and ZooKeeper: ConsensusMinTTL
// and the server's own TTL), which runs at that TTL here already, with
// the critical section made explicit at w's (the default, TTL/20 of the
// profile's TTL) and the think time kept: like for like across families.
// Without it the run would raise the TTL and scale the critical section
// with it (a consensus lock's 50 ms against Redis's 5 ms), and the cost
// figures would compare critical sections, not locks. Safety cells keep
// their TTL-scaled timing.
func costWorkload(st impl.Strategy, w workload.Config) workload.Config {
	ttl, why := runTTL(st, CostScenario, chaos.Setup{}, w.TTL)
	if why == "" || ttl <= w.TTL {
		return w
	}
	if w.CS.Kind == "" && w.CS.Min == 0 {
		w.CS = workload.CSDist{Kind: workload.CSFixed, Min: w.TTL / 20}
	}
	w.TTL = ttl
	return w
}

// cellWorkload is the workload a profile runs st with under scenario sc:
// envelopeWorkload's, and costWorkload's for the cost scenario.
func cellWorkload(st impl.Strategy, sc string, w workload.Config) workload.Config {
	w = envelopeWorkload(st, w)
	if sc == CostScenario {
		w = costWorkload(st, w)
	}
	return w
}

// WorkloadFor is the workload a bench of profile p gives strategy st's
// cell under scenario (cellWorkload: p.Workload with the TTL raised where
// st's call budget or servers need it). Package locktest runs a Go lock's
// cells with it, as lockbench bench would.
func WorkloadFor(st impl.Strategy, p Profile, scenario string) workload.Config {
	return cellWorkload(st, scenario, p.Workload)
}
