package results

import (
	"cmp"
	"path/filepath"
	"slices"
	"sort"

	"github.com/lockbench/lockbench/checker"
	"github.com/lockbench/lockbench/history"
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

// Window is one of a run's WindowsPerRun equal time windows, cut from its
// history (WindowsOf): the figures of the grants that completed in it.
// Times are ms since the run started (the history's clock).
type Window struct {
	// StartMs and EndMs bound the window, in ms since the run started.
	StartMs float64 `json:"start_ms"`
	EndMs   float64 `json:"end_ms"`
	// Grants is how many outermost acquires of the clients completed ok in
	// the window.
	Grants int `json:"grants"`
	// GrantsPerS is Grants divided by the window's length, in grants/s.
	GrantsPerS float64 `json:"grants_per_s"`
	// AcquireP50Ms and AcquireP99Ms are percentiles, in ms, of the acquire
	// latency (first attempt to grant, retries included) of the window's
	// grants (checker.Grants; linear interpolation, as Percentiles); absent when the
	// window has no grant.
	AcquireP50Ms *float64 `json:"acquire_p50_ms,omitempty"`
	AcquireP99Ms *float64 `json:"acquire_p99_ms,omitempty"`
	// CommandsPerGrant is the Redis commands the clients sent during the
	// window (the run's command counter, CommandCounter, at its two
	// boundaries) per grant in it; absent when the window has no grant or
	// the counter is unknown (a history checked without its results.json).
	CommandsPerGrant *float64 `json:"commands_per_grant,omitempty"`
	// HoldP50Ms and HoldP99Ms are percentiles, in ms, of the lock calls of
	// the holds released (with a known outcome) in the window: the
	// granting acquire call plus the release call (checker.HoldCalls), what
	// the lock costs per hold when nobody waits; absent without one.
	HoldP50Ms *float64 `json:"hold_p50_ms,omitempty"`
	HoldP99Ms *float64 `json:"hold_p99_ms,omitempty"`
	// HandoffP50Ms and HandoffP99Ms are percentiles, in ms, of the
	// handoffs that completed in the window: from a release's completion
	// to the next grant of the key to a client that was waiting
	// (checker.Handoffs); absent without one (nobody waited).
	HandoffP50Ms *float64 `json:"handoff_p50_ms,omitempty"`
	HandoffP99Ms *float64 `json:"handoff_p99_ms,omitempty"`
}

// CounterSample is the clients' command counter (commands sent, counted by
// a go-redis hook) at one time of a run.
type CounterSample struct {
	// AtMs is the time in ms since the run started (the history's clock).
	AtMs float64 `json:"at_ms"`
	// Commands is how many commands the clients had sent by then.
	Commands int64 `json:"commands"`
}

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
func WindowsOf(ops []history.Operation, n int, counter []CounterSample) []Window {
	b := boundaries(ops, n)
	if b == nil {
		return nil
	}
	gs := checker.Grants(ops)
	holds, handoffs := checker.HoldCalls(ops), checker.Handoffs(ops)
	out := make([]Window, n)
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
func timedPercentiles(xs []checker.Timed, from, to int64, last bool) (p50, p99 *float64) {
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
func CounterAtWindows(ops []history.Operation, n int, series []CounterSample) []CounterSample {
	b := boundaries(ops, n)
	if b == nil || len(series) == 0 {
		return nil
	}
	out := make([]CounterSample, len(b))
	for i, t := range b {
		c, _ := counterAt(series, ms(t))
		out[i] = CounterSample{AtMs: ms(t), Commands: c}
	}
	return out
}

// counterAt interpolates the counter series at atMs (linearly between the
// two samples around it, rounded to a whole command; clamped to the first
// and last sample outside them); false when series is empty. series need
// not be sorted.
func counterAt(series []CounterSample, atMs float64) (int64, bool) {
	if len(series) == 0 {
		return 0, false
	}
	s := series
	if !slices.IsSortedFunc(s, func(a, b CounterSample) int { return cmp.Compare(a.AtMs, b.AtMs) }) {
		s = slices.Clone(series)
		slices.SortStableFunc(s, func(a, b CounterSample) int { return cmp.Compare(a.AtMs, b.AtMs) })
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
	// is the p50 in round trips of the run's measured round-trip time
	// (Run.RoundTripMs): the overhead, machine-independent (lower is better).
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
func (r Run) Samples(figure string) []float64 {
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
			if rtt := r.RoundTripMs(); rtt > 0 && w.HoldP50Ms != nil {
				x := *w.HoldP50Ms / rtt
				v = &x
			}
		}
		if v != nil {
			out = append(out, *v)
		}
	}
	return out
}

// SamplesOf returns the samples of a cost figure over runs (the windows
// of every run in turn; see Run.Samples). Callers pass the runs of one
// (strategy, scenario) cell: windows of different scenarios are never
// pooled.
func SamplesOf(runs []Run, figure string) []float64 {
	var out []float64
	for _, r := range runs {
		out = append(out, r.Samples(figure)...)
	}
	return out
}

// SetWindows fills the run's cost samples from its history and the
// clients' command counter sampled during the run (series, any period;
// nil: unknown): CommandCounter at the window boundaries
// (CounterAtWindows) and Windows (WindowsOf, WindowsPerRun windows).
func (r *Run) SetWindows(ops []history.Operation, series []CounterSample) {
	r.CommandCounter = CounterAtWindows(ops, WindowsPerRun, series)
	r.Windows = WindowsOf(ops, WindowsPerRun, r.CommandCounter)
}

// RecomputeWindows returns f, or a copy whose runs' Windows (runs and
// client sweep and cost runs) are cut again from their histories in dir (WindowsOf, with
// the CommandCounter results.json stored), so that a re-rendered report
// draws its cost figures from the histories themselves; a run whose
// history cannot be loaded keeps the windows results.json gave. It also
// returns how many runs were recomputed.
func RecomputeWindows(dir string, f *File) (*File, int) {
	n := 0
	redo := func(rs []Run) []Run {
		out := make([]Run, len(rs))
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
