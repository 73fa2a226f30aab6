package checker

import (
	"fmt"
	"sort"
	"time"

	"github.com/lockbench/lockbench/checker/witness"
	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/history/measure"
)

// LostBound is how long after its lease could no longer be renewed a lock
// that claims renewal has to signal lost, for a TTL ttl: one TTL (a lock
// renews more often than once per TTL, so its next renewal after that
// moment fails, or its lease runs out by its own count) plus half a TTL,
// at least 50 ms, for the renewal call and the scheduling of a loaded
// machine. The built-in watchdog signals at most TTL + 2 renewal periods
// (2/3 TTL) after its last successful renewal's invoke, and at most one
// renewal period (a third of a TTL) plus a call after its key is gone.
func LostBound(ttl time.Duration) time.Duration {
	return ttl + max(ttl/2, 50*time.Millisecond)
}

// Lost checks the lost signals (history.Lost) of a lock: it must never
// signal lost for a lease whose release completed ok (unless the client
// acquired the key again with the same token in between), and a lock that
// claims renewal (h.Renewal) must signal lost within LostBound after its
// lease could no longer be renewed, if the holder still holds it then.
//
// The lease of a hold could no longer be renewed from the earlier of: (a)
// when renewals are visible (the history holds extends), the completion of
// its last successful renewal (or of the grant) plus one TTL, once no
// successful renewal followed within a TTL; (b) the completion of an
// observer's read, while the client held the lease, that found the key
// gone or another owner's on a majority of the nodes, with no later read
// before the deadline finding it the holder's again. The deadline is that
// moment plus LostBound; a fault window in force then (a paused client
// renews nothing) moves it to the window's end plus LostBound. A lost
// signal after the deadline, while the holder still held, is late; none
// while it held, with the holder still holding after the deadline (its
// release or crash invoked later, or never), is never. A holder that
// stopped by the deadline is no violation, signalled or not. Each is a witness (witness.LostWitness), by key and hold.
//
// Skipped when the history holds no lost signal and the lock claims no
// renewal; timeliness is not judged (a note says so) when renewals are not
// visible and the history holds no observations.
func Lost(h history.Header, ops []history.Operation) Result {
	return lostWith(h, ops, nil)
}

