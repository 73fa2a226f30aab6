package checker

import (
	"fmt"

	"github.com/lockbench/lockbench/checker/witness"
	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/history/measure"
)

// Witnesses returns every check's witnesses in one value (each Result
// carries its own check's).
func (r Report) Witnesses() witness.Witnesses {
	return witness.Witnesses{
		Exclusion:  r.Exclusion.Witnesses.Exclusion,
		Resource:   r.Resource.Witnesses.Resource,
		Fencing:    r.Fencing.Witnesses.Fencing,
		Reentrancy: r.Reentrancy.Witnesses.Reentrancy,
		Liveness:   r.Liveness.Witnesses.Liveness,
		Renewal:    r.Renewal.Witnesses.Renewal,
		Orphans:    r.Orphans.Witnesses.Orphans,
		Lost:       r.Lost.Witnesses.Lost,
		Extends:    r.Extends.Witnesses.Extends,
		Reasons:    r.Reasons.Witnesses.Reasons,
		Total: witness.WitnessCounts{
			Exclusion:  r.Exclusion.Witnesses.Total.Exclusion,
			Resource:   r.Resource.Witnesses.Total.Resource,
			Fencing:    r.Fencing.Witnesses.Total.Fencing,
			Reentrancy: r.Reentrancy.Witnesses.Total.Reentrancy,
			Liveness:   r.Liveness.Witnesses.Total.Liveness,
			Renewal:    r.Renewal.Witnesses.Total.Renewal,
			Orphans:    r.Orphans.Witnesses.Total.Orphans,
			Lost:       r.Lost.Witnesses.Total.Lost,
			Extends:    r.Extends.Witnesses.Total.Extends,
			Reasons:    r.Reasons.Witnesses.Total.Reasons,
		},
	}
}

// refOf names a hold for a witness.
func refOf(h measure.Hold) witness.HoldRef {
	rel := h.ReleaseComplete
	if rel == measure.Inf {
		rel = -1
	}
	return witness.HoldRef{Client: h.Client, Hold: h.Hold, Fence: h.Fence, AcquireInvokeNs: h.AcquireInvoke,
		AcquireCompleteNs: h.AcquireComplete, EndOfUseNs: h.EndOfUse, ReleaseCompleteNs: rel, Crashed: h.Crashed}
}

// overlapOf is the witness of conflicting holds a and b, a granted first.
func overlapOf(a, b measure.Hold) witness.Overlap {
	return witness.Overlap{Key: a.Key, A: refOf(a), B: refOf(b),
		BothFromNs: max(a.AcquireComplete, b.AcquireComplete), BothToNs: min(a.EndOfUse, b.EndOfUse)}
}

// detailsOf is Result.Details for witnesses ws of which total were found:
// one line each, cut at maxDetails lines by capDetails.
func detailsOf[W fmt.Stringer](ws []W, total int) []string {
	n := min(len(ws), maxDetails)
	d := make([]string, 0, n)
	for _, w := range ws[:n] {
		d = append(d, w.String())
	}
	return capDetails(d, total)
}

// keep returns the first witness.MaxWitnesses of ws.
func keep[W any](ws []W) []W {
	if len(ws) > witness.MaxWitnesses {
		return ws[:witness.MaxWitnesses:witness.MaxWitnesses]
	}
	return ws
}

// opRef copies an operation for a witness (nil-safe for a missing one).
func opRef(op history.Operation) *history.Operation { return &op }
