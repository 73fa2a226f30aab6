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

// orphanClass says what a token a key kept came from.
type orphanClass int

const (
	orphanOfFail orphanClass = iota // a failed acquire: a violation
	orphanOfInfo                    // an acquire with an unknown outcome: expected, a figure
)

// orphan is a token a key kept that no granted acquire returned, as the
// reads found it.
type orphan struct {
	class     orphanClass
	acquire   *history.Operation
	nodes     map[string]bool
	quorum    bool
	first     round
	last      round
	lastPTTL  int64
	goneNs    int64
	fromNs    int64
	excuse    string // why a fail-class orphan on a minority of nodes is no violation
	seenNodes []string
}

// Orphans reconciles every acquire that did not grant with the servers'
// state as the observer read it (history.Observe): a key that holds,
// after such an acquire returned, a token no granted acquire returned is
// an orphan, with how long the key kept it. After a definite fail it is a
// violation (the lock said "not done" and it was done: a hold the client
// does not know of), each a witness (witness.OrphanWitness), per key and token in
// order of first sight. After an unknown outcome (info) it is what "unknown"
// allows: counted in the figures (Orphans, LongestOrphanMs: keys blocked
// with no holder), not a violation.
//
// A token is attributed to the failed or unknown acquire that stated it
// (Operation.Token); a read while that acquire was still in flight counts
// for nothing (it may unlock before it returns). When the lock states no
// tokens, a token no acquire of the history returned or stated, read
// while no acquire of the key was in flight, comes from an acquire with an
// unknown outcome if one of the key was invoked before the read, and can
// only come from a failed one otherwise; unless no read of the run found a
// token the history knows (calibration: the lock's tokens are then not the
// values it stores, and nothing is attributed).
//
// For a lock on several nodes, a token held by a majority in one pass is
// the lock held; a token on fewer nodes (a partial acquire left behind)
// after a definite fail is excused when the lock's own per-node call to
// that node for that token had an unknown outcome (its unlock cannot have
// been sure to land; a replica promoted at a failover answers for the node
// it replaced, so a call with an unknown outcome covers it) or when a
// fault window overlaps the time from the
// acquire's invoke to the first read that found it.
//
// With shared keys (Header.SharedKeys: other client hosts used the keys
// too), a token no acquire of the history stated may be another host's
// and is not attributed; those stated are judged as above.
//
// Skipped when the history holds no observations.
func Orphans(h history.Header, ops []history.Operation) (Result, OrphanFigures) {
	keys, rounds := observations(ops, h.Nodes)
	if len(rounds) == 0 {
		return Result{Status: Skipped, Message: "no server-state observations in the history (lockbench records them for locks on Redis; locks on etcd or ZooKeeper are not observed)"}, OrphanFigures{}
	}
	granted := map[string]map[string]bool{} // key → tokens granted
	tried := map[string]map[string][]history.Operation{}
	acquires := map[string][]history.Operation{} // key → whole-lock acquires, by invoke
	nodeUnknown := map[[3]string]bool{}          // (key, token, node) → a per-node call of the lock had an unknown outcome
	promoted := promotedReplicas(ops)
	known := map[string]bool{}
	for _, op := range ops {
		if op.Kind != history.Acquire && op.Kind != history.Release || op.Client < 0 {
			continue
		}
		if !isWholeLock(op) {
			if op.Result == history.Info && op.Token != "" {
				nodeUnknown[[3]string{op.Key, op.Token, op.Node}] = true
			}
			continue
		}
		if op.Kind != history.Acquire {
			continue
		}
		acquires[op.Key] = append(acquires[op.Key], op)
		if op.Token == "" {
			continue
		}
		known[op.Token] = true
		if op.Result == history.OK {
			if granted[op.Key] == nil {
				granted[op.Key] = map[string]bool{}
			}
			granted[op.Key][op.Token] = true
			continue
		}
		if tried[op.Key] == nil {
			tried[op.Key] = map[string][]history.Operation{}
		}
		tried[op.Key][op.Token] = append(tried[op.Key][op.Token], op)
	}
	for _, as := range acquires {
		sort.SliceStable(as, func(i, j int) bool { return as[i].Invoke < as[j].Invoke })
	}
	calibrated := false
	for _, k := range keys {
		for _, r := range rounds[k] {
			for _, op := range r.reads {
				calibrated = calibrated || op.Token != "" && known[op.Token]
			}
		}
	}
	faults := measure.FaultWindows(ops)
	ttl := time.Duration(h.TTLMs) * time.Millisecond

	var found []witness.OrphanWitness
	var fig OrphanFigures
	uncalibrated, noTTL, foreign := 0, 0, 0
	for _, k := range keys {
		rs := rounds[k]
		byToken := map[string]*orphan{}
		var order []string
		for _, r := range rs {
			for t, n := range r.holders() {
				if granted[k][t] {
					continue
				}
				o := byToken[t]
				if o == nil {
					cls, a, ok := attribute(k, t, r, tried[k][t], acquires[k])
					if !ok {
						continue
					}
					if a == nil && !calibrated {
						uncalibrated++
						continue
					}
					if a == nil && h.SharedKeys {
						foreign++ // another host's client may have written it
						continue
					}
					o = &orphan{class: cls, acquire: a, nodes: map[string]bool{}, first: r, goneNs: -1}
					o.fromNs = r.invoke
					if a != nil {
						o.fromNs = a.Invoke
					}
					byToken[t] = o
					order = append(order, t)
				}
				o.last = r
				o.quorum = o.quorum || r.majority(n)
				for _, op := range r.reads {
					if op.Token == t {
						o.nodes[op.Node] = true
						o.lastPTTL = op.Value
					}
				}
			}
		}
		for _, t := range order {
			o := byToken[t]
			for _, r := range rs[readAfter(rs, o.last.invoke):] {
				if r.answered() && r.holders()[t] == 0 {
					o.goneNs = r.complete
					break
				}
			}
			for n := range o.nodes {
				o.seenNodes = append(o.seenNodes, n)
			}
			sort.Strings(o.seenNodes)
			w := witness.OrphanWitness{Key: k, Token: t, Acquire: o.acquire, Nodes: o.seenNodes, Quorum: o.quorum,
				FirstSeenNs: o.first.invoke, LastSeenNs: o.last.invoke, GoneNs: o.goneNs, PTTLMs: o.lastPTTL, FromNs: o.fromNs, ToNs: -1}
			switch {
			case o.goneNs >= 0:
				w.ToNs = o.goneNs
			case o.lastPTTL >= 0:
				w.ToNs = o.last.complete + o.lastPTTL*int64(time.Millisecond)
			}
			if o.class == orphanOfFail && !o.quorum {
				o.excuse = partialExcuse(k, t, o, nodeUnknown, promoted, faults, ttl)
			}
			if o.class == orphanOfFail && o.excuse == "" {
				found = append(found, w)
				continue
			}
			fig.Orphans++
			if w.ToNs >= 0 {
				fig.LongestOrphanMs = max(fig.LongestOrphanMs, float64(w.ToNs-w.FromNs)/1e6)
			} else {
				noTTL++
			}
		}
	}
	var r Result
	r.Violations = len(found)
	r.Details = detailsOf(found, r.Violations)
	note := ""
	if fig.Orphans > 0 {
		note = fmt.Sprintf("; %d orphans of acquires with an unknown outcome or excused partial ones, not violations", fig.Orphans)
		switch {
		case noTTL > 0 && fig.LongestOrphanMs > 0:
			note += fmt.Sprintf(" (longest kept %.0f ms; %d without a TTL)", fig.LongestOrphanMs, noTTL)
		case noTTL > 0:
			note += fmt.Sprintf(" (%d without a TTL)", noTTL)
		default:
			note += fmt.Sprintf(" (longest kept %.0f ms)", fig.LongestOrphanMs)
		}
	}
	if uncalibrated > 0 {
		note += fmt.Sprintf("; %d tokens read on the servers that no acquire returned not attributed (no read found a token the lock reported)", uncalibrated)
	}
	if foreign > 0 {
		note += fmt.Sprintf("; %d tokens read on the servers that no acquire of this history stated not attributed (shared keys: other hosts' clients write these keys)", foreign)
	}
	if r.Violations > 0 {
		r.Status = Violated
		r.Witnesses = witness.Witnesses{Orphans: keep(found), Total: witness.WitnessCounts{Orphans: r.Violations}}
		r.Message = fmt.Sprintf("%d tokens of acquires that said fail were held by the servers afterwards (a hold nobody knows of)%s", r.Violations, note)
		return r, fig
	}
	r.Status = OK
	r.Message = fmt.Sprintf("no key kept the token of an acquire that said fail, over %s%s", count(countReads(rounds), "read"), note)
	return r, fig
}

