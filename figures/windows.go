// Package figures computes the cost figures of checked runs (package
// results): the samples of a run (equal time windows of its history), the
// per-cell summaries with their medians and 95% intervals, the capacity
// curves, the like-for-like cost table, and bench.txt in Go's benchmark
// format for benchstat. Write writes a results folder's data files:
// results.json with its cost table, and bench.txt.
package figures

import (
	"cmp"
	"path/filepath"
	"slices"
	"sort"

	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/history/measure"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/stats"
)

// WindowsPerRun is how many equal time windows a run is cut into for its
// cost samples (Window): 6, the fewest samples for which benchmath gives a
// finite 95% interval (MinIntervalSamples), so one run alone yields an
// interval. More windows would leave too few grants in each: the ci
// profile's 1 s runs grant 110-180 times on one key, so a sixth of a run
// holds 20-30 grants (a 4 s run of the full profile about 100), enough
// for a window's median latency and grant rate; a window's p99 over 20-30
// grants is close to its maximum, so the p99 interval says how the tail
// moved between windows rather than where a true p99 lies. Repeats (seeds)
// of a cell add their windows to the same sample.
const WindowsPerRun = 6

// spanOf returns the time the clients worked in a history: from the first
// invoke to the last completion of an operation of a client (client >= 0:
// the harness's probes and the nemesis left out), in ns since the run
// started; ok is false when no client operation has a positive span.
func spanOf(ops []history.Operation) (start, end int64, ok bool) {
	start = -1
	for _, op := range ops {
		if op.Client < 0 || op.Kind == history.Nemesis {
			continue
		}
		if start < 0 || op.Invoke < start {
			start = op.Invoke
		}
		end = max(end, op.Complete)
	}
	return start, end, start >= 0 && end > start
}

// boundaries returns the n+1 boundaries of n equal windows over a
// history's span, in ns; nil when the history has no span or n < 1.
func boundaries(ops []history.Operation, n int) []int64 {
	start, end, ok := spanOf(ops)
	if !ok || n < 1 {
		return nil
	}
	b := make([]int64, n+1)
	for i := range b {
		b[i] = start + (end-start)*int64(i)/int64(n)
	}
	b[n] = end
	return b
}

// WindowsOf cuts a history into n equal windows over the time its clients
// worked (first invoke to last completion of a client operation) and
// returns each window's figures (Window); a grant belongs to the window
// in which it completed (the last window includes its end). counter is the
// clients' command counter sampled during the run (any times; it is
// interpolated linearly at the window boundaries, exact where it has a
// sample there, see CounterAtWindows); nil leaves CommandsPerGrant out.
// A history without client operations gives nil. The result depends on
// ops only (and counter), so lockbench check and report recompute the
// windows a run stored.
func WindowsOf(ops []history.Operation, n int, counter []results.CounterSample) []results.Window {
	b := boundaries(ops, n)
	if b == nil {
		return nil
	}
	gs := measure.Grants(ops)
	holds, rounds := measure.HoldCalls(ops)
	handoffs := measure.Handoffs(ops)
	out := make([]results.Window, n)
	gi := 0
	for i := range n {
		w := &out[i]
		w.StartMs, w.EndMs = ms(b[i]), ms(b[i+1])
		var lat []float64
		for gi < len(gs) && (gs[gi].AtNs < b[i+1] || (i == n-1 && gs[gi].AtNs <= b[i+1])) {
			if gs[gi].AtNs >= b[i] {
				lat = append(lat, gs[gi].LatencyMs)
			}
			gi++
		}
		w.Grants = len(lat)
		w.HoldP50Ms, w.HoldP99Ms = timedPercentiles(holds, b[i], b[i+1], i == n-1)
		w.HandoffP50Ms, w.HandoffP99Ms = timedPercentiles(handoffs, b[i], b[i+1], i == n-1)
		w.RoundTripsPerHold, _ = timedPercentiles(rounds, b[i], b[i+1], i == n-1)
		if secs := float64(b[i+1]-b[i]) / 1e9; secs > 0 {
			w.GrantsPerS = float64(w.Grants) / secs
		}
		if w.Grants == 0 {
			continue
		}
		if l, err := stats.Percentiles(lat); err == nil {
			w.AcquireP50Ms, w.AcquireP99Ms = &l.P50, &l.P99
		}
		c0, ok0 := counterAt(counter, w.StartMs)
		c1, ok1 := counterAt(counter, w.EndMs)
		if ok0 && ok1 && c1 >= c0 {
			v := float64(c1-c0) / float64(w.Grants)
			w.CommandsPerGrant = &v
		}
	}
	return out
}