// lostWith is Lost with the history's holds (measure.Holds(ops)) given; nil: it
// computes them when it needs them.
func lostWith(h history.Header, ops []history.Operation, hs []measure.Hold) Result {
	type lease struct {
		client     int
		key, token string
	}
	var losts, extends []history.Operation
	var end int64
	for _, op := range ops {
		if op.Kind != history.Probe && op.Kind != history.Observe {
			end = max(end, op.Complete)
		}
		if op.Client < 0 || !isWholeLock(op) {
			continue
		}
		switch op.Kind {
		case history.Lost:
			losts = append(losts, op)
		case history.Extend:
			extends = append(extends, op)
		}
	}
	if len(losts) == 0 && !h.Renewal {
		return Result{Status: Skipped, Message: "no lost signal in the history and the lock claims no renewal"}
	}
	// The ok outermost releases and the acquires stating the token, of
	// the leases some lost signal names (the only ones looked up).
	releases := map[lease][]history.Operation{}
	acquires := map[lease][]history.Operation{}
	if len(losts) > 0 {
		want := make(map[lease]bool, len(losts))
		for _, lo := range losts {
			want[lease{lo.Client, lo.Key, lo.Token}] = true
		}
		for _, op := range ops {
			if op.Client < 0 || !isWholeLock(op) {
				continue
			}
			l := lease{op.Client, op.Key, op.Token}
			if !want[l] {
				continue
			}
			switch {
			case op.Kind == history.Release && op.Result == history.OK && isOutermost(op):
				releases[l] = append(releases[l], op)
			case op.Kind == history.Acquire && op.Token != "":
				acquires[l] = append(acquires[l], op)
			}
		}
	}
	if hs == nil {
		hs = measure.Holds(ops)
	}
	holdOf := map[int64]measure.Hold{}
	if len(losts) > 0 {
		for _, hd := range hs {
			holdOf[hd.Hold] = hd
		}
	}
	var found []witness.LostWitness
	// Lost for a released lease.
	for _, lo := range losts {
		l := lease{lo.Client, lo.Key, lo.Token}
		var rel *history.Operation
		for i, r := range releases[l] {
			if r.Complete < lo.Invoke && (rel == nil || r.Complete > rel.Complete) {
				rel = &releases[l][i]
			}
		}
		if rel == nil {
			continue
		}
		again := false
		for _, a := range acquires[l] {
			again = again || a.Invoke > rel.Complete && a.Invoke <= lo.Invoke
		}
		if !again {
			found = append(found, witness.LostWitness{Key: lo.Key, Kind: witness.LostAfterRelease, Hold: refOf(holdOf[rel.Hold]), Lost: opRef(lo), Release: opRef(*rel)})
		}
	}
	// Timeliness.
	timed, lapsed := 0, 0
	note := ""
	_, rounds := observations(ops, h.Nodes)
	visible := len(extends) > 0
	if h.Renewal && (visible || len(rounds) > 0) {
		ttl := int64(h.TTLMs) * int64(time.Millisecond)
		bound := int64(LostBound(time.Duration(ttl)))
		faults := measure.FaultWindows(ops)
		renewals := map[lease][]history.Operation{} // ok extends by lease
		for _, e := range extends {
			if e.Result == history.OK {
				l := lease{e.Client, e.Key, e.Token}
				renewals[l] = append(renewals[l], e)
			}
		}
		lostOf := map[lease][]history.Operation{}
		for _, lo := range losts {
			l := lease{lo.Client, lo.Key, lo.Token}
			lostOf[l] = append(lostOf[l], lo)
		}
		ends := holdEnds(ops)
		for _, hd := range hs {
			l := lease{hd.Client, hd.Key, hd.Token}
			held, ok := ends[hd.Hold]
			if !ok {
				held = end // it never stopped holding
			}
			since, why := int64(-1), ""
			if visible {
				since, why = lapse(hd, renewals[l], held, ttl)
			}
			if t, ok := seenLost(hd, rounds[hd.Key], held, bound); ok && (since < 0 || t < since) {
				since, why = t, "the observer read the key gone or another owner's"
			}
			timed++
			if since < 0 {
				continue
			}
			lapsed++
			deadline := deadlineAfter(since, bound, faults)
			if held <= deadline {
				continue // the holder stopped in time, signalled or not
			}
			var sig *history.Operation // the first lost signal of the hold
			for i, lo := range lostOf[l] {
				if lo.Invoke >= hd.AcquireInvoke && lo.Invoke <= held && (sig == nil || lo.Invoke < sig.Invoke) {
					sig = &lostOf[l][i]
				}
			}
			w := witness.LostWitness{Key: hd.Key, Hold: refOf(hd), SinceNs: since, DeadlineNs: deadline, Evidence: why}
			switch {
			case sig == nil:
				w.Kind, w.HeldUntilNs = witness.LostNever, held
				found = append(found, w)
			case sig.Invoke > deadline:
				w.Kind, w.Lost = witness.LostLate, opRef(*sig)
				found = append(found, w)
			}
		}
		note = fmt.Sprintf("; %d of %s could no longer be renewed at some point (bound: TTL + max(TTL/2, 50 ms) after)", lapsed, count(timed, "renewed hold"))
	} else if h.Renewal {
		note = "; timeliness not judged: renewals are not visible (no extends) and the history holds no observations"
	}
	sort.SliceStable(found, func(i, j int) bool {
		if found[i].Key != found[j].Key {
			return found[i].Key < found[j].Key
		}
		return found[i].Hold.AcquireInvokeNs < found[j].Hold.AcquireInvokeNs
	})
	var r Result
	r.Violations = len(found)
	r.Details = detailsOf(found, r.Violations)
	if r.Violations > 0 {
		kinds := map[witness.LostWitnessKind]int{}
		for _, w := range found {
			kinds[w.Kind]++
		}
		r.Status = Violated
		r.Witnesses = witness.Witnesses{Lost: keep(found), Total: witness.WitnessCounts{Lost: r.Violations}}
		r.Message = fmt.Sprintf("%d lost signals for a released lease, %d late, %d never signalled%s",
			kinds[witness.LostAfterRelease], kinds[witness.LostLate], kinds[witness.LostNever], note)
		return r
	}
	r.Status = OK
	r.Message = fmt.Sprintf("no lost signal for a released lease (%s)%s", count(len(losts), "lost signal"), note)
	return r
}

