// Package synth generates seeded synthetic histories of a correct lock
// and protected resource, with violations planted on request: the input of
// the checker's benchmarks and of lockbench perf's checker measurement
// (docs/performance.md), and of tests that need a large history of known
// verdict. Nothing here runs a server.
package synth

import (
	"container/heap"
	"fmt"
	"math/rand/v2"
	"sort"

	"github.com/lockbench/lockbench/history"
)

// Spec describes a synthetic history.
type Spec struct {
	// Ops is how many operations to generate (about: the last hold is
	// completed, and planted holds add 4 operations each).
	Ops int
	// Keys and Clients are the lock keys (lb:k0..) and closed-loop clients.
	Keys, Clients int
	// Plants is how many overlapping holds to plant, each also a lost update.
	Plants int
	// Seed seeds every random choice: the same Spec gives the same history.
	Seed uint64
	// Blocking makes an acquire that finds the key held wait for it (a
	// blocking lock call) instead of failing: every acquire is a hold, and
	// with many clients on a key up to all of them wait at once.
	Blocking bool
}

// client is one simulated client: its clock (ns) and stream.
type client struct {
	id, stream int
	t          int64
	idx        int // heap index
}

type clientHeap []*client

func (h clientHeap) Len() int { return len(h) }
func (h clientHeap) Less(i, j int) bool {
	if h[i].t != h[j].t {
		return h[i].t < h[j].t
	}
	return h[i].id < h[j].id
}
func (h clientHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i]; h[i].idx = i; h[j].idx = j }
func (h *clientHeap) Push(x any)   { c := x.(*client); c.idx = len(*h); *h = append(*h, c) }
func (h *clientHeap) Pop() (x any) { old := *h; x = old[len(old)-1]; *h = old[:len(old)-1]; return x }
func (h clientHeap) fix(c *client) { heap.Fix(&h, c.idx) }

// keyState is a simulated lock key: until when it is held (the release's
// linearisation point of its latest holder) and its resource's value.
type keyState struct {
	heldUntil int64
	value     int64
}

