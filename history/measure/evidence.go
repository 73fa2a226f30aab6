package measure

import (
	"fmt"
	"sort"

	"github.com/lockbench/lockbench/history"
)

// Evidence counts what a run's verdicts rest on. It holds counts only; the
// rules that call too little evidence inconclusive are the caller's (e.g.
// `e.ChancesToOverlap == 0`: exclusion had nothing to break;
// `e.Faults > 0 && e.FaultsLanded == 0`: no fault hit its target;
// `e.UnknownShare() > 0.5`: most outcomes unknown).
//
// Lock operations counted are the clients' whole-lock calls (Client >= 0,
// no per-node calls of a quorum strategy, no post-run probes) at the
// outermost depth (Depth <= 1).
type Evidence struct {
	// Holds is the number of holds (see Holds): successful outermost
	// acquires. Nested acquires of a reentrant lock are not holds.
	Holds int `json:"holds"`
	// Keys is the number of distinct keys held at least once.
	Keys int `json:"keys"`
	// Clients is the number of distinct clients that held a key at least
	// once.
	Clients int `json:"clients"`
	// ChancesToOverlap is the number of holds during which another client
	// tried the same key: holds H for which some acquire attempt A (any
	// result) of the same key by a different client has A.Invoke <=
	// H.EndOfUse and A.Complete >= H.AcquireComplete, i.e. the attempt was
	// in flight at some instant of [H's acquire completion, H's end of use]
	// (closed interval, ns since run start). A hold nobody else tried
	// during could not have overlapped another; an exclusion check with no
	// chance to overlap had nothing to break.
	ChancesToOverlap int `json:"chances_to_overlap"`
	// Acquires counts the outermost acquire attempts by result.
	Acquires OutcomeCounts `json:"acquires"`
	// Releases counts the outermost release calls by result.
	Releases OutcomeCounts `json:"releases"`
	// ResourceReads and ResourceWrites count the protected resource's
	// operations (any result); ResourceRejected those rejected by the
	// fencing check (result fail), ResourceUnknown those with an unknown
	// outcome (info).
	ResourceReads    int `json:"resource_reads"`
	ResourceWrites   int `json:"resource_writes"`
	ResourceRejected int `json:"resource_rejected"`
	ResourceUnknown  int `json:"resource_unknown"`
	// Faults is the number of nemesis operations (fault windows) recorded;
	// FaultsLanded and FaultsMissed those whose Landing says the fault hit
	// its target or found nothing to hit. The rest (Faults - FaultsLanded -
	// FaultsMissed, see FaultsUnknown) could not tell.
	Faults       int `json:"faults"`
	FaultsLanded int `json:"faults_landed"`
	FaultsMissed int `json:"faults_missed"`
	// Probes is the number of post-run liveness probes.
	Probes int `json:"probes"`
	// AcquireTimeouts is the number of outermost acquires with an unknown
	// outcome (info) whose error is a timeout (see IsTimeout): the whole
	// call ran out of time. The other info acquires failed otherwise
	// (e.g. a refused connection).
	AcquireTimeouts int `json:"acquire_timeouts"`
	// NodeAcquires counts a quorum strategy's per-node acquire calls (Node
	// set, clients only) by result; NodeTimeouts those with an unknown
	// outcome whose error is a timeout. Both are 0 for strategies that
	// record no per-node calls (single-node locks, and libraries that hide
	// them, such as redsync).
	NodeAcquires OutcomeCounts `json:"node_acquires"`
	NodeTimeouts int           `json:"node_timeouts"`
	// Nodes is the number of distinct nodes named by per-node calls (0:
	// none recorded); a quorum is Nodes/2+1.
	Nodes int `json:"nodes"`
	// SplitVotes is the number of outermost acquires that did not grant
	// (fail or info) although at least one but fewer than a quorum of the
	// per-node acquires made within the call (same client and key, invoked
	// between the call's invoke and complete) succeeded: the nodes voted
	// for different clients. 0 without per-node calls.
	SplitVotes int `json:"split_votes"`
	// Observations counts the server-state observer's reads
	// (history.Observe) by result: ok answered, info not (Fail unused).
	// All 0 for a history without them (a lock on etcd or ZooKeeper, or
	// from another tool).
	Observations OutcomeCounts `json:"observations"`
	// FailedAcquiresObserved is how many of the outermost acquires that
	// failed (Acquires.Fail) were followed, within TTL/2 of their
	// completion, by a read of their key that a majority of the nodes
	// answered: the acquires whose orphan, had they left one, the
	// observer would have seen (it lives about a TTL).
	FailedAcquiresObserved int `json:"failed_acquires_observed"`
	// ObservedTokens is the number of distinct tokens the observer found
	// on the servers; ObservedKnownTokens those the history knows (a
	// token an acquire returned or stated it tried). None known out of
	// some means the lock's tokens are not the values it stores: the
	// checks that match them (orphans, failure reasons, lost, counts)
	// have nothing to match.
	ObservedTokens      int `json:"observed_tokens"`
	ObservedKnownTokens int `json:"observed_known_tokens"`
	// ReasonsStated counts the releases and extends that failed stating
	// expired or taken, outside server fault windows (ReasonFigures);
	// ReasonsJudged those with an answered observer's read of their key
	// before the call, which the reasons check holds them against. 0 for a
	// history without observations.
	ReasonsStated int `json:"reasons_stated,omitempty"`
	ReasonsJudged int `json:"reasons_judged,omitempty"`
}

