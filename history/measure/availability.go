package measure

import (
	"sort"
	"time"

	"github.com/lockbench/lockbench/history"
)

// WindowAvailability is what the clients' outermost acquires (per-node
// calls, nested acquires and the harness's probes left out) came to in
// one fault window, or outside every one (Quiet).
type WindowAvailability struct {
	// Name is the fault window's name (FaultWindow.Name); "" when Quiet.
	Name  string
	Quiet bool
	// Start and End bound the window, ns since run start (0 when Quiet).
	Start, End int64
	// Span is the window's length in ns (Quiet: the run's span outside
	// every window).
	Span int64
	// Acquires counts the calls invoked in the window, by result.
	Acquires, OK, Fail, Info int
	// GrantCallsMs are the durations, in ms, of the granting calls that
	// completed in the window, in completion order.
	GrantCallsMs []float64
	// AtBudget counts the calls invoked in the window that took at least
	// 90% of the budget (0: budget unknown, none counted).
	AtBudget int
}

// AvailabilityOf returns what the clients' acquires came to outside every
// fault window (first, Quiet) and in each fault window of at least 1 ms
// (in start order): calls invoked in a window count there by result,
// grants completing in it count there with their call's duration, and
// calls that took at least 90% of budget count as AtBudget. A run without
// fault windows gives the quiet entry alone.
func AvailabilityOf(ops []history.Operation, budget time.Duration) []WindowAvailability {
	var ws []WindowAvailability
	for _, w := range FaultWindows(ops) {
		if w.End-w.Start >= int64(time.Millisecond) {
			ws = append(ws, WindowAvailability{Name: w.Name, Start: w.Start, End: w.End, Span: w.End - w.Start})
		}
	}
	sort.SliceStable(ws, func(i, j int) bool { return ws[i].Start < ws[j].Start })
	quiet := WindowAvailability{Quiet: true}
	in := func(t int64) *WindowAvailability {
		for i := range ws {
			if t >= ws[i].Start && t <= ws[i].End {
				return &ws[i]
			}
		}
		return &quiet
	}
	var first, last int64 = -1, 0
	for _, op := range ops {
		if op.Kind != history.Acquire || op.Depth > 1 || op.Client < 0 || op.Node != "" {
			continue
		}
		if first < 0 || op.Invoke < first {
			first = op.Invoke
		}
		last = max(last, op.Complete)
		w := in(op.Invoke)
		w.Acquires++
		switch op.Result {
		case history.OK:
			w.OK++
		case history.Fail:
			w.Fail++
		default:
			w.Info++
		}
		d := op.Complete - op.Invoke
		if budget > 0 && d >= int64(budget)*9/10 {
			w.AtBudget++
		}
		if op.Result == history.OK {
			g := in(op.Complete)
			g.GrantCallsMs = append(g.GrantCallsMs, float64(d)/1e6)
		}
	}
	if first >= 0 {
		quiet.Span = last - first
		for _, w := range ws {
			quiet.Span -= max(0, min(w.End, last)-max(w.Start, first))
		}
		quiet.Span = max(quiet.Span, 0)
	}
	return append([]WindowAvailability{quiet}, ws...)
}
