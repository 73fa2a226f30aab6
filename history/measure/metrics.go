package measure

import (
	"cmp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/lockbench/lockbench/history"
)

// This file holds the history metrics no check judges: fault windows,
// grants during faults, acquire latencies, grants per client and the error
// breakdown. They read the history alone, so a run and `lockbench check` of
// its saved history report the same figures.

// FaultWindow is one nemesis operation of a history: a fault from Start to
// End, in nanoseconds since the run started.
type FaultWindow struct {
	// Name is the nemesis note's text before its first ":" (the scenario
	// or fault name, e.g. "gc-pause").
	Name string
	// Start and End are the nemesis operation's invoke and complete times
	// (ns since run start).
	Start, End int64
	// Note is the nemesis operation's whole note: what was done and to whom.
	Note string
}

// FaultWindows returns the nemesis windows of a history, ordered by start.
func FaultWindows(ops []history.Operation) []FaultWindow {
	var fs []FaultWindow
	for _, op := range ops {
		if op.Kind == history.Nemesis {
			name, _, _ := strings.Cut(op.Note, ":")
			fs = append(fs, FaultWindow{Name: name, Start: op.Invoke, End: op.Complete, Note: op.Note})
		}
	}
	sort.Slice(fs, func(i, j int) bool { return fs[i].Start < fs[j].Start })
	return fs
}

// GrantsDuringFaults counts the grants (outermost acquires of the clients
// with result ok; per-node calls and the harness's probes left out) invoked
// and completed inside one nemesis window that lasts at least 1 ms.
func GrantsDuringFaults(ops []history.Operation) int {
	n := 0
	EachAcquireDuringFaults(ops, func(op history.Operation) {
		if op.Result == history.OK {
			n++
		}
	})
	return n
}

// AcquiresDuringFaults counts the outermost acquires of the clients
// invoked and completed inside one nemesis window that lasts at least
// 1 ms (as GrantsDuringFaults), and how many of them had an unknown
// outcome (result info: a timeout, a connection lost after the command
// was sent).
func AcquiresDuringFaults(ops []history.Operation) (total, unknown int) {
	EachAcquireDuringFaults(ops, func(op history.Operation) {
		total++
		if op.Result == history.Info {
			unknown++
		}
	})
	return total, unknown
}

// CallsDuringFaults counts the lock calls of the clients (acquire,
// release and extend, per-node calls and the harness's probes left out)
// that were in flight while a nemesis window lasting at least 1 ms was
// open: invoked before it closed and completed after it opened, and the
// number of such windows. No call in a history with windows means they
// tested nothing: no client was calling (a client slow to start, or a
// window before the first call).
func CallsDuringFaults(ops []history.Operation) (calls, windows int) {
	ws := faultWindows(ops)
	n := 0
	for _, op := range ops {
		if (op.Kind != history.Acquire && op.Kind != history.Release && op.Kind != history.Extend) || op.Client < 0 || op.Node != "" {
			continue
		}
		for _, w := range ws {
			if op.Invoke <= w[1] && op.Complete >= w[0] {
				n++
				break
			}
		}
	}
	return n, len(ws)
}

// faultWindows returns the nemesis windows of a history that last at
// least 1 ms, [invoke, complete] in ns.
func faultWindows(ops []history.Operation) [][2]int64 {
	var ws [][2]int64
	for _, op := range ops {
		if op.Kind == history.Nemesis && op.Complete-op.Invoke >= int64(time.Millisecond) {
			ws = append(ws, [2]int64{op.Invoke, op.Complete})
		}
	}
	return ws
}

// EachAcquireDuringFaults calls f for every outermost acquire of the
// clients (per-node calls and the harness's probes left out) invoked and
// completed inside one nemesis window that lasts at least 1 ms.
func EachAcquireDuringFaults(ops []history.Operation, f func(history.Operation)) {
	ws := faultWindows(ops)
	for _, op := range ops {
		if op.Kind != history.Acquire || op.Depth > 1 || op.Client < 0 || op.Node != "" {
			continue
		}
		for _, w := range ws {
			if op.Invoke >= w[0] && op.Complete <= w[1] {
				f(op)
				break
			}
		}
	}
}

// AcquireLatencies returns, per grant in a history, the time from the
// client's first attempt to the grant, in ms (retries and the backoff
// between them included), in completion order: the latencies of Grants.
func AcquireLatencies(ops []history.Operation) []float64 {
	gs := Grants(ops)
	out := make([]float64, len(gs))
	for i, g := range gs {
		out[i] = g.LatencyMs
	}
	return out
}

