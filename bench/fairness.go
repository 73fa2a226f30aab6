package bench

import (
	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/results"
)

// FairnessAndErrors computes a run's fairness and error breakdown from its history.
// clients is the run's client count: clients that never got a grant count
// as zeros in the fairness index (a client id at or above clients widens
// it). Only the clients' whole-lock operations count: per-node calls of a
// quorum strategy (Node set) and the harness's probes and nemesis (client
// -1) are left out. The definitions are results.Run.Fairness and
// results.ErrorBreakdown's; the index is results.JainIndex.
func FairnessAndErrors(ops []history.Operation, clients int) (float64, results.ErrorBreakdown) {
	var e results.ErrorBreakdown
	grants := make([]float64, max(clients, 0))
	validUntil := map[int64]int64{} // hold → validity deadline of its outermost acquire
	lost := map[int64]bool{}
	expired := map[int64]bool{}
	for _, op := range ops {
		if op.Client < 0 || op.Node != "" {
			continue
		}
		lockOp := op.Kind == history.Acquire || op.Kind == history.Release || op.Kind == history.Extend
		if lockOp && op.Result == history.Info {
			e.Info++
		}
		switch op.Kind {
		case history.Acquire:
			if op.Depth > 1 {
				continue
			}
			switch op.Result {
			case history.Fail:
				e.NotAcquired++
			case history.OK:
				for op.Client >= len(grants) {
					grants = append(grants, 0)
				}
				grants[op.Client]++
				if op.ValidUntil > 0 && op.Hold != 0 {
					validUntil[op.Hold] = op.ValidUntil
				}
			}
		case history.Lost:
			if op.Hold != 0 {
				lost[op.Hold] = true
			}
		case history.Extend:
			// A renewal that raced the end of its hold carries hold 0: not counted.
			if op.Result == history.Fail && op.Hold != 0 {
				lost[op.Hold] = true
			}
		case history.Release:
			if op.Result == history.Fail && op.Hold != 0 {
				expired[op.Hold] = true
			}
			if v, ok := validUntil[op.Hold]; ok && op.Depth <= 1 && op.Invoke > v {
				lost[op.Hold] = true
			}
		}
	}
	e.Lost, e.ExpiredOnRelease = len(lost), len(expired)
	// JainIndex fails only on negative or non-finite values; counts are neither.
	fair, _ := results.JainIndex(grants)
	return fair, e
}