// Generate generates a history of a correct lock and resource with
// realistic concurrency: closed-loop clients, processed in order of their
// clocks, each picks a key uniformly, acquires (round trip 50–300 µs,
// linearised at its middle; granted iff the key's previous holder released
// before that point, otherwise a failed acquire and a 20–200 µs backoff),
// reads and writes the resource (value+1) in a 5–50 µs critical section
// and releases (with Spec.Blocking, an acquire that finds the key held
// waits until it is free instead). 1% of releases have an unknown outcome (info; the client
// moves to a new stream), and 0.5% of acquires too (not holds). Then
// Spec.Plants intruder holds are planted, each inside another hold's
// critical section on the same key, reading the value that hold read and
// writing it +1 before it does: exactly one overlapping pair and one lost
// update each. It returns the header and the operations in completion
// order, and how many violations were planted.
func Generate(s Spec) (history.Header, []history.Operation, int) {
	r := rand.New(rand.NewPCG(s.Seed, uint64(s.Keys)<<32|uint64(s.Clients)))
	h := history.Header{SchemaVersion: history.SchemaVersion, Strategy: "synthetic", Scenario: "bench", Clients: s.Clients, Keys: s.Keys, TTLMs: 100, Fencing: "off"}
	keys := make([]keyState, s.Keys)
	names := make([]string, s.Keys)
	for i := range names {
		names[i] = fmt.Sprintf("lb:k%d", i)
	}
	cs := make(clientHeap, s.Clients)
	for i := range cs {
		cs[i] = &client{id: i, stream: i, t: r.Int64N(100_000), idx: i}
	}
	heap.Init(&cs)
	nextStream := s.Clients
	ops := make([]history.Operation, 0, s.Ops+8)
	type cand struct{ acq, read, write int } // indexes of a hold's ops
	var holds []cand
	var hold int64
	dur := func(lo, hi int64) int64 { return lo + r.Int64N(hi-lo+1) }
	for len(ops) < s.Ops {
		c := cs[0]
		k := r.IntN(s.Keys)
		key := names[k]
		inv := c.t
		rt := dur(50_000, 300_000)
		lin := inv + rt/2
		done := inv + rt
		if r.IntN(200) == 0 { // unknown outcome: not a hold
			ops = append(ops, history.Operation{Client: c.id, Stream: c.stream, Kind: history.Acquire, Key: key, Invoke: inv, Complete: done, Result: history.Info, Error: "i/o timeout"})
			c.stream = nextStream
			nextStream++
			c.t = done + dur(20_000, 200_000)
			cs.fix(c)
			continue
		}
		if lin < keys[k].heldUntil && s.Blocking {
			lin = keys[k].heldUntil + dur(1_000, 20_000)
			done = lin + rt/2
		}
		if lin < keys[k].heldUntil {
			ops = append(ops, history.Operation{Client: c.id, Stream: c.stream, Kind: history.Acquire, Key: key, Invoke: inv, Complete: done, Result: history.Fail, Error: "held"})
			c.t = done + dur(20_000, 200_000)
			cs.fix(c)
			continue
		}
		hold++
		ai := len(ops)
		ops = append(ops, history.Operation{Client: c.id, Stream: c.stream, Kind: history.Acquire, Key: key, Hold: hold, Token: fmt.Sprint(hold), Invoke: inv, Complete: done, Result: history.OK})
		t := done + dur(1_000, 5_000)
		v := keys[k].value
		ri := len(ops)
		ops = append(ops, history.Operation{Client: c.id, Stream: c.stream, Kind: history.Read, Key: key, Hold: hold, Value: v, Invoke: t, Complete: t + 2_000, Result: history.OK})
		t += 2_000 + dur(5_000, 50_000)
		wi := len(ops)
		ops = append(ops, history.Operation{Client: c.id, Stream: c.stream, Kind: history.Write, Key: key, Hold: hold, Prev: v, Value: v + 1, Invoke: t, Complete: t + 2_000, Result: history.OK})
		keys[k].value = v + 1
		t += 2_000 + dur(1_000, 5_000)
		rt = dur(50_000, 300_000)
		rel := history.Operation{Client: c.id, Stream: c.stream, Kind: history.Release, Key: key, Hold: hold, Token: fmt.Sprint(hold), Invoke: t, Complete: t + rt, Result: history.OK}
		keys[k].heldUntil = t + rt/2
		if r.IntN(100) == 0 {
			rel.Result, rel.Error = history.Info, "i/o timeout"
			c.stream = nextStream
			nextStream++
		}
		ops = append(ops, rel)
		holds = append(holds, cand{ai, ri, wi})
		c.t = t + rt + dur(0, 10_000)
		cs.fix(c)
	}
	// Plant intruders in distinct holds, spread over the history.
	planted := 0
	for p := 0; p < s.Plants && len(holds) > 0; p++ {
		hd := holds[(p*len(holds))/s.Plants+len(holds)/(2*s.Plants)]
		rd, wr := ops[hd.read], ops[hd.write]
		t := rd.Complete + 100
		hold++
		id, stream := s.Clients+p, nextStream
		nextStream++
		tok := fmt.Sprint(hold)
		ops = append(ops,
			history.Operation{Client: id, Stream: stream, Kind: history.Acquire, Key: rd.Key, Hold: hold, Token: tok, Invoke: t, Complete: t + 100, Result: history.OK},
			history.Operation{Client: id, Stream: stream, Kind: history.Read, Key: rd.Key, Hold: hold, Value: rd.Value, Invoke: t + 200, Complete: t + 300, Result: history.OK},
			history.Operation{Client: id, Stream: stream, Kind: history.Write, Key: rd.Key, Hold: hold, Prev: rd.Value, Value: rd.Value + 1, Invoke: t + 400, Complete: t + 500, Result: history.OK},
			history.Operation{Client: id, Stream: stream, Kind: history.Release, Key: rd.Key, Hold: hold, Token: tok, Invoke: t + 600, Complete: t + 700, Result: history.OK},
		)
		if t+700 >= wr.Invoke {
			panic("Generate: critical section too short to plant an intruder")
		}
		planted++
	}
	sort.SliceStable(ops, func(i, j int) bool { return ops[i].Complete < ops[j].Complete })
	return h, ops, planted
}

// Write writes h and ops to a history file at path with history's own
// Writer (the file a run would have written: header, one line per
// operation, end line). Errors come from the file system.
func Write(path string, h history.Header, ops []history.Operation) error {
	w, err := history.Create(path, h)
	if err != nil {
		return err
	}
	b := w.NewBuffer()
	for _, op := range ops {
		b.Record(op)
	}
	b.Flush()
	return w.Close()
}
