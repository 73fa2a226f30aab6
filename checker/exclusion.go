package checker

import (
	"fmt"
	"sort"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/lockbench/lockbench/checker/witness"
	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/history/measure"
)

// Exclusion checks mutual exclusion per key: no two holds (see measure.Holds) of a
// key may overlap.
//
// Two checks run side by side on the same intervals:
//
//   - porcupine, partitioned per key (long keys cut into pieces at points
//     where the cut is exact, see excPieces), on a mutex model whose state
//     is the current holder: each hold is an Enter operation over [AcquireInvoke,
//     AcquireComplete] (legal iff the lock is free; makes the hold the
//     holder) and an Exit operation over [EndOfUse, ReleaseComplete] (legal
//     iff the hold is the holder; frees the lock). Porcupine treats
//     intervals as closed and orders a call before a return at equal
//     timestamps, so an Exit may be linearised before an Enter that returns
//     at the very instant the Exit is invoked.
//   - a sweep-line over the same holds: holds A and B of a key conflict iff
//     A.AcquireComplete < B.EndOfUse && B.AcquireComplete < A.EndOfUse
//     (back-to-back holds with equal timestamps do not conflict, as in
//     porcupine). Result.Violations is the number of conflicting pairs.
//
// Porcupine finds the history illegal exactly when the sweep-line finds a
// pair; if they disagree the result is Inconclusive with a Message starting
// "checker disagreement (bug):". If porcupine times out (o.Timeout) the
// result is Inconclusive, unless the sweep-line found pairs, which are a
// definite violation on their own. Skipped when the history has no holds.
//
// Each conflicting pair is a witness (witness.Overlap): the two holds and the
// interval [max(A.AcquireComplete, B.AcquireComplete), min(A.EndOfUse,
// B.EndOfUse)] where both certainly held, non-empty by the rule above. The
// first witness.MaxWitnesses pairs are kept, per key in key order, in order of the
// later hold's acquire completion; Details are their lines.
//
// On a violation, porcupine's visualisation of the pieces with overlapping
// holds (up to 10) is written to o.VisualizationPath (if set), with nemesis
// windows, crashes, lost leases and the witnesses' intervals (up to 20) as
// annotations.
func Exclusion(h history.Header, ops []history.Operation, o Options) Result {
	r, _ := exclusion(h, ops, o)
	return r
}

// excInput is the input of a mutex-model operation: one end of a hold.
type excInput struct {
	enter bool
	id    int // index of the hold in the holds slice, plus 1 (0 means free)
	piece int
	hold  *measure.Hold // into the holds slice of the check (a pointer keeps the boxed input small)
}

func (in excInput) pieceOf() int { return in.piece }

// excState is the mutex model's state: the id of the holder, 0 when free.
type excState int

func (s excState) step(in excInput) (bool, excState) {
	if in.enter {
		return s == 0, excState(in.id)
	}
	return s == excState(in.id), 0
}

func exclusionModel() porcupine.Model {
	return porcupine.Model{
		Partition: partitionByPiece,
		Init:      func() interface{} { return excState(0) },
		Step: func(state, input, _ interface{}) (bool, interface{}) {
			ok, next := state.(excState).step(input.(excInput))
			return ok, next
		},
		Hash: func(state interface{}) uint64 { return uint64(state.(excState)) },
		DescribeOperation: func(input, _ interface{}) string {
			in := input.(excInput)
			h := in.hold
			if in.enter {
				fence := ""
				if h.Fence != 0 {
					fence = fmt.Sprintf(" fence=%d", h.Fence)
				}
				return fmt.Sprintf("c%d h%d enter %s tok=%s%s", h.Client, h.Hold, h.Key, h.Token, fence)
			}
			end := "released"
			switch {
			case h.Crashed:
				end = "crashed"
			case h.ReleaseComplete == measure.Inf:
				end = "release unknown"
			}
			return fmt.Sprintf("c%d h%d exit %s (%s)", h.Client, h.Hold, h.Key, end)
		},
		DescribeOperationMetadata: describeSpan,
		DescribeState: func(state interface{}) string {
			if state.(excState) == 0 {
				return "free"
			}
			return fmt.Sprintf("held by #%d", int(state.(excState)))
		},
	}
}