// GrantCalls returns, in ms, the duration of every granting outermost
// acquire call of the clients (invoke to complete of an acquire with result
// ok; per-node calls, nested acquires and the harness's probes left out):
// the cost of the call itself, without the failed attempts and backoff
// before it that AcquireLatencies includes.
func GrantCalls(ops []history.Operation) []float64 {
	var out []float64
	for _, op := range ops {
		if op.Kind == history.Acquire && op.Result == history.OK && op.Depth <= 1 && op.Client >= 0 && op.Node == "" {
			out = append(out, float64(op.Complete-op.Invoke)/1e6)
		}
	}
	return out
}

// ClientOutcomes counts what the clients' lock operations came to. Only
// the clients' whole-lock operations count: per-node calls of a quorum
// strategy (Node set) and the harness's probes and nemesis (client -1) are
// left out.
type ClientOutcomes struct {
	// GrantsPerClient is the number of grants (outermost acquires with
	// result ok) of each client id; clients that never got a grant are 0.
	GrantsPerClient []float64
	// NotAcquired is the number of outermost acquire attempts that
	// certainly failed (result fail: the lock was held by another).
	NotAcquired int
	// Lost is the number of holds the client learned it had lost before
	// releasing: the strategy signalled it (a lost operation), a renewal
	// certainly failed (an extend with result fail), or the lease's
	// validity deadline had passed when the release was invoked. A hold
	// counts once however many of these it shows.
	Lost int
	// ExpiredOnRelease is the number of holds whose release (any depth)
	// failed: the key was gone or held by another owner.
	ExpiredOnRelease int
	// Info is the number of lock operations (acquire, release, extend, any
	// depth) whose outcome is unknown (result info: a timeout or connection
	// error).
	Info int
}

// Outcomes counts the clients' grants and failures in a history. clients
// is the run's client count: GrantsPerClient has at least that many
// entries (a client id at or above clients widens it).
func Outcomes(ops []history.Operation, clients int) ClientOutcomes {
	var e ClientOutcomes
	grants := make([]float64, max(clients, 0))
	validUntil := map[int64]int64{} // hold → validity deadline of its outermost acquire
	lost := map[int64]bool{}
	expired := map[int64]bool{}
	for _, op := range ops {
		if op.Client < 0 || op.Node != "" {
			continue
		}
		lockOp := op.Kind == history.Acquire || op.Kind == history.Release || op.Kind == history.Extend
		if lockOp && op.Result == history.Info {
			e.Info++
		}
		switch op.Kind {
		case history.Acquire:
			if op.Depth > 1 {
				continue
			}
			switch op.Result {
			case history.Fail:
				e.NotAcquired++
			case history.OK:
				for op.Client >= len(grants) {
					grants = append(grants, 0)
				}
				grants[op.Client]++
				if op.ValidUntil > 0 && op.Hold != 0 {
					validUntil[op.Hold] = op.ValidUntil
				}
			}
		case history.Lost:
			if op.Hold != 0 {
				lost[op.Hold] = true
			}
		case history.Extend:
			// A renewal that raced the end of its hold carries hold 0: not counted.
			if op.Result == history.Fail && op.Hold != 0 {
				lost[op.Hold] = true
			}
		case history.Release:
			if op.Result == history.Fail && op.Hold != 0 {
				expired[op.Hold] = true
			}
			if v, ok := validUntil[op.Hold]; ok && op.Depth <= 1 && op.Invoke > v {
				lost[op.Hold] = true
			}
		}
	}
	e.GrantsPerClient = grants
	e.Lost, e.ExpiredOnRelease = len(lost), len(expired)
	return e
}

// Timed is a figure of a history in ms, at the time it was complete (ns
// since the run started).
type Timed struct {
	// AtNs is when the figure was complete, in ns since the run started.
	AtNs int64
	// Ms is the figure, in ms.
	Ms float64
}