// OrphanFigures are the orphans the run shows that are no violation: keys
// that kept the token of an acquire with an unknown outcome (or of a
// partial acquire on a minority of nodes that the lock could not be sure
// to undo): a key blocked with no holder.
type OrphanFigures struct {
	// Orphans counts them (one per key and token).
	Orphans int `json:"orphans,omitempty"`
	// LongestOrphanMs is how long the longest one kept its key, in ms
	// (from the acquire's invoke to the read that found it gone, or the
	// last read's PTTL; orphans without a TTL left out).
	LongestOrphanMs float64 `json:"longest_orphan_ms,omitempty"`
}

// attribute says where token t, which no granted acquire of key k
// returned, read in round r, came from: the failed or unknown acquire that
// stated it (the latest invoked before the read), else, unattributed,
// class info when an acquire of k with an unknown outcome was invoked
// before the read and fail when only failed ones were. ok is false when
// the read says nothing: an acquire of the key was still in flight (it may
// undo its write before it returns), or no acquire came before it.
func attribute(k, t string, r round, stated, all []history.Operation) (orphanClass, *history.Operation, bool) {
	var a *history.Operation
	for i := range stated {
		if stated[i].Invoke <= r.complete {
			a = &stated[i]
		}
	}
	if a != nil {
		if a.Complete >= r.invoke {
			return 0, nil, false // in flight during the read
		}
		if a.Result == history.Fail {
			return orphanOfFail, opRef(*a), true
		}
		return orphanOfInfo, opRef(*a), true
	}
	info, fail := false, false
	for _, op := range all {
		if op.Invoke > r.complete {
			break
		}
		if op.Complete >= r.invoke && op.Result != history.OK {
			return 0, nil, false // an acquire of the key in flight during the read
		}
		switch op.Result {
		case history.Info:
			info = true
		case history.Fail:
			fail = true
		}
	}
	switch {
	case info:
		return orphanOfInfo, nil, true
	case fail:
		return orphanOfFail, nil, true
	}
	return 0, nil, false
}

