package measure

import (
	"sort"
	"strings"

	"github.com/lockbench/lockbench/history"
)

// This file counts why acquires did not grant: whole calls that timed
// out, per-node calls that timed out, and split votes of quorum
// strategies (Evidence's AcquireTimeouts, NodeAcquires, NodeTimeouts,
// Nodes and SplitVotes). Contention, an acquire refused because another
// client holds the key, is Evidence.Acquires.Fail.

// IsTimeout reports whether an operation's error text says it ran out of
// time: Go's context.DeadlineExceeded ("context deadline exceeded") and
// the net package's "i/o timeout", or any text naming a timeout.
func IsTimeout(errText string) bool {
	e := strings.ToLower(errText)
	return strings.Contains(e, "deadline exceeded") || strings.Contains(e, "timeout") || strings.Contains(e, "timed out")
}

// refusals fills e's refusal counts from ops. It runs in O(n log n).
func refusals(e *Evidence, ops []history.Operation) {
	type call struct {
		invoke, complete int64
		key              string
		granted          bool
	}
	type nodeCall struct {
		invoke int64
		key    string
		ok     bool
	}
	calls := map[int][]call{}
	perNode := map[int][]nodeCall{}
	nodes := map[string]bool{}
	for _, op := range ops {
		if op.Kind != history.Acquire || op.Client < 0 || !isOutermost(op) {
			continue
		}
		if op.Node != "" {
			e.NodeAcquires.add(op.Result)
			if op.Result == history.Info && IsTimeout(op.Error) {
				e.NodeTimeouts++
			}
			nodes[op.Node] = true
			perNode[op.Client] = append(perNode[op.Client], nodeCall{op.Invoke, op.Key, op.Result == history.OK})
			continue
		}
		if op.Result == history.Info && IsTimeout(op.Error) {
			e.AcquireTimeouts++
		}
		calls[op.Client] = append(calls[op.Client], call{op.Invoke, op.Complete, op.Key, op.Result == history.OK})
	}
	e.Nodes = len(nodes)
	if e.Nodes == 0 {
		return
	}
	quorum := e.Nodes/2 + 1
	for client, cs := range calls {
		ns := perNode[client]
		if len(ns) == 0 {
			continue
		}
		sort.Slice(cs, func(i, j int) bool { return cs[i].invoke < cs[j].invoke })
		sort.Slice(ns, func(i, j int) bool { return ns[i].invoke < ns[j].invoke })
		// A client makes one whole call at a time, so its calls do not
		// overlap: each per-node call belongs to the call whose span holds
		// its invoke.
		next := 0
		for _, c := range cs {
			for next < len(ns) && ns[next].invoke < c.invoke {
				next++
			}
			yes := 0
			for ; next < len(ns) && ns[next].invoke <= c.complete; next++ {
				if ns[next].key == c.key && ns[next].ok {
					yes++
				}
			}
			if !c.granted && yes >= 1 && yes < quorum {
				e.SplitVotes++
			}
		}
	}
}