// excPieces cuts each key's holds into pieces for porcupine (see
// pieces.go): holds sorted by AcquireComplete, a new piece starts at hold B
// once the current piece has at least minHolds holds and every earlier hold
// of the key ended its use by B's grant (EndOfUse <= B.AcquireComplete).
//
// The cut is exact. In the mutex model a set of holds is linearizable iff
// no two conflict (A.AcquireComplete < B.EndOfUse && B.AcquireComplete <
// A.EndOfUse): if none conflict, ordering holds by (AcquireComplete,
// EndOfUse) and linearizing each Enter at its acquire completion and each
// Exit at its end of use respects every interval (AcquireInvoke <=
// AcquireComplete <= EndOfUse <= ReleaseComplete) and porcupine's
// call-before-return order at equal times; if A and B conflict, neither
// A's Exit can precede B's Enter nor B's Exit A's Enter. Holds on either
// side of a cut never conflict, so the key is linearizable iff every piece
// is. TestPorcupineAgreesWithSweep checks this on random histories, with
// and without cuts.
func excPieces(hs []measure.Hold, minHolds int) [][]int {
	keys, byKey := measure.HoldsByKey(hs)
	var pieces [][]int
	for _, k := range keys {
		idx := byKey[k]
		sortByGrant(hs, idx)
		var cur []int
		var end int64
		for _, b := range idx {
			if len(cur) >= minHolds && end <= hs[b].AcquireComplete {
				pieces = append(pieces, cur)
				cur = nil
			}
			if len(cur) == 0 || hs[b].EndOfUse > end {
				end = hs[b].EndOfUse
			}
			cur = append(cur, b)
		}
		if len(cur) > 0 {
			pieces = append(pieces, cur)
		}
	}
	return pieces
}

// exclusionOps turns each piece of holds into porcupine operations, an Enter
// and an Exit per hold. They carry no Metadata (excSpan adds it for a
// visualisation): one allocation less per operation.
// excSpan names the interval of an exclusion operation for withSpans.
func excSpan(op porcupine.Operation) string {
	if op.Input.(excInput).enter {
		return "acquire"
	}
	return "end of use to release"
}

func exclusionOps(hs []measure.Hold, pieces [][]int) [][]porcupine.Operation {
	out := make([][]porcupine.Operation, len(pieces))
	for p, piece := range pieces {
		ops := make([]porcupine.Operation, 0, 2*len(piece))
		for _, i := range piece {
			h := hs[i]
			ops = append(ops,
				porcupine.Operation{ClientId: h.Stream, Input: excInput{enter: true, id: i + 1, piece: p, hold: &hs[i]},
					Call: h.AcquireInvoke, Return: h.AcquireComplete},
				porcupine.Operation{ClientId: h.Stream, Input: excInput{enter: false, id: i + 1, piece: p, hold: &hs[i]},
					Call: h.EndOfUse, Return: h.ReleaseComplete},
			)
		}
		out[p] = ops
	}
	return out
}

// overlap is a conflicting pair of holds: indices into the holds slice, a
// acquired (completed) first.
type overlap struct{ a, b int }

// maxKeptOverlaps bounds the pairs kept as witnesses; all are counted.
const maxKeptOverlaps = witness.MaxWitnesses

// sweepOverlaps counts the conflicting pairs of holds per key: A and B
// conflict iff A.AcquireComplete < B.EndOfUse && B.AcquireComplete <
// A.EndOfUse. It returns the count, the first pairs found (in order of the
// later hold's acquire completion, per key in sorted key order) and the
// keys with at least one pair.
func sweepOverlaps(hs []measure.Hold) (n int, kept []overlap, keys map[string]bool) {
	names, byKey := measure.HoldsByKey(hs)
	keys = map[string]bool{}
	for _, k := range names {
		idx := byKey[k]
		sortByGrant(hs, idx)
		var active []int
		for _, b := range idx {
			hb := hs[b]
			// Drop holds that ended by hb's grant: for any later hold too.
			live := active[:0]
			for _, a := range active {
				if hs[a].EndOfUse > hb.AcquireComplete {
					live = append(live, a)
				}
			}
			active = live
			for _, a := range active {
				if hs[a].AcquireComplete < hb.EndOfUse {
					n++
					keys[k] = true
					if len(kept) < maxKeptOverlaps {
						kept = append(kept, overlap{a, b})
					}
				}
			}
			active = append(active, b)
		}
	}
	return n, kept, keys
}

func exclusion(h history.Header, ops []history.Operation, o Options) (Result, string) {
	return exclusionOf(h, ops, measure.Holds(ops), o)
}