// promotedReplicas returns the nodes read as a replica and later as a
// primary (a replica promoted at a failover, which then answers for the
// node it replaced under that node's name in the lock's calls).
func promotedReplicas(ops []history.Operation) map[string]bool {
	wasReplica, promoted := map[string]bool{}, map[string]bool{}
	for _, op := range ops {
		if op.Kind != history.Observe || op.Result != history.OK {
			continue
		}
		if onReplica(op) {
			wasReplica[op.Node] = true
		} else if wasReplica[op.Node] {
			promoted[op.Node] = true
		}
	}
	return promoted
}

// partialExcuse says why a failed acquire's token left on a minority of
// the nodes is no violation ("" when it is one): the lock's own per-node
// call for that token to every node that kept it had an unknown outcome
// (a promoted replica, see promotedReplicas, counts as the node of any
// such call),
// or a fault window overlaps [from, first read] (for an unattributed
// token: the TTL before the first read).
func partialExcuse(k, t string, o *orphan, nodeUnknown map[[3]string]bool, promoted map[string]bool, faults []measure.FaultWindow, ttl time.Duration) string {
	anyUnknown := false
	for u := range nodeUnknown {
		anyUnknown = anyUnknown || u[0] == k && u[1] == t
	}
	all, viaPromoted := true, false
	for n := range o.nodes {
		switch {
		case nodeUnknown[[3]string{k, t, n}]:
		case promoted[n] && anyUnknown:
			// A replica promoted at a failover answers for the node it
			// replaced, under that node's name in the lock's calls: the
			// lock's call with an unknown outcome may have reached it.
			viaPromoted = true
		default:
			all = false
		}
	}
	if all && viaPromoted {
		return "the lock's own call for it had an unknown outcome, and a replica promoted at a failover (which answers for the node it replaced) kept it"
	}
	if all {
		return "the lock's own call to each node that kept it had an unknown outcome"
	}
	from := o.fromNs
	if o.acquire == nil {
		from = o.first.complete - int64(ttl)
	}
	if slices.ContainsFunc(faults, func(f measure.FaultWindow) bool { return f.Start <= o.first.complete && f.End >= from }) {
		return "a fault window overlaps the acquire"
	}
	return ""
}

// countReads counts the answered reads of the rounds.
func countReads(rounds map[string][]round) int {
	n := 0
	for _, rs := range rounds {
		for _, r := range rs {
			n += len(r.reads)
		}
	}
	return n
}
