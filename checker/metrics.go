package checker

import (
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
	eachAcquireDuringFaults(ops, func(op history.Operation) {
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
	eachAcquireDuringFaults(ops, func(op history.Operation) {
		total++
		if op.Result == history.Info {
			unknown++
		}
	})
	return total, unknown
}

// eachAcquireDuringFaults calls f for every outermost acquire of the
// clients (per-node calls and the harness's probes left out) invoked and
// completed inside one nemesis window that lasts at least 1 ms.
func eachAcquireDuringFaults(ops []history.Operation, f func(history.Operation)) {
	var ws [][2]int64
	for _, op := range ops {
		if op.Kind == history.Nemesis && op.Complete-op.Invoke >= int64(time.Millisecond) {
			ws = append(ws, [2]int64{op.Invoke, op.Complete})
		}
	}
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
