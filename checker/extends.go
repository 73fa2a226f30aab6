package checker

import (
	"fmt"
	"sort"

	"github.com/lockbench/lockbench/checker/witness"
	"github.com/lockbench/lockbench/history"
)

// Extends checks that no lease is extended after its release: an extend
// (a renewal, whatever its result) of a client's token on a key, invoked
// after that client's outermost release of the token on the key completed
// ok, is a violation, unless the client acquired the key again with the
// same token in between (a lock whose token is its owner's, such as a
// reentrant one). Each such extend is a witness (witness.ExtendWitness, with the
// release), in history order. Skipped when the history holds no extend
// (the lock renews nothing lockbench records).
func Extends(h history.Header, ops []history.Operation) Result {
	type lease struct {
		client     int
		key, token string
	}
	type event struct {
		at  int64
		op  history.Operation
		rel bool // an ok outermost release (else an acquire with the token)
	}
	// The extends first: most histories have none, and the events are
	// wanted only for the leases some extend names.
	var extends []history.Operation
	for _, op := range ops {
		if op.Client >= 0 && isWholeLock(op) && op.Token != "" && op.Kind == history.Extend {
			extends = append(extends, op)
		}
	}
	if len(extends) == 0 {
		return Result{Status: Skipped, Message: "no extends in the history: the lock renews nothing lockbench records"}
	}
	events := make(map[lease][]event, len(extends))
	for _, e := range extends {
		events[lease{e.Client, e.Key, e.Token}] = nil
	}
	for _, op := range ops {
		if op.Client < 0 || !isWholeLock(op) || op.Token == "" {
			continue
		}
		l := lease{op.Client, op.Key, op.Token}
		es, ok := events[l]
		if !ok {
			continue
		}
		switch {
		case op.Kind == history.Extend:
		case op.Kind == history.Release && op.Result == history.OK && isOutermost(op):
			events[l] = append(es, event{at: op.Complete, op: op, rel: true})
		case op.Kind == history.Acquire:
			events[l] = append(es, event{at: op.Invoke, op: op})
		}
	}
	for _, es := range events {
		sort.SliceStable(es, func(i, j int) bool { return es[i].at < es[j].at })
	}
	var found []witness.ExtendWitness
	for _, e := range extends {
		es := events[lease{e.Client, e.Key, e.Token}]
		// The last release or acquire of the lease before the extend.
		i := sort.Search(len(es), func(i int) bool { return es[i].at >= e.Invoke }) - 1
		if i >= 0 && es[i].rel {
			found = append(found, witness.ExtendWitness{Key: e.Key, Release: opRef(es[i].op), Extend: opRef(e)})
		}
	}
	var r Result
	r.Violations = len(found)
	r.Details = detailsOf(found, r.Violations)
	if r.Violations > 0 {
		r.Status = Violated
		r.Witnesses = witness.Witnesses{Extends: keep(found), Total: witness.WitnessCounts{Extends: r.Violations}}
		r.Message = fmt.Sprintf("%d of %d extends were invoked after their lease's release completed ok (renewal outlived release)", r.Violations, len(extends))
		return r
	}
	r.Status = OK
	r.Message = fmt.Sprintf("no extend after its lease's release, over %s", count(len(extends), "extend"))
	return r
}
