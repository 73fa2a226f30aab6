package strategies

import (
	"time"

	"github.com/lockbench/lockbench/impl"
)

// CallBudget is the time a strategy allows one lock call, derived from the
// TTL by the strategy's own rule (a library's default or the algorithm's).
// When the round trip to the servers is longer, calls fail for lack of
// time rather than for contention: the strategy runs outside its working
// envelope and its cost figures measure the budget, not the lock.
type CallBudget struct {
	// Time is the budget.
	Time time.Duration
	// Scope is what Time bounds: BudgetWholeCall or BudgetEachNode.
	Scope string
	// Rule says how Time follows from the TTL, e.g. "0.05×TTL
	// (redsync WithTimeoutFactor)".
	Rule string
}

// Scopes of a CallBudget.
const (
	// BudgetWholeCall: Time bounds the whole acquire, every node in parallel.
	BudgetWholeCall = "whole call"
	// BudgetEachNode: Time bounds each per-node call of a quorum acquire.
	BudgetEachNode = "each node call"
)

// Budgeted is implemented by strategies whose calls must finish within a
// budget derived from the TTL: redsync and redsync-single (0.05×TTL for
// the whole parallel call, or the redsync-timeout-factor setting) and
// redlock (the per-node timeout, Config.NodeTimeout's default TTL/10, at
// least 5 ms). The other strategies, redislock included (its calls are
// bounded by the caller's context, the workload's --op-timeout, not by
// the TTL), declare none.
type Budgeted interface {
	// CallBudget returns the budget of one lock call at TTL ttl.
	CallBudget(ttl time.Duration) CallBudget
}

// BudgetOf returns st's call budget at TTL ttl; ok is false when st
// declares none (it does not implement Budgeted).
func BudgetOf(st impl.Strategy, ttl time.Duration) (b CallBudget, ok bool) {
	bs, ok := st.(Budgeted)
	if !ok {
		return CallBudget{}, false
	}
	return bs.CallBudget(ttl), true
}
