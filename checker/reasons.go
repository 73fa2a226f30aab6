package checker

import (
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/lockbench/lockbench/checker/witness"
	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/history/measure"
)

// What a key may hold on one node while a call runs (a bit set).
const (
	mayGone  = 1 << iota // no key
	mayOwn               // the caller's token
	mayOther             // another owner's token
)

// clientFaults are the fault windows (measure.FaultWindow.Name) that act on a
// client alone and change no server's state behind the history's back: a
// paused or slow client, a crashed one. Every other fault (a restart, a
// failover, a clock jump, a deleted key, a cut or slowed link that may
// deliver a command late) may, so a call during one is not judged.
var clientFaults = []string{"gc-pause", "long-cs", "crash-between", "client-pause", "slow-cs", "client-crash"}

// expirySlack absorbs the difference between the servers' expiry clock and
// the history's (the same machine: well under a millisecond) when a
// read's PTTL says a key had expired before a call.
const expirySlack = 2 * time.Millisecond

// ReasonFigures counts what the reasons check judged.
type ReasonFigures struct {
	// Stated counts the releases and extends that failed stating expired
	// or taken, outside server fault windows.
	Stated int
	// Judged counts those of them with an answered observer's read of
	// their key before the call: the evidence the check rests on.
	Judged int
}

