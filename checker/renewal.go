package checker

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/lockbench/lockbench/checker/witness"
	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/history/measure"
)

// RenewalOptions configure the renewal-liveness check (Renewal).
type RenewalOptions struct {
	// Reach is how long after a fault window ends the fault may still
	// take a lease (its declared reach past the window): a lease lost in
	// [window start, window end + Reach] is the fault's doing, not the
	// lock's. 0: the history's TTL.
	Reach time.Duration
	// KeepsLeases says the run's faults take no lease from a renewing
	// holder that keeps running (a slow critical section): every moment
	// of the run is checked, fault windows included.
	KeepsLeases bool
	// HarnessRenews says lockbench's own process runs the lock's renewals
	// (a built-in strategy, a Go lock through package locktest): a lease
	// lost more than a TTL after the grant or the last renewal that
	// succeeded (the renewals between, if any, invoked late or never
	// answered: their calls timed out with no fault), or of a hold whose
	// grant's own call took more than half the TTL, was lost to a machine
	// that ran the harness late, not to the lock, and is inconclusive
	// rather than a violation. An adapter's renewals run in its own
	// process on its own schedule: a late one is the lock's.
	HarnessRenews bool
}

// Renewal checks renewal liveness: a lock that renews its leases must
// not lose one while its holder runs unless a fault explains it. For
// every hold (measure.Holds) it looks, from the grant to the holder's release
// (or crash; the end of the history when neither came), for: a lost
// operation of the hold, an extend of the hold with result fail, and an
// observe round (the observer's reads of the key on every node, sharing
// an invoke time) invoked after the grant in which fewer than a majority
// of the nodes answered with the holder's token while a majority
// answered at all. Each is a violation with its witness (witness.RenewalWitness;
// one per hold, the first) unless a fault explains it: a fault window,
// with its reach (o), that meets the span from the hold's last evidence
// that its key was still its own (the grant, a renewal that said ok, an
// observe round that found its token on a majority; their invokes) to
// the completion of the operation that saw the loss. The fault struck
// the key somewhere in that span, even when the read that found it gone
// was invoked before the fault's window opened (a read the machine sent
// late). Whether the check is gated is the expectation's business
// (a lock that claims renewal); the checker runs it on every history.
// Skipped when the history has no hold; ok otherwise.
func Renewal(h history.Header, ops []history.Operation, o RenewalOptions) Result {
	return renewalWith(h, ops, measure.Holds(ops), o)
}

