package checker

import (
	"sort"
	"strings"

	"github.com/lockbench/lockbench/history"
)

// round is one pass of the server-state observer over one key: the reads
// of that key on every node that share an Invoke (history.Observe), but
// for reads on replicas (which copy their primary's keys).
type round struct {
	key string
	// invoke is the pass's start; complete the latest completion of its
	// reads, ns since run start.
	invoke, complete int64
	// nodes is the number of nodes a majority is counted over: the lock's
	// (history.Header.Nodes), else the round's reads that are not on a
	// replica, answered or not.
	nodes int
	// reads are the answered reads (result ok) not on a replica.
	reads []history.Operation
}

// holders counts, per token, the nodes whose answered read found it.
func (r round) holders() map[string]int {
	m := map[string]int{}
	for _, op := range r.reads {
		if op.Token != "" {
			m[op.Token]++
		}
	}
	return m
}

// majority reports whether n of the round's nodes are more than half of them.
func (r round) majority(n int) bool { return 2*n > r.nodes }

// answered reports whether a majority of the round's nodes answered.
func (r round) answered() bool { return r.majority(len(r.reads)) }

// holds reports whether a majority of the nodes held token.
func (r round) holds(token string) bool {
	n := 0
	for _, op := range r.reads {
		if op.Token == token {
			n++
		}
	}
	return r.majority(n)
}

// heldBy returns the token a majority of the nodes held ("" if none: the
// key was gone or split), and whether a majority answered at all.
func (r round) heldBy() (token string, known bool) {
	for t, n := range r.holders() {
		if r.majority(n) {
			return t, true
		}
	}
	return "", r.answered()
}

// gone reports whether a majority of the nodes answered that the key is
// absent: nobody holds the lock.
func (r round) gone() bool {
	n := 0
	for _, op := range r.reads {
		if op.Token == "" {
			n++
		}
	}
	return r.majority(n)
}

// onReplica reports whether an Observe operation read a replica.
func onReplica(op history.Operation) bool {
	return strings.HasPrefix(op.Note, history.ObservedOnReplica)
}

// observations groups a history's Observe operations into rounds per key,
// each key's rounds in order of invoke; keys in order. A majority is
// counted over lockNodes nodes (history.Header.Nodes), over each round's
// reads when it is 0. nil when the history holds none.
func observations(ops []history.Operation, lockNodes int) (keys []string, byKey map[string][]round) {
	type id struct {
		key    string
		invoke int64
	}
	idx := map[id]int{}
	var rs []round
	for _, op := range ops {
		if op.Kind != history.Observe {
			continue
		}
		k := id{op.Key, op.Invoke}
		i, ok := idx[k]
		if !ok {
			i = len(rs)
			idx[k] = i
			rs = append(rs, round{key: op.Key, invoke: op.Invoke})
		}
		r := &rs[i]
		r.complete = max(r.complete, op.Complete)
		if onReplica(op) {
			continue
		}
		r.nodes++
		if op.Result == history.OK {
			r.reads = append(r.reads, op)
		}
	}
	if lockNodes > 0 {
		for i := range rs {
			rs[i].nodes = lockNodes
		}
	}
	if len(rs) == 0 {
		return nil, nil
	}
	byKey = map[string][]round{}
	for _, r := range rs {
		byKey[r.key] = append(byKey[r.key], r)
	}
	for k, v := range byKey {
		sort.SliceStable(v, func(i, j int) bool { return v[i].invoke < v[j].invoke })
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys, byKey
}

// readAfter returns the index of the first round of rs (ordered by invoke)
// invoked after t, or len(rs).
func readAfter(rs []round, t int64) int {
	return sort.Search(len(rs), func(i int) bool { return rs[i].invoke > t })
}

// isClientOp reports whether op is a client's whole-lock operation of kind k.
func isClientOp(op history.Operation, k history.Kind) bool {
	return op.Kind == k && op.Client >= 0 && isWholeLock(op)
}

// isWholeLock reports whether op is a whole-lock operation (not a per-node
// call of a quorum strategy).
func isWholeLock(op history.Operation) bool { return op.Node == "" }

// isOutermost reports whether a lock operation bounds a hold: depth 1, or 0
// for non-reentrant strategies.
func isOutermost(op history.Operation) bool { return op.Depth <= 1 }

// isClientLockCall reports whether op is a client's outermost whole-lock
// call, the lock operations measure.Evidence counts.
func isClientLockCall(op history.Operation) bool {
	return op.Client >= 0 && isWholeLock(op) && isOutermost(op)
}