// Reasons holds the reason a lock states for a failed release or extend
// against the server state (history.Reason; protocol 2 and the built-in
// strategies state them). "taken" says another owner's token held the key
// when the call ran; "expired" says the key was gone. The state is read
// from the observer's last answered pass over the key (history.Observe,
// replicas left out) that completed before the call was invoked, carried
// forward to the call's end by what the history allows:
//
//   - another owner's read token certainly went when its owner's release
//     of it completed ok after the read began and before the call;
//   - a read token goes (the key may be gone) when its PTTL may have run
//     out before the call ended, and certainly went when it ran out, with
//     expirySlack to spare, before the call began and no renewal of it
//     could have moved it (an extend of that token in between, or a lock
//     that claims renewal and renews out of the history's sight);
//   - any release of the key in between may have deleted it;
//   - another owner may hold it after any acquire of the key with another
//     token in between (granted, unless its owner released it ok before
//     the call; unknown: then up to a TTL after it returned; refused too
//     on a lock of several nodes, which may leave a partial acquire
//     behind until it undoes it).
//
// A call during a server fault window (anything but clientFaults) is not
// judged. "taken" is a lie when no node could hold another owner's token
// (every node answered the read); "expired" when no node could be
// without the key. Each lie is a witness (witness.ReasonWitness), in history
// order. Reasons unavailable, cancelled and unknown are not judged: the
// observer reads state, not reachability.
//
// Skipped when no release or extend states expired or taken, when the
// history holds no observations, or with shared keys (Header.SharedKeys:
// other hosts' acquires and releases, which could explain any state, are
// not in the history). The figures count the calls judged (an
// evidence rule of validate asks for enough of them).
func Reasons(h history.Header, ops []history.Operation) (Result, ReasonFigures) {
	type reach struct {
		from, to int64
		client   int
		token    string
		result   history.Result
	}
	type lease struct {
		client     int
		key, token string
	}
	// The calls to judge first: most histories have none, and the maps
	// below cost a pass over every operation and its allocations.
	var stated []history.Operation
	for _, op := range ops {
		if op.Client >= 0 && isWholeLock(op) && (op.Kind == history.Release || op.Kind == history.Extend) && op.Result != history.OK &&
			(op.Reason == history.ReasonTaken || op.Reason == history.ReasonExpired) {
			stated = append(stated, op)
		}
	}
	if len(stated) == 0 {
		return Result{Status: Skipped, Message: "no release or extend failed stating expired or taken"}, ReasonFigures{}
	}
	if h.SharedKeys {
		return Result{Status: Skipped, Message: fmt.Sprintf("%d releases or extends stated expired or taken, not judged: with shared keys other hosts' clients acquire and release the keys out of this history's sight", len(stated))}, ReasonFigures{}
	}
	_, rounds := observations(ops, h.Nodes)
	if len(rounds) == 0 {
		return Result{Status: Skipped, Message: "no server-state observations in the history to hold the stated reasons against"}, ReasonFigures{}
	}
	acquires := map[string][]reach{} // key → whole-lock acquires of clients
	releases := map[string][]history.Operation{}
	freed := map[lease][]int64{}        // ok outermost releases by lease: completions
	freedTok := map[[2]string][]int64{} // the same by (key, token)
	extends := map[string][]history.Operation{}
	visible := false
	ttl := int64(h.TTLMs) * int64(time.Millisecond)
	for _, op := range ops {
		if op.Client < 0 || !isWholeLock(op) {
			continue
		}
		switch op.Kind {
		case history.Acquire:
			to := op.Complete
			if op.Result == history.Info {
				to += ttl
			}
			acquires[op.Key] = append(acquires[op.Key], reach{op.Invoke, to, op.Client, op.Token, op.Result})
		case history.Release:
			releases[op.Key] = append(releases[op.Key], op)
			if op.Result == history.OK && op.Token != "" && isOutermost(op) {
				l := lease{op.Client, op.Key, op.Token}
				freed[l] = append(freed[l], op.Complete)
				freedTok[[2]string{op.Key, op.Token}] = append(freedTok[[2]string{op.Key, op.Token}], op.Complete)
			}
		case history.Extend:
			visible = true
			extends[op.Key] = append(extends[op.Key], op)
		}
	}
	var faults []measure.FaultWindow
	for _, f := range measure.FaultWindows(ops) {
		if !slices.Contains(clientFaults, f.Name) {
			faults = append(faults, f)
		}
	}
	slack := int64(expirySlack)
	var found []witness.ReasonWitness
	var fig ReasonFigures
	for _, c := range stated {
		rs := rounds[c.Key]
		var r0 *round
		for i := readAfter(rs, c.Invoke) - 1; i >= 0; i-- {
			if rs[i].complete < c.Invoke && rs[i].answered() {
				r0 = &rs[i]
				break
			}
		}
		from := c.Invoke - ttl
		if r0 != nil {
			from = r0.invoke
		}
		if slices.ContainsFunc(faults, func(f measure.FaultWindow) bool { return f.Start <= c.Complete && f.End >= from }) {
			continue // a server fault between the read and the call's end: not judged
		}
		fig.Stated++
		if r0 == nil {
			continue
		}
		fig.Judged++
		in := func(inv, comp int64) bool { return inv < c.Complete && comp > from }
		several := r0.nodes > 1
		// What the history lets appear on any node meanwhile.
		var common int
		for _, a := range acquires[c.Key] {
			if !in(a.from, a.to) || a.result == history.Fail && !several {
				continue
			}
			if a.result == history.OK && a.token != "" && slices.ContainsFunc(freed[lease{a.client, c.Key, a.token}], func(t int64) bool { return t > a.to && t < c.Invoke }) {
				continue // its owner released it before the call
			}
			if a.token == c.Token {
				common |= mayOwn
			} else {
				common |= mayOther
			}
		}
		for _, r := range releases[c.Key] {
			if r.Invoke == c.Invoke && r.Client == c.Client {
				continue // the call itself
			}
			to := r.Complete
			if r.Result == history.Info {
				to += ttl
			}
			if in(r.Invoke, to) && (r.Result != history.Fail || several) {
				common |= mayGone
			}
		}
		renewed := func(token string) bool {
			if h.Renewal && !visible {
				return true // renewals the history does not show
			}
			return slices.ContainsFunc(extends[c.Key], func(e history.Operation) bool {
				to := e.Complete
				if e.Result == history.Info {
					to += ttl
				}
				return e.Token == token && in(e.Invoke, to)
			})
		}
		answered := map[string]bool{}
		anyGone, anyOther := false, false
		could := common
		for _, rd := range r0.reads {
			answered[rd.Node] = true
			may := common
			switch {
			case rd.Token == "":
				may |= mayGone
			default:
				held := mayOther
				if rd.Token == c.Token {
					held = mayOwn
				}
				expired := rd.Value >= 0 && r0.complete+rd.Value*int64(time.Millisecond)+slack < c.Invoke && !renewed(rd.Token)
				released := rd.Token != c.Token && slices.ContainsFunc(freedTok[[2]string{c.Key, rd.Token}], func(t int64) bool { return t > from && t < c.Invoke })
				if !expired && !released {
					may |= held
				}
				if rd.Value >= 0 && from+rd.Value*int64(time.Millisecond)-slack <= c.Complete {
					may |= mayGone
				}
			}
			anyGone = anyGone || may&mayGone != 0
			anyOther = anyOther || may&mayOther != 0
			could |= may
		}
		allAnswered := len(answered) >= r0.nodes
		lie := false
		switch c.Reason {
		case history.ReasonTaken:
			lie = allAnswered && !anyOther
		case history.ReasonExpired:
			lie = allAnswered && !anyGone
		}
		if !lie {
			continue
		}
		w := witness.ReasonWitness{Key: c.Key, Call: opRef(c), ReadNs: r0.invoke}
		for _, rd := range r0.reads {
			w.Reads = append(w.Reads, witness.ReasonRead{Node: rd.Node, Token: rd.Token, PTTLMs: rd.Value})
		}
		for _, s := range []struct {
			bit  int
			text string
		}{{mayGone, "gone"}, {mayOwn, "the caller's token"}, {mayOther, "another owner's token"}} {
			if could&s.bit != 0 {
				w.Could = append(w.Could, s.text)
			}
		}
		found = append(found, w)
	}
	sort.SliceStable(found, func(i, j int) bool { return found[i].Call.Invoke < found[j].Call.Invoke })
	var r Result
	r.Violations = len(found)
	r.Details = detailsOf(found, r.Violations)
	judged := fmt.Sprintf("%d of %d failed releases or extends stating expired or taken judged against the observer's reads", fig.Judged, len(stated))
	if r.Violations > 0 {
		r.Status = Violated
		r.Witnesses = witness.Witnesses{Reasons: keep(found), Total: witness.WitnessCounts{Reasons: r.Violations}}
		r.Message = fmt.Sprintf("%d failed releases or extends stated a reason the server state rules out (%s)", r.Violations, judged)
		return r, fig
	}
	r.Status = OK
	r.Message = fmt.Sprintf("no stated reason contradicted by the server state (%s)", judged)
	return r, fig
}
