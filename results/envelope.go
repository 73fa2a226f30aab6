package results

import (
	"fmt"

	"github.com/lockbench/lockbench/internal/noise"
	"github.com/lockbench/lockbench/stats"
)

// Envelope says whether a run stayed inside its strategy's working
// envelope: libraries derive a call budget from the TTL (redsync: 0.05×TTL
// for the whole parallel call, 5 ms at a 100 ms TTL), and when that budget
// is below the round trip to the servers, calls time out for lack of time,
// not for contention, so the run's cost figures measure the budget, not
// the lock: they are not comparable with other strategies'.
type Envelope struct {
	// BudgetMs is the time the strategy allows the call, in ms.
	BudgetMs float64 `json:"budget_ms"`
	// Scope is what the budget bounds: "whole call" (all nodes in
	// parallel) or "each node call".
	Scope string `json:"scope"`
	// Rule is how the budget follows from the TTL, e.g. "0.05×TTL".
	Rule string `json:"rule"`
	// RTTP99Ms is the largest round-trip p99 to a server, in ms: measured
	// before the run and, in a run without faults, during it (a fault
	// such as a paused server makes in-run round trips meaningless).
	// 0 when no round trip was measured.
	RTTP99Ms float64 `json:"rtt_p99_ms"`
	// Comparable is false when BudgetMs is below RTTP99Ms.
	Comparable bool `json:"comparable"`
	// Why says, when not comparable, which budget is below which round
	// trip; when no round trip was measured, that the envelope is unknown.
	Why string `json:"why,omitempty"`
}

// EnvelopeOf judges a strategy's call budget (budgetMs, scope and rule as
// in Envelope) against the round trips of n (nil: none measured); faulted
// leaves the in-run round trips out.
func EnvelopeOf(budgetMs float64, scope, rule string, n *noise.Summary, faulted bool) *Envelope {
	e := &Envelope{BudgetMs: budgetMs, Scope: scope, Rule: rule, Comparable: true}
	if n != nil {
		e.RTTP99Ms = noise.MaxP99Ms(n.RTTBefore)
		if !faulted {
			e.RTTP99Ms = max(e.RTTP99Ms, noise.MaxP99Ms(n.RTTDuring))
		}
	}
	switch {
	case e.RTTP99Ms == 0:
		e.Why = "no round trip was measured: the envelope is unknown"
	case budgetMs < e.RTTP99Ms:
		e.Comparable = false
		e.Why = fmt.Sprintf("call budget %s ms (%s, %s) is below the round-trip p99 %s ms: calls time out for lack of time, so cost figures measure the budget, not the lock",
			stats.FormatNum(budgetMs), rule, scope, stats.FormatNum(e.RTTP99Ms))
	}
	return e
}