// OutcomeCounts counts operations by result.
type OutcomeCounts struct {
	OK   int `json:"ok"`
	Fail int `json:"fail"`
	// Info counts operations with an unknown outcome.
	Info int `json:"info"`
}

// Total is OK + Fail + Info.
func (c OutcomeCounts) Total() int { return c.OK + c.Fail + c.Info }

// add counts one result.
func (c *OutcomeCounts) add(r history.Result) {
	switch r {
	case history.OK:
		c.OK++
	case history.Fail:
		c.Fail++
	case history.Info:
		c.Info++
	}
}

// UnknownShare is the share (0..1) of outermost acquire attempts whose
// outcome is unknown (info); 0 when there were none.
func (e Evidence) UnknownShare() float64 {
	if n := e.Acquires.Total(); n > 0 {
		return float64(e.Acquires.Info) / float64(n)
	}
	return 0
}

// FaultsUnknown is the number of fault windows whose nemesis could not tell
// whether the fault hit its target.
func (e Evidence) FaultsUnknown() int { return e.Faults - e.FaultsLanded - e.FaultsMissed }

// isClientLockCall reports whether op is a client's outermost whole-lock
// call, the lock operations Evidence counts.
func isClientLockCall(op history.Operation) bool {
	return op.Client >= 0 && isWholeLock(op) && isOutermost(op)
}

// EvidenceOf counts the evidence in a history (see Evidence). hs are the
// history's holds (Holds(ops)), given by a caller that has them already;
// nil computes them. It runs in O(n log n) for n operations.
func EvidenceOf(ops []history.Operation, hs []Hold) Evidence {
	if hs == nil {
		hs = Holds(ops)
	}
	var e Evidence
	attempts := map[string][]attempt{}
	for _, op := range ops {
		switch op.Kind {
		case history.Acquire:
			if isClientLockCall(op) {
				e.Acquires.add(op.Result)
				attempts[op.Key] = append(attempts[op.Key], attempt{op.Invoke, op.Complete, op.Client})
			}
		case history.Release:
			if isClientLockCall(op) {
				e.Releases.add(op.Result)
			}
		case history.Read, history.Write:
			if op.Kind == history.Read {
				e.ResourceReads++
			} else {
				e.ResourceWrites++
			}
			switch op.Result {
			case history.Fail:
				e.ResourceRejected++
			case history.Info:
				e.ResourceUnknown++
			}
		case history.Nemesis:
			e.Faults++
			switch op.Landing {
			case history.Landed:
				e.FaultsLanded++
			case history.Missed:
				e.FaultsMissed++
			}
		case history.Probe:
			e.Probes++
		case history.Observe:
			e.Observations.add(op.Result)
		}
	}
	e.Holds = len(hs)
	clients := map[int]bool{}
	keys, byKey := HoldsByKey(hs)
	e.Keys = len(keys)
	for _, h := range hs {
		clients[h.Client] = true
	}
	e.Clients = len(clients)
	for _, k := range keys {
		e.ChancesToOverlap += chances(hs, byKey[k], attempts[k])
	}
	refusals(&e, ops)
	return e
}