// renewalWith is Renewal with the history's holds (measure.Holds(ops)) given.
func renewalWith(h history.Header, ops []history.Operation, holds []measure.Hold, o RenewalOptions) Result {
	if len(holds) == 0 {
		return Result{Status: Skipped, Message: "no holds"}
	}
	reach := o.Reach
	if reach <= 0 {
		reach = time.Duration(h.TTLMs) * time.Millisecond
	}
	var windows [][2]int64
	if !o.KeepsLeases {
		for _, w := range measure.FaultWindows(ops) {
			windows = append(windows, [2]int64{w.Start, w.End + int64(reach)})
		}
	}
	// faulted reports whether a fault window (with its reach) meets
	// [from, to]: the span from the hold's last evidence that the key was
	// still its own to the moment the loss was seen. A fault that struck
	// in between explains the loss even when the evidence of it (an
	// observer's read invoked before the fault's window opened and
	// answered after it, a renewal that ran late) falls outside the
	// window.
	faulted := func(from, to int64) bool {
		for _, w := range windows {
			if from <= w[1] && to >= w[0] {
				return true
			}
		}
		return false
	}
	// The end of each hold's running: its first outermost release or
	// crash invoke.
	ends := map[int64]int64{}
	var lastOp int64
	for _, op := range ops {
		lastOp = max(lastOp, op.Complete)
		if op.Hold == 0 || (op.Kind != history.Release && op.Kind != history.Crash) || op.Node != "" || op.Depth > 1 {
			continue
		}
		if e, ok := ends[op.Hold]; !ok || op.Invoke < e {
			ends[op.Hold] = op.Invoke
		}
	}
	byHold := make(map[int64]int, len(holds)) // hold id → index in holds
	for i, hd := range holds {
		byHold[hd.Hold] = i
	}
	type span struct {
		hold     measure.Hold
		from, to int64
	}
	// The holds of each key while their holders ran, for the observe
	// rounds below (none: not wanted).
	_, rounds := observations(ops, h.Nodes)
	byKey := map[string][]span{}
	if len(rounds) > 0 {
		for _, hd := range holds {
			to, ok := ends[hd.Hold]
			if !ok {
				to = lastOp
			}
			byKey[hd.Key] = append(byKey[hd.Key], span{hd, hd.AcquireComplete, to})
		}
	}
	// Each hold's renewals, to tell a lease the harness let lapse: the
	// invokes of those that succeeded (ok), and of the others with
	// whether the lock answered them itself (a fail, or an unknown
	// outcome that is no timeout: its own error) rather than the machine
	// leaving them unanswered until their deadline (an unknown outcome
	// that timed out).
	type renewalCall struct {
		complete int64
		answered bool
	}
	renewals := map[int64][]int64{}
	others := map[int64][]renewalCall{}
	for _, op := range ops {
		if op.Kind != history.Extend || op.Hold == 0 || op.Node != "" {
			continue
		}
		if op.Result == history.OK {
			renewals[op.Hold] = append(renewals[op.Hold], op.Invoke)
		} else {
			others[op.Hold] = append(others[op.Hold], renewalCall{op.Complete, op.Result == history.Fail || !measure.IsTimeout(op.Error)})
		}
	}
	ttl := int64(time.Duration(h.TTLMs) * time.Millisecond)
	// late reports the largest gap between the grant, the successful
	// renewals invoked up to at, and at, when it exceeds the TTL and no
	// renewal came back failed by the lock itself while the lease
	// certainly lived (within a TTL of the last success): the renewals
	// ran late, or timed out unanswered, until the lease lapsed; a
	// failure answered after that may be the lapse's consequence.
	late := func(hd measure.Hold, at int64) (string, bool) {
		if !o.HarnessRenews || ttl <= 0 {
			return "", false
		}
		// The grant's own call took more than half the lease: the
		// lease had less than half its TTL left when the holder got
		// it, too little for a renewal scheduled from the grant (a
		// watchdog renews at a third of the TTL); the machine ran the
		// call late (a cold client's slot map and dial on a loaded
		// host), not the lock. A lock that renews too late still shows
		// on its holds granted promptly.
		if call := hd.AcquireComplete - hd.AcquireInvoke; call > ttl/2 {
			return fmt.Sprintf("its acquire call took %s ms of a TTL of %d ms", ms(call), h.TTLMs), true
		}
		prev, gap := hd.AcquireComplete, int64(0)
		rs := renewals[hd.Hold]
		slices.Sort(rs)
		for _, t := range rs {
			if t > at {
				break
			}
			gap, prev = max(gap, t-prev), t
		}
		gap = max(gap, at-prev)
		if gap <= ttl {
			return "", false
		}
		for _, c := range others[hd.Hold] {
			if c.answered && c.complete > prev && c.complete < prev+ttl {
				return "", false // the lock failed its own renewal while the lease lived
			}
		}
		return fmt.Sprintf("no renewal succeeded for %s ms, TTL %d ms", ms(gap), h.TTLMs), true
	}
	// Evidence that a hold's key was still its own, per hold: the grant
	// (its acquire's invoke), its renewals that said ok and the observe
	// rounds in which a majority of the nodes held its token (their
	// invokes), in order; built at the first loss seen (most histories
	// have none, and it costs a map entry per hold).
	var heldAt map[int64][]int64
	buildHeldAt := func() {
		heldAt = map[int64][]int64{}
		for _, hd := range holds {
			heldAt[hd.Hold] = append(heldAt[hd.Hold], hd.AcquireInvoke)
		}
		for _, op := range ops {
			if op.Kind == history.Extend && op.Hold != 0 && op.Node == "" && op.Result == history.OK {
				heldAt[op.Hold] = append(heldAt[op.Hold], op.Invoke)
			}
		}
		for key, rs := range rounds {
			for _, r := range rs {
				if !r.answered() {
					continue
				}
				for _, sp := range byKey[key] {
					if sp.hold.Token != "" && r.invoke >= sp.hold.AcquireInvoke && r.invoke < sp.to && r.holds(sp.hold.Token) {
						heldAt[sp.hold.Hold] = append(heldAt[sp.hold.Hold], r.invoke)
					}
				}
			}
		}
		for _, ts := range heldAt {
			slices.Sort(ts)
		}
	}
	// lastHeld is the latest evidence of hd's key held invoked before t.
	lastHeld := func(hd measure.Hold, t int64) int64 {
		if heldAt == nil {
			buildHeldAt()
		}
		ts := heldAt[hd.Hold]
		i := sort.Search(len(ts), func(i int) bool { return ts[i] >= t })
		if i == 0 {
			return hd.AcquireInvoke
		}
		return ts[i-1]
	}
	found := map[int64]witness.RenewalWitness{}
	var lateHolds []string
	// note records a loss of hd seen by an operation invoked at at and
	// complete at seen, unless a fault explains it (faulted, from the
	// hold's last evidence of its key before at) or lockbench ran the
	// renewal late.
	note := func(hd measure.Hold, kind string, at, seen int64, detail string) {
		if _, ok := found[hd.Hold]; ok || faulted(lastHeld(hd, at), seen) {
			return
		}
		if why, ok := late(hd, at); ok {
			found[hd.Hold] = witness.RenewalWitness{} // counted once, not a violation
			lateHolds = append(lateHolds, fmt.Sprintf("c%d h%d (%s)", hd.Client, hd.Hold, why))
			return
		}
		found[hd.Hold] = witness.RenewalWitness{Key: hd.Key, Client: hd.Client, Hold: hd.Hold, Kind: kind, AtNs: at, GrantedNs: hd.AcquireComplete, Detail: detail}
	}
	for _, op := range ops {
		if op.Kind != history.Lost && (op.Kind != history.Extend || op.Result != history.Fail || op.Node != "") {
			continue // neither case below
		}
		hi, ok := byHold[op.Hold]
		if !ok || op.Hold == 0 || op.Client != holds[hi].Client {
			continue
		}
		hd := holds[hi]
		end, has := ends[op.Hold]
		if !has {
			end = lastOp
		}
		if op.Complete > end {
			continue // after the holder stopped running
		}
		switch {
		case op.Kind == history.Lost:
			note(hd, witness.RenewalLost, op.Complete, op.Complete, "")
		case op.Kind == history.Extend && op.Result == history.Fail && op.Node == "":
			d := "extend failed"
			if op.Reason != "" {
				d += ": " + op.Reason
			}
			note(hd, witness.RenewalFailed, op.Complete, op.Complete, d)
		}
	}
	// Observe rounds: reads of one key on every node sharing an invoke,
	// replicas left out (observations): a replica copies its primary late
	// and is no witness of a lost lease.
	for key, rs := range rounds {
		for _, r := range rs {
			if !r.answered() {
				continue // too few answers to say
			}
			for _, sp := range byKey[key] {
				if r.invoke <= sp.from || r.complete >= sp.to || sp.hold.Token == "" {
					continue
				}
				if r.holds(sp.hold.Token) {
					continue // a majority still holds it
				}
				note(sp.hold, witness.RenewalExpired, r.invoke, r.complete, sampleOf(r))
			}
		}
	}
	ws := make([]witness.RenewalWitness, 0, len(found))
	for _, w := range found {
		if w.Hold != 0 {
			ws = append(ws, w)
		}
	}
	if len(ws) == 0 && len(lateHolds) > 0 {
		return Result{Status: Inconclusive, Message: fmt.Sprintf("%d of %d holds lost their lease after lockbench ran their calls late (no renewal of theirs succeeding for more than a TTL, their calls timing out unanswered with no fault, or the grant's own call taking more than half the TTL): the machine ran the harness late, not the lock (%s)",
			len(lateHolds), len(holds), strings.Join(lateHolds[:min(3, len(lateHolds))], "; "))}
	}
	if len(ws) == 0 {
		return Result{Status: OK, Message: fmt.Sprintf("no lease of %d holds lost outside the faults' reach", len(holds))}
	}
	sort.Slice(ws, func(i, j int) bool {
		if ws[i].AtNs != ws[j].AtNs {
			return ws[i].AtNs < ws[j].AtNs
		}
		return ws[i].Hold < ws[j].Hold
	})
	r := Result{Status: Violated, Violations: len(ws),
		Message: fmt.Sprintf("%d of %d holds lost their lease with no fault while the holder ran (first: %s)", len(ws), len(holds), ws[0])}
	for i, w := range ws {
		if i == maxDetails-1 && len(ws) > maxDetails {
			r.Details = append(r.Details, fmt.Sprintf("... and %d more", len(ws)-i))
			break
		}
		r.Details = append(r.Details, w.String())
	}
	r.Witnesses.Total.Renewal = len(ws)
	r.Witnesses.Renewal = ws[:min(len(ws), witness.MaxWitnesses)]
	return r
}

// observed says what an observe operation found, e.g. "key absent (PTTL
// -2)", "another owner's token".
func observed(op history.Operation) string {
	switch {
	case op.Token == "" && op.Value == -2:
		return "key absent (PTTL -2)"
	case op.Token == "":
		return fmt.Sprintf("no owner token (PTTL %d)", op.Value)
	}
	return fmt.Sprintf("token %s (PTTL %d)", op.Token, op.Value)
}

// sampleOf describes one read of round r for a witness: the first that
// found the key absent, else the first answered one ("node: what it read").
func sampleOf(r round) string {
	sample := ""
	for _, op := range r.reads {
		if sample == "" || op.Token == "" {
			sample = fmt.Sprintf("%s: %s", op.Node, observed(op))
			if op.Token == "" {
				break
			}
		}
	}
	return sample
}