// holdEnds returns, per hold id, when the hold stopped holding: the
// earliest invoke of its outermost release or its crash (measure.Hold.EndOfUse
// caps at both, but also at the last resource operation, which does not
// end a hold). Holds with neither are absent.
func holdEnds(ops []history.Operation) map[int64]int64 {
	m := map[int64]int64{}
	for _, op := range ops {
		if op.Hold == 0 || op.Client < 0 || !isWholeLock(op) ||
			!(op.Kind == history.Release && isOutermost(op) || op.Kind == history.Crash) {
			continue
		}
		if t, ok := m[op.Hold]; !ok || op.Invoke < t {
			m[op.Hold] = op.Invoke
		}
	}
	return m
}

// lapse is when hold hd's lease could no longer be renewed by visible
// renewals: the first completion (of the grant or of an ok renewal
// renewals of its token) not followed, within ttl, by the invoke of
// another ok renewal while it was held, plus ttl; -1 when renewals kept
// the lease alive until held.
func lapse(hd measure.Hold, renewals []history.Operation, held, ttl int64) (int64, string) {
	last := hd.AcquireComplete
	var rs []history.Operation
	for _, e := range renewals {
		if e.Invoke >= hd.AcquireInvoke && e.Invoke <= held {
			rs = append(rs, e)
		}
	}
	sort.Slice(rs, func(i, j int) bool { return rs[i].Invoke < rs[j].Invoke })
	what := "the grant"
	for _, e := range rs {
		if e.Invoke > last+ttl {
			break
		}
		last, what = max(last, e.Complete), "the last successful renewal"
	}
	if last+ttl >= held {
		return -1, ""
	}
	return last + ttl, fmt.Sprintf("no successful renewal within a TTL of %s at %s ms", what, ms(last))
}

// seenLost is the completion of the first observer's read, while hold hd
// was held, that found its key gone or another owner's on a majority of
// the nodes, unless a later read before that moment plus bound found the
// holder's token again; ok false when there is none.
func seenLost(hd measure.Hold, rs []round, held, bound int64) (int64, bool) {
	for i := readAfter(rs, hd.AcquireComplete); i < len(rs); i++ {
		r := rs[i]
		if r.complete >= held {
			break
		}
		tok, known := r.heldBy()
		if !known || tok == hd.Token || !r.gone() && tok == "" {
			continue // no majority answered, the holder's, or split
		}
		back := false
		for _, later := range rs[i+1:] {
			if later.invoke > r.complete+bound {
				break
			}
			back = back || later.holds(hd.Token)
		}
		if !back {
			return r.complete, true
		}
	}
	return 0, false
}

// deadlineAfter is since plus bound, moved to a fault window's end plus
// bound for every window in force before that deadline and ending after
// since (faults in order of start).
func deadlineAfter(since, bound int64, faults []measure.FaultWindow) int64 {
	d := since + bound
	for _, f := range faults {
		if f.Start <= d && f.End > since {
			d = max(d, f.End+bound)
		}
	}
	return d
}
