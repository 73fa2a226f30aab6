package measure

import (
	"cmp"
	"slices"

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
	// The attempts as small records, sorted by invoke then file order
	// (what a stable sort by invoke gives) without moving operations.
	type attempt struct {
		invoke, complete int64
		client           int
		idx              int32
		ok               bool
	}
	n := 0
	for i := range ops {
		if op := &ops[i]; op.Kind == history.Acquire && op.Depth <= 1 && op.Client >= 0 && op.Node == "" {
			n++
		}
	}
	acq := make([]attempt, 0, n)
	for i := range ops {
		if op := &ops[i]; op.Kind == history.Acquire && op.Depth <= 1 && op.Client >= 0 && op.Node == "" {
			acq = append(acq, attempt{op.Invoke, op.Complete, op.Client, int32(i), op.Result == history.OK})
		}
	}
	slices.SortFunc(acq, func(a, b attempt) int {
		if c := cmp.Compare(a.invoke, b.invoke); c != 0 {
			return c
		}
		return cmp.Compare(a.idx, b.idx)
	})
	first := newClientTimes(acq, func(a attempt) int { return a.client })
	var out []Grant
	for _, a := range acq {
		t, ok := first.get(a.client)
		if !ok {
			t = a.invoke
		}
		if a.ok {
			out = append(out, Grant{Client: a.client, AtNs: a.complete, LatencyMs: float64(a.complete-t) / 1e6})
			first.del(a.client)
		} else {
			first.set(a.client, t)
		}
	}
	// Stable by completion: out is in invoke order, so its index breaks ties.
	type at struct {
		g Grant
		i int
	}
	byAt := make([]at, len(out))
	for i, g := range out {
		byAt[i] = at{g, i}
	}
	slices.SortFunc(byAt, func(a, b at) int {
		if c := cmp.Compare(a.g.AtNs, b.g.AtNs); c != 0 {
			return c
		}
		return cmp.Compare(a.i, b.i)
	})
	for i := range byAt {
		out[i] = byAt[i].g
	}
	return out
}

// clientTimes maps client ids to a time: a slice when the ids are small
// (lockbench's clients are 0..N-1), a map otherwise.
type clientTimes struct {
	dense []int64 // -1: absent
	m     map[int]int64
}

// maxDenseClient bounds the client ids clientTimes keeps in a slice.
const maxDenseClient = 1 << 16

func newClientTimes[T any](xs []T, client func(T) int) *clientTimes {
	top := -1
	for _, x := range xs {
		top = max(top, client(x))
	}
	if top >= maxDenseClient {
		return &clientTimes{m: map[int]int64{}}
	}
	d := make([]int64, top+1)
	for i := range d {
		d[i] = -1
	}
	return &clientTimes{dense: d}
}

func (c *clientTimes) get(client int) (int64, bool) {
	if c.m != nil {
		t, ok := c.m[client]
		return t, ok
	}
	t := c.dense[client]
	return t, t >= 0
}

func (c *clientTimes) set(client int, t int64) {
	if c.m != nil {
		c.m[client] = t
		return
	}
	if t < 0 { // a negative time cannot mark presence: move to the map
		c.m = map[int]int64{}
		for i, v := range c.dense {
			if v >= 0 {
				c.m[i] = v
			}
		}
		c.dense = nil
		c.m[client] = t
		return
	}
	c.dense[client] = t
}

func (c *clientTimes) del(client int) {
	if c.m != nil {
		delete(c.m, client)
		return
	}
	c.dense[client] = -1
}