// attempt is an acquire attempt as chances needs it.
type attempt struct {
	invoke, complete int64
	client           int
}

// chances counts the holds idx (of one key) during which another client's
// attempt (of the same key) was in flight: attempt.invoke <= EndOfUse and
// attempt.complete >= AcquireComplete. Holds are taken by end of use and
// attempts by invoke; among the attempts invoked by a hold's end of use it
// keeps the latest completions of two distinct clients, enough to find the
// latest completion by a client other than the hold's.
func chances(hs []Hold, idx []int, as []attempt) int {
	sort.Slice(as, func(i, j int) bool { return as[i].invoke < as[j].invoke })
	order := append([]int(nil), idx...)
	sort.Slice(order, func(i, j int) bool { return hs[order[i]].EndOfUse < hs[order[j]].EndOfUse })
	best, second := attempt{complete: -1, client: -1}, attempt{complete: -1, client: -1}
	next, n := 0, 0
	for _, i := range order {
		h := hs[i]
		for ; next < len(as) && as[next].invoke <= h.EndOfUse; next++ {
			a := as[next]
			switch {
			case a.client == best.client:
				best.complete = max(best.complete, a.complete)
			case a.complete > best.complete:
				second, best = best, a
			case a.client == second.client:
				second.complete = max(second.complete, a.complete)
			case a.complete > second.complete:
				second = a
			}
		}
		other := best
		if best.client == h.Client {
			other = second
		}
		if other.client >= 0 && other.complete >= h.AcquireComplete {
			n++
		}
	}
	return n
}

// String is the evidence in one line, e.g. "265 holds by 16 clients on 1
// key, 265 with a chance to overlap; acquires 265 ok, 2651 fail, 20
// unknown (0.7%); 265 reads, 265 writes (0 rejected, 0 unknown); 1 fault
// (0 landed, 0 missed, 1 cannot tell)", followed, when there are any, by
// the acquires that timed out ("; 20 acquires timed out") and the per-node
// calls ("; per-node acquires on 5 nodes: 12 ok, 3 fail, 940 unknown (931
// timed out), 2 split votes").
func (e Evidence) String() string {
	s := fmt.Sprintf("%s by %s on %s, %d with a chance to overlap; acquires %d ok, %d fail, %d unknown (%.1f%%); %d reads, %d writes (%d rejected, %d unknown); %s (%d landed, %d missed, %d cannot tell)",
		count(e.Holds, "hold"), count(e.Clients, "client"), count(e.Keys, "key"), e.ChancesToOverlap,
		e.Acquires.OK, e.Acquires.Fail, e.Acquires.Info, 100*e.UnknownShare(),
		e.ResourceReads, e.ResourceWrites, e.ResourceRejected, e.ResourceUnknown,
		count(e.Faults, "fault"), e.FaultsLanded, e.FaultsMissed, e.FaultsUnknown())
	if e.AcquireTimeouts > 0 {
		s += fmt.Sprintf("; %s timed out", count(e.AcquireTimeouts, "acquire"))
	}
	if e.Nodes > 0 {
		n := e.NodeAcquires
		s += fmt.Sprintf("; per-node acquires on %s: %d ok, %d fail, %d unknown (%d timed out), %s",
			count(e.Nodes, "node"), n.OK, n.Fail, n.Info, e.NodeTimeouts, count(e.SplitVotes, "split vote"))
	}
	return s
}

// count writes n and noun, with an s unless n is 1: "1 key", "3 keys".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
