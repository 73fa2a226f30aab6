package checker

import (
	"fmt"

	"github.com/lockbench/lockbench/checker/witness"
	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/history/measure"
)

// Fencing checks that fencing tokens strictly increase across the grants
// (holds, see measure.Holds) of each key. Grant B violates it when some grant A of
// the same key completed before B was invoked (A.AcquireComplete <
// B.AcquireInvoke, so A was certainly granted first) with A.Fence >=
// B.Fence, or when B carries the same token as an earlier-completed grant it
// overlaps. Grants whose acquires overlap in time are not ordered otherwise:
// either may have been granted first. Each grant flagged is a witness
// (witness.FenceWitness, with the earlier grant), per key in key order, in order of
// acquire invoke; Result.Violations counts them.
//
// It applies when h.Fencing is not "off" or any grant carries a token
// (Fence > 0); it is Skipped when no grant carries one.
func Fencing(h history.Header, ops []history.Operation) Result {
	return fencingOf(h, measure.Holds(ops))
}

// fencingOf is Fencing on the history's holds (measure.Holds(ops)).
func fencingOf(h history.Header, hs []measure.Hold) Result {
	fenced := 0
	for _, hd := range hs {
		if hd.Fence > 0 {
			fenced++
		}
	}
	if fenced == 0 {
		msg := "no fencing tokens: the strategy issues none"
		if h.Fencing != "" && h.Fencing != fencingOff {
			msg = fmt.Sprintf("resource fencing %q but no grant carries a fencing token", h.Fencing)
		}
		return Result{Status: Skipped, Message: msg}
	}
	keys, byKey := measure.HoldsByKey(hs)
	var r Result
	var found []witness.FenceWitness
	for _, k := range keys {
		byInvoke := byKey[k] // measure.Holds sorts by AcquireInvoke
		byComplete := append([]int(nil), byInvoke...)
		sortIndexStable(byComplete, func(i int) int64 { return hs[i].AcquireComplete })
		sameFence := map[int64][]int{}
		for _, i := range byInvoke {
			sameFence[hs[i].Fence] = append(sameFence[hs[i].Fence], i)
		}
		// Grants that completed before B was invoked: a prefix of byComplete.
		done, top := 0, -1 // top: index of the highest fence in the prefix
		for _, b := range byInvoke {
			hb := hs[b]
			for done < len(byComplete) && hs[byComplete[done]].AcquireComplete < hb.AcquireInvoke {
				if a := byComplete[done]; top < 0 || hs[a].Fence > hs[top].Fence {
					top = a
				}
				done++
			}
			if top >= 0 && hs[top].Fence >= hb.Fence {
				found = append(found, witness.FenceWitness{Key: k, Grant: refOf(hb), Earlier: refOf(hs[top])})
				continue
			}
			// Same token as an overlapping grant that completed earlier.
			for _, a := range sameFence[hb.Fence] {
				ha := hs[a]
				if a != b && ha.AcquireComplete >= hb.AcquireInvoke &&
					(ha.AcquireComplete < hb.AcquireComplete || ha.AcquireComplete == hb.AcquireComplete && a < b) {
					found = append(found, witness.FenceWitness{Key: k, Grant: refOf(hb), Earlier: refOf(ha), Shared: true})
					break
				}
			}
		}
	}
	r.Violations = len(found)
	r.Details = detailsOf(found, r.Violations)
	if r.Violations > 0 {
		r.Status = Violated
		r.Witnesses = witness.Witnesses{Fencing: keep(found), Total: witness.WitnessCounts{Fencing: r.Violations}}
		r.Message = fmt.Sprintf("%d of %d grants do not get a fencing token above the grants before them", r.Violations, len(hs))
		return r
	}
	r.Status = OK
	r.Message = fmt.Sprintf("fencing tokens strictly increase over %d grants on %s", len(hs), keysOf(len(keys)))
	return r
}

// Reentrancy checks, for a reentrant strategy (h.Reentrant), that the counts
// Redis reported match the nesting: every successful whole-lock acquire has
// Count == Depth, every successful release Count == Depth-1. Whether the key
// is gone once the count reaches 0 shows in the exclusion and liveness
// checks (a key left behind blocks the next acquire or fails its probe).
//
// An acquire or release with an unknown outcome (info: the reply was lost,
// e.g. the node died after applying the command) may or may not have moved
// the server's count, so after one, a client's counts on that key are
// judged with a tolerance of the number of such operations, until an
// outermost acquire reports count 1 (a fresh hash) or a release reports 0
// (the hash deleted). Counts within the tolerance are reported as not
// judged, never as a pass of the exact check.
//
// Each operation with a wrong count is a witness (CountWitness), in history
// order; Result.Violations counts them. Skipped for non-reentrant
// strategies.
func Reentrancy(h history.Header, ops []history.Operation) Result {
	if !h.Reentrant {
		return Result{Status: Skipped, Message: "the strategy is not reentrant"}
	}
	type owner struct {
		client int
		key    string
	}
	unknown := map[owner]int{} // unknown-outcome acquires and releases since the count was last known
	var r Result
	var found []witness.CountWitness
	var acquires, releases, unjudged int
	for _, op := range ops {
		if !isWholeLock(op) || (op.Kind != history.Acquire && op.Kind != history.Release) {
			continue
		}
		o := owner{op.Client, op.Key}
		if op.Result == history.Info {
			unknown[o]++
			continue
		}
		if op.Result != history.OK {
			continue
		}
		want := op.Depth - 1
		if op.Kind == history.Acquire {
			acquires++
			want = op.Depth
		} else {
			releases++
		}
		if d := op.Count - want; d != 0 {
			if u := unknown[o]; u > 0 && -u <= d && d <= u {
				unjudged++
			} else {
				found = append(found, witness.CountWitness{Op: opRef(op), Want: want})
			}
		}
		if (op.Kind == history.Acquire && op.Depth == 1 && op.Count == 1) || (op.Kind == history.Release && op.Count == 0) {
			delete(unknown, o)
		}
	}
	r.Violations = len(found)
	r.Details = detailsOf(found, r.Violations)
	var note string
	if unjudged > 0 {
		note = fmt.Sprintf("; %d counts not judged (off by no more than the client's earlier operations with unknown outcome)", unjudged)
	}
	if r.Violations > 0 {
		r.Status = Violated
		r.Witnesses = witness.Witnesses{Reentrancy: keep(found), Total: witness.WitnessCounts{Reentrancy: r.Violations}}
		r.Message = fmt.Sprintf("%d of %d successful acquires and releases report a count that does not match their depth%s", r.Violations, acquires+releases, note)
		return r
	}
	r.Status = OK
	r.Message = fmt.Sprintf("counts match nesting depth on %d of %d acquires and releases%s", acquires+releases-unjudged, acquires+releases, note)
	return r
}