// timedPercentiles returns the p50 and p99 (Percentiles) of the figures
// of xs (sorted by AtNs) complete in [from, to), or [from, to] when last;
// nil, nil when none is.
func timedPercentiles(xs []measure.Timed, from, to int64, last bool) (p50, p99 *float64) {
	i := sort.Search(len(xs), func(i int) bool { return xs[i].AtNs >= from })
	var vs []float64
	for ; i < len(xs) && (xs[i].AtNs < to || last && xs[i].AtNs == to); i++ {
		vs = append(vs, xs[i].Ms)
	}
	if len(vs) == 0 {
		return nil, nil
	}
	l, err := stats.Percentiles(vs)
	if err != nil {
		return nil, nil
	}
	return &l.P50, &l.P99
}

// CounterAtWindows returns the command counter at the n+1 boundaries of
// the n windows WindowsOf cuts from ops, interpolated linearly from
// series (samples taken during the run at any period); nil when the
// history has no span or series is empty. Stored in results.json
// (Run.CommandCounter), it lets WindowsOf give each window's commands
// per grant offline.
func CounterAtWindows(ops []history.Operation, n int, series []results.CounterSample) []results.CounterSample {
	b := boundaries(ops, n)
	if b == nil || len(series) == 0 {
		return nil
	}
	out := make([]results.CounterSample, len(b))
	for i, t := range b {
		c, _ := counterAt(series, ms(t))
		out[i] = results.CounterSample{AtMs: ms(t), Commands: c}
	}
	return out
}

// counterAt interpolates the counter series at atMs (linearly between the
// two samples around it, rounded to a whole command; clamped to the first
// and last sample outside them); false when series is empty. series need
// not be sorted.
func counterAt(series []results.CounterSample, atMs float64) (int64, bool) {
	if len(series) == 0 {
		return 0, false
	}
	s := series
	if !slices.IsSortedFunc(s, func(a, b results.CounterSample) int { return cmp.Compare(a.AtMs, b.AtMs) }) {
		s = slices.Clone(series)
		slices.SortStableFunc(s, func(a, b results.CounterSample) int { return cmp.Compare(a.AtMs, b.AtMs) })
	}
	i := sort.Search(len(s), func(i int) bool { return s[i].AtMs >= atMs })
	switch {
	case i == 0:
		return s[0].Commands, true
	case i == len(s):
		return s[len(s)-1].Commands, true
	case s[i].AtMs == atMs:
		return s[i].Commands, true
	}
	a, b := s[i-1], s[i]
	f := (atMs - a.AtMs) / (b.AtMs - a.AtMs)
	return a.Commands + int64(f*float64(b.Commands-a.Commands)+0.5), true
}

func ms(ns int64) float64 { return float64(ns) / 1e6 }

// Cost figures of a run's windows, the names Samples and the bench.txt
// units use.
const (
	// FigureGrantsPerS is grants per second (higher is better).
	FigureGrantsPerS = "grants/s"
	// FigureAcquireP50Ms and FigureAcquireP99Ms are acquire latency
	// percentiles in ms (lower is better).
	FigureAcquireP50Ms = "acquire-p50-ms"
	FigureAcquireP99Ms = "acquire-p99-ms"
	// FigureCommandsPerGrant is client commands per grant (lower is better).
	FigureCommandsPerGrant = "cmds/grant"
	// FigureHoldP50Ms and FigureHoldP99Ms are percentiles of a hold's lock
	// calls (granting acquire call + release call) in ms; FigureRTTsPerHold
	// is the same calls' round trips (rttsPerHold): the overhead,
	// machine-independent (lower is better).
	FigureHoldP50Ms   = "hold-p50-ms"
	FigureHoldP99Ms   = "hold-p99-ms"
	FigureRTTsPerHold = "rtts/hold"
	// FigureHandoffP50Ms and FigureHandoffP99Ms are percentiles of the
	// handoff (release completion to the next waiting client's grant) in
	// ms (lower is better).
	FigureHandoffP50Ms = "handoff-p50-ms"
	FigureHandoffP99Ms = "handoff-p99-ms"
)

// LockFigures lists the figures of what a lock costs apart from
// contention, in report order: the overhead per hold (ms and round trips)
// and the handoff between holders.
var LockFigures = []string{FigureHoldP50Ms, FigureHoldP99Ms, FigureRTTsPerHold, FigureHandoffP50Ms, FigureHandoffP99Ms}

// Figures lists the cost figures in report order.
var Figures = []string{FigureGrantsPerS, FigureAcquireP50Ms, FigureAcquireP99Ms, FigureCommandsPerGrant}

