package bench

import (
	"fmt"
	"time"

	"github.com/lockbench/lockbench/impl"
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
// ttl itself unless st declares a call budget (impl.Budgeted) below
// MinCallBudget at ttl.
func envelopeTTL(st impl.Strategy, ttl time.Duration) (time.Duration, string) {
	b, ok := impl.BudgetOf(st, ttl)
	if !ok || b.Time >= MinCallBudget || ttl <= 0 {
		return ttl, ""
	}
	for t, i := 2*ttl, 0; i < maxTTLDoublings; t, i = 2*t, i+1 {
		if nb, _ := impl.BudgetOf(st, t); nb.Time >= MinCallBudget {
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