// HoldCalls returns, per hold of the clients that was released with a
// known outcome, the time its lock calls took: the granting outermost
// acquire call (invoke to complete, without the failed attempts and
// backoff before it) plus the first outermost release call with a known
// outcome (ok or fail), in ms, at the release's completion, in completion
// order. It is what a lock costs a client per hold when nobody waits
// (overhead); holds whose release is unknown (a timeout, a crash) are
// left out. Per-node calls and the harness's probes do not count.
//
// rounds are the same holds' round trips (the granting acquire's plus the
// release's, history.Operation.RoundTrips, counted by the client's own
// connections), Timed.Ms carrying the count, not a time; holds whose calls
// were not counted (adapter locks record 0) are left out of rounds.
func HoldCalls(ops []history.Operation) (ms, rounds []Timed) {
	acq := map[int64]int{} // hold id → index of its granting call in ops
	for i, op := range ops {
		if op.Kind == history.Acquire && op.Result == history.OK && op.Depth <= 1 && op.Client >= 0 && op.Node == "" && op.Hold != 0 {
			acq[op.Hold] = i
		}
	}
	done := map[int64]bool{}
	for _, op := range ops {
		if op.Kind != history.Release || op.Depth > 1 || op.Client < 0 || op.Node != "" || op.Result == history.Info || done[op.Hold] {
			continue
		}
		i, ok := acq[op.Hold]
		if !ok {
			continue
		}
		done[op.Hold] = true
		a := &ops[i]
		ms = append(ms, Timed{AtNs: op.Complete, Ms: float64(a.Complete-a.Invoke+op.Complete-op.Invoke) / 1e6})
		if a.RoundTrips > 0 && op.RoundTrips > 0 {
			rounds = append(rounds, Timed{AtNs: op.Complete, Ms: float64(a.RoundTrips + op.RoundTrips)})
		}
	}
	byTime := func(a, b Timed) int { return cmp.Compare(a.AtNs, b.AtNs) }
	slices.SortStableFunc(ms, byTime)
	slices.SortStableFunc(rounds, byTime)
	return ms, rounds
}

// Handoffs returns the lock's idle time between two holders of a key
// while a client waited for it: for each hold released ok, the time from
// the release's completion to the completion of the key's next grant
// (whoever got it), in ms, at that grant's completion, when at the release
// some client was waiting for the key: its first attempt after its
// previous grant (Grant) was invoked before the release completed and its
// grant completed after. A grant that completes before the release does
// (the key expired, or the replies crossed) is left out, as are releases
// with an unknown or failed outcome, crashed holds, and waits that ended
// without a grant. It tells polling with backoff (the waiter sees the free
// key at its next try; the releaser, trying again at once, often wins)
// from notification (the server wakes the next waiter); its lower bound
// is one round trip.
func Handoffs(ops []history.Operation) []Timed {
	hs := Holds(ops)
	type grantKey struct {
		client int
		at     int64
	}
	keyOf := make(map[grantKey]string, len(hs))
	byKey := map[string][]Hold{}
	for _, h := range hs {
		if h.Client >= 0 {
			keyOf[grantKey{h.Client, h.AcquireComplete}] = h.Key
			byKey[h.Key] = append(byKey[h.Key], h)
		}
	}
	// The waits per key, as sorted starts and ends: at time t, the waits
	// in progress are the starts ≤ t minus the ends ≤ t.
	starts, ends := map[string][]int64{}, map[string][]int64{}
	for _, g := range Grants(ops) {
		k, ok := keyOf[grantKey{g.Client, g.AtNs}]
		if !ok {
			continue
		}
		starts[k] = append(starts[k], g.AtNs-int64(g.LatencyMs*1e6))
		ends[k] = append(ends[k], g.AtNs)
	}
	releaseOK := map[int64]int64{} // hold id → completion of its ok outermost release
	for _, op := range ops {
		if op.Kind == history.Release && op.Depth <= 1 && op.Client >= 0 && op.Node == "" && op.Result == history.OK && op.Hold != 0 {
			if t, ok := releaseOK[op.Hold]; !ok || op.Complete < t {
				releaseOK[op.Hold] = op.Complete
			}
		}
	}
	var out []Timed
	for k, kh := range byKey {
		st, en := starts[k], ends[k]
		slices.Sort(st)
		slices.Sort(en)
		waiting := func(t int64) bool {
			a, _ := slices.BinarySearch(st, t+1) // starts ≤ t
			b, _ := slices.BinarySearch(en, t+1) // ends ≤ t
			return a > b
		}
		slices.SortStableFunc(kh, func(a, b Hold) int { return cmp.Compare(a.AcquireComplete, b.AcquireComplete) })
		for i := 1; i < len(kh); i++ {
			prev, next := kh[i-1], kh[i]
			rel, ok := releaseOK[prev.Hold]
			if !ok || prev.Crashed || next.AcquireComplete < rel || !waiting(rel) {
				continue
			}
			out = append(out, Timed{AtNs: next.AcquireComplete, Ms: float64(next.AcquireComplete-rel) / 1e6})
		}
	}
	slices.SortFunc(out, func(a, b Timed) int { return cmp.Or(cmp.Compare(a.AtNs, b.AtNs), cmp.Compare(a.Ms, b.Ms)) })
	return out
}