// exclusionOf is exclusion with the history's holds (measure.Holds(ops)) given.
func exclusionOf(h history.Header, ops []history.Operation, hs []measure.Hold, o Options) (Result, string) {
	if len(hs) == 0 {
		return Result{Status: Skipped, Message: "no successful acquires: no holds to check"}, ""
	}
	nKeys := countKeys(hs)
	n, kept, badKeys := sweepOverlaps(hs)
	model := exclusionModel()
	pieces := excPieces(hs, o.minPieceHolds())
	pops := exclusionOps(hs, pieces)
	porc := checkPieces(model, pops, o.timeout())

	r := Result{Violations: n}
	found := make([]witness.Overlap, len(kept))
	for i, p := range kept {
		found[i] = overlapOf(hs[p.a], hs[p.b])
	}
	r.Details = detailsOf(found, n)
	switch {
	case porc == porcupine.Ok && n == 0:
		r.Status = OK
		r.Message = fmt.Sprintf("%d holds on %s, no overlap (porcupine and sweep-line agree)", len(hs), keysOf(nKeys))
	case porc == porcupine.Illegal && n > 0:
		r.Status = Violated
		r.Message = fmt.Sprintf("%s on %d of %d keys (porcupine: illegal)", pairs(n), len(badKeys), nKeys)
	case porc == porcupine.Unknown && n == 0:
		r.Status, r.TimedOut = Inconclusive, true
		r.Message = fmt.Sprintf("porcupine timed out after %s on %d holds; the sweep-line found no overlap", o.timeout(), len(hs))
	case porc == porcupine.Unknown:
		r.Status = Violated
		r.Message = fmt.Sprintf("%s on %d of %d keys (sweep-line; porcupine timed out after %s)", pairs(n), len(badKeys), nKeys, o.timeout())
	case porc == porcupine.Illegal:
		r.Status = Inconclusive
		r.Message = "checker disagreement (bug): porcupine finds the holds illegal, the sweep-line finds no overlapping pair"
	default:
		r.Status = Inconclusive
		r.Message = fmt.Sprintf("checker disagreement (bug): porcupine finds the holds linearizable, the sweep-line finds %s", pairs(n))
	}
	if r.Status == Violated {
		r.Witnesses = witness.Witnesses{Exclusion: found, Total: witness.WitnessCounts{Exclusion: n}}
	}
	if o.VisualizationPath == "" || r.Status == OK || porc == porcupine.Unknown && n == 0 {
		return r, ""
	}
	// Show the pieces with overlapping pairs, or those porcupine rejects.
	pieceOf := make([]int, len(hs))
	for p, piece := range pieces {
		for _, i := range piece {
			pieceOf[i] = p
		}
	}
	var show []int
	seen := map[int]bool{}
	for _, p := range kept {
		if piece := pieceOf[p.a]; !seen[piece] && len(show) < maxVizPieces {
			seen[piece] = true
			show = append(show, piece)
		}
	}
	if len(show) == 0 {
		show = illegalPieces(model, pops, o.timeout(), maxVizPieces)
	}
	var vops [][]porcupine.Operation
	shownKeys := map[string]bool{}
	for _, p := range show {
		vops = append(vops, withSpans(pops[p], excSpan))
		shownKeys[hs[pieces[p][0]].Key] = true
	}
	keep := func(k string) bool { return shownKeys[k] }
	var notes []porcupine.Annotation
	for i, p := range kept {
		if seen[pieceOf[p.a]] && len(notes) < maxDetails {
			notes = append(notes, overlapAnnotation(found[i]))
		}
	}
	path, err := visualize(model, flatten(vops), ops, keep, notes, o.VisualizationPath, o.timeout())
	if err != nil {
		r.Message += "; visualization not written: " + err.Error()
		return r, ""
	}
	return r, path
}

// pairs says how many overlapping pairs of holds there are.
// keysOf returns "1 key" or "N keys".
func keysOf(n int) string {
	if n == 1 {
		return "1 key"
	}
	return fmt.Sprintf("%d keys", n)
}

func pairs(n int) string {
	if n == 1 {
		return "1 overlapping pair of holds"
	}
	return fmt.Sprintf("%d overlapping pairs of holds", n)
}

func countKeys(hs []measure.Hold) int {
	keys := map[string]bool{}
	for _, h := range hs {
		keys[h.Key] = true
	}
	return len(keys)
}

// ms formats a time in ns since run start as milliseconds; measure.Inf as "+inf".
func ms(ns int64) string {
	if ns == measure.Inf {
		return "+inf"
	}
	return fmt.Sprintf("%.3f", float64(ns)/float64(time.Millisecond))
}

// count writes n and noun, with an s unless n is 1: "1 key", "3 keys".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// capDetails trims details to maxDetails lines, the last one saying how
// many of total were left out.
func capDetails(d []string, total int) []string {
	total = max(total, len(d))
	if total <= maxDetails && len(d) == total {
		return d
	}
	keep := min(len(d), maxDetails-1)
	return append(d[:keep:keep], fmt.Sprintf("... and %d more", total-keep))
}

// sortByGrant orders idx (indexes into hs) by acquire completion, then end
// of use.
func sortByGrant(hs []measure.Hold, idx []int) {
	sort.SliceStable(idx, func(x, y int) bool {
		a, b := hs[idx[x]], hs[idx[y]]
		if a.AcquireComplete != b.AcquireComplete {
			return a.AcquireComplete < b.AcquireComplete
		}
		return a.EndOfUse < b.EndOfUse
	})
}
