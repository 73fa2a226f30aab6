package checker

import (
	"time"

	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/history/measure"
)

// observedEvidence fills in the evidence of the checks that rest on the
// observer's reads (FailedAcquiresObserved, ObservedTokens,
// ObservedKnownTokens): the history's TTL is h's.
func observedEvidence(e *measure.Evidence, h history.Header, ops []history.Operation) {
	_, rounds := observations(ops, h.Nodes)
	if len(rounds) == 0 {
		return
	}
	within := int64(h.TTLMs) * int64(time.Millisecond) / 2
	known, seen := map[string]bool{}, map[string]bool{}
	for _, op := range ops {
		if op.Kind == history.Acquire && op.Client >= 0 && isWholeLock(op) && op.Token != "" {
			known[op.Token] = true
		}
	}
	for _, rs := range rounds {
		for _, r := range rs {
			for _, op := range r.reads {
				if op.Token != "" {
					seen[op.Token] = true
				}
			}
		}
	}
	e.ObservedTokens = len(seen)
	for t := range seen {
		if known[t] {
			e.ObservedKnownTokens++
		}
	}
	for _, op := range ops {
		if op.Kind != history.Acquire || op.Result != history.Fail || !isClientLockCall(op) {
			continue
		}
		rs := rounds[op.Key]
		for _, r := range rs[readAfter(rs, op.Complete):] {
			if r.invoke > op.Complete+within {
				break
			}
			if r.answered() {
				e.FailedAcquiresObserved++
				break
			}
		}
	}
}
