package checker

import (
	"sort"

	"github.com/lockbench/lockbench/history"
)

// Grant is one grant of a history to a client.
type Grant struct {
	// Client is the logical client the lock was granted to.
	Client int
	// AtNs is when the granting acquire completed, in ns since the run
	// started.
	AtNs int64
	// LatencyMs is the acquire latency, in ms: from the client's first
	// attempt after its previous grant to this grant, retries and the
	// backoff between them included.
	LatencyMs float64
}

// Grants returns the grants of the clients in a history, in completion
// order (outermost acquires with result ok; per-node calls, nested
// acquires and the harness's probes left out), each with its acquire
// latency. A client's attempts are taken in invoke order, so the file's
// order of lines does not matter.
func Grants(ops []history.Operation) []Grant {
	acq := make([]history.Operation, 0, len(ops)/4)
	for _, op := range ops {
		if op.Kind == history.Acquire && op.Depth <= 1 && op.Client >= 0 && op.Node == "" {
			acq = append(acq, op)
		}
	}
	sort.SliceStable(acq, func(i, j int) bool { return acq[i].Invoke < acq[j].Invoke })
	first := map[int]int64{}
	var out []Grant
	for _, op := range acq {
		t, ok := first[op.Client]
		if !ok {
			t = op.Invoke
		}
		if op.Result == history.OK {
			out = append(out, Grant{Client: op.Client, AtNs: op.Complete, LatencyMs: float64(op.Complete-t) / 1e6})
			delete(first, op.Client)
		} else {
			first[op.Client] = t
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].AtNs < out[j].AtNs })
	return out
}