// HigherIsBetter reports whether a larger value of figure is an
// improvement (grants/s) rather than a cost.
func HigherIsBetter(figure string) bool { return figure == FigureGrantsPerS }

// Samples returns the run's samples of a cost figure (one of Figures or
// LockFigures),
// one per window that has it (a window without a grant has a grant rate
// of 0 and no latency or commands per grant); nil for a run that could not
// complete (Error set) or an unknown figure.
func Samples(r results.Run, figure string) []float64 {
	if r.Error != "" {
		return nil
	}
	var out []float64
	for _, w := range r.Windows {
		var v *float64
		switch figure {
		case FigureGrantsPerS:
			v = &w.GrantsPerS
		case FigureAcquireP50Ms:
			v = w.AcquireP50Ms
		case FigureAcquireP99Ms:
			v = w.AcquireP99Ms
		case FigureCommandsPerGrant:
			v = w.CommandsPerGrant
		case FigureHoldP50Ms:
			v = w.HoldP50Ms
		case FigureHoldP99Ms:
			v = w.HoldP99Ms
		case FigureHandoffP50Ms:
			v = w.HandoffP50Ms
		case FigureHandoffP99Ms:
			v = w.HandoffP99Ms
		case FigureRTTsPerHold:
			v = rttsPerHold(r, w)
		}
		if v != nil {
			out = append(out, *v)
		}
	}
	return out
}

// rttsPerHold is a window's overhead in round trips: the median count of
// round trips of its holds' lock calls where the clients counted them
// (Window.RoundTripsPerHold: every built-in strategy), else the hold's
// p50 time over the run's measured round-trip time (Run.RoundTripMs:
// adapter locks, whose clients lockbench does not hold); nil when
// neither is known. The count reads the same on a busy machine; the time
// ratio moved 9-42% between two quiet runs (docs/performance.md).
func rttsPerHold(r results.Run, w results.Window) *float64 {
	if w.RoundTripsPerHold != nil {
		return w.RoundTripsPerHold
	}
	if rtt := r.RoundTripMs(); rtt > 0 && w.HoldP50Ms != nil {
		x := *w.HoldP50Ms / rtt
		return &x
	}
	return nil
}

// RTTsCounted reports whether every window of runs that has an overhead
// in round trips (rttsPerHold) has it counted rather than timed; false
// when none has one.
func RTTsCounted(runs []results.Run) bool {
	seen := false
	for _, r := range runs {
		if r.Error != "" {
			continue
		}
		for _, w := range r.Windows {
			if rttsPerHold(r, w) == nil {
				continue
			}
			if w.RoundTripsPerHold == nil {
				return false
			}
			seen = true
		}
	}
	return seen
}

// SamplesOf returns the samples of a cost figure over runs (the windows
// of every run in turn; see Samples). Callers pass the runs of one
// (strategy, scenario) cell: windows of different scenarios are never
// pooled.
func SamplesOf(runs []results.Run, figure string) []float64 {
	var out []float64
	for _, r := range runs {
		out = append(out, Samples(r, figure)...)
	}
	return out
}

// SetWindows fills r's cost samples from its history and the
// clients' command counter sampled during the run (series, any period;
// nil: unknown): CommandCounter at the window boundaries
// (CounterAtWindows) and Windows (WindowsOf, WindowsPerRun windows).
func SetWindows(r *results.Run, ops []history.Operation, series []results.CounterSample) {
	r.CommandCounter = CounterAtWindows(ops, WindowsPerRun, series)
	r.Windows = WindowsOf(ops, WindowsPerRun, r.CommandCounter)
}

// RecomputeWindows returns f, or a copy whose runs' Windows (runs and
// client sweep and cost runs) are cut again from their histories in dir (WindowsOf, with
// the CommandCounter results.json stored), so that a re-rendered report
// draws its cost figures from the histories themselves; a run whose
// history cannot be loaded keeps the windows results.json gave. It also
// returns how many runs were recomputed.
func RecomputeWindows(dir string, f *results.File) (*results.File, int) {
	n := 0
	redo := func(rs []results.Run) []results.Run {
		out := make([]results.Run, len(rs))
		for i, r := range rs {
			if r.History != "" && r.Error == "" {
				if _, ops, err := history.Load(filepath.Join(dir, r.History)); err == nil {
					r.Windows = WindowsOf(ops, WindowsPerRun, r.CommandCounter)
					n++
				}
			}
			out[i] = r
		}
		return out
	}
	c := *f
	c.Runs, c.Sweep, c.Cost = redo(f.Runs), redo(f.Sweep), redo(f.Cost)
	if n == 0 {
		return f, 0
	}
	return &c, n
}
