package results

import (
	"fmt"
	"math"
	"slices"

	"github.com/montanaflynn/stats"

	"github.com/lockbench/lockbench/checker"
	"github.com/lockbench/lockbench/internal/noise"
)

// Percentiles returns the 50th, 90th, 99th and 99.9th percentiles, the maximum and the
// count of samplesMs (latencies in milliseconds; the result is in
// milliseconds too). Percentiles use linear interpolation between the two
// closest ranks (rank = p/100·(n−1), Hyndman and Fan's type 7), as
// github.com/montanaflynn/stats computes them. An empty input gives the zero
// Latency and no error; a negative, NaN or infinite sample gives an error
// naming its index.
func Percentiles(samplesMs []float64) (Latency, error) {
	if len(samplesMs) == 0 {
		return Latency{}, nil
	}
	for i, v := range samplesMs {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return Latency{}, fmt.Errorf("results: percentiles: sample %d is %v ms, want a finite latency ≥ 0", i, v)
		}
	}
	// Sorted once here: stats.Percentile sorts a copy of its input at
	// every call, which costs nothing more on sorted input (pdqsort
	// finds it sorted in one pass); the values are the same.
	data := stats.Float64Data(slices.Sorted(slices.Values(samplesMs)))
	var l Latency
	for _, q := range []struct {
		p   float64
		dst *float64
	}{{50, &l.P50}, {90, &l.P90}, {99, &l.P99}, {99.9, &l.P999}} {
		v, err := data.Percentile(q.p)
		if err != nil {
			return Latency{}, fmt.Errorf("results: percentile %v: %w", q.p, err)
		}
		*q.dst = v
	}
	maxV, err := data.Max()
	if err != nil {
		return Latency{}, fmt.Errorf("results: max: %w", err)
	}
	l.Max = maxV
	l.Samples = len(samplesMs)
	return l, nil
}

// JainIndex returns Jain's fairness index of xs, (Σx)²/(n·Σx²) (Jain, Chiu
// and Hawe, "A Quantitative Measure of Fairness and Discrimination for
// Resource Allocation in Shared Computer Systems", DEC-TR-301, 1984): 1 when
// every x is equal, 1/n when one x holds everything. No values, or values
// that are all zero, give 0 (nothing was shared). Negative values are an
// error naming their index.
func JainIndex(xs []float64) (float64, error) {
	var sum, sq float64
	for i, x := range xs {
		if x < 0 || math.IsNaN(x) || math.IsInf(x, 0) {
			return 0, fmt.Errorf("results: fairness: value %d is %v, want a finite count ≥ 0", i, x)
		}
		sum += x
		sq += x * x
	}
	if sq == 0 {
		return 0, nil
	}
	return sum * sum / (float64(len(xs)) * sq), nil
}

// Spread is a statistic over repeats (seeds) of one measurement: the median
// and the range. Its unit is the measurement's. N is how many values went in;
// with N == 0 every field is zero.
type Spread struct {
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	N      int     `json:"n"`
}

// SpreadOf returns the median, minimum and maximum of values (the median of an
// even count is the mean of the two middle values). NaN values are skipped;
// no values give the zero Spread.
func SpreadOf(values []float64) Spread {
	vs := make([]float64, 0, len(values))
	for _, v := range values {
		if !math.IsNaN(v) {
			vs = append(vs, v)
		}
	}
	if len(vs) == 0 {
		return Spread{}
	}
	data := stats.Float64Data(vs)
	// Errors are impossible here: the input is non-empty.
	med, _ := data.Median()
	lo, _ := data.Min()
	hi, _ := data.Max()
	return Spread{Median: med, Min: lo, Max: hi, N: len(vs)}
}

// Summary aggregates the repeats (seeds) of one (strategy, scenario) pair.
// Performance spreads are over runs that completed (Error empty); counts are
// over all runs.
type Summary struct {
	Strategy string `json:"strategy"`
	Scenario string `json:"scenario"`
	// Expected is the summary expectation of the first run of the pair
	// ("must-hold", "must-break" or "at-risk").
	Expected string `json:"expected"`
	// Reason is the first run's one-line reason for the expectation.
	Reason string `json:"reason"`
	// Seeds is how many runs the pair has; AsExpected how many of them had
	// verdicts as expected; Inconclusive how many lacked the evidence to
	// confirm them (Run.Outcome "inconclusive"); Errors how many could not
	// complete. The rest were unexpected.
	Seeds        int `json:"seeds"`
	AsExpected   int `json:"as_expected"`
	Inconclusive int `json:"inconclusive,omitempty"`
	Errors       int `json:"errors,omitempty"`
	// Clients, Keys, TTLMs (ms) and CS (the critical-section distribution)
	// are the first run's configuration; a scenario may fix its own.
	Clients int     `json:"clients"`
	Keys    int     `json:"keys"`
	TTLMs   float64 `json:"ttl_ms"`
	CS      string  `json:"cs,omitempty"`
	// Observed counts runs by observed outcome (see Observed): "held",
	// "violated", "inconclusive", "error".
	Observed map[string]int `json:"observed"`
	// Violations is the total of Run.Violations over all seeds.
	Violations int `json:"violations"`
	// ThroughputPerS is grants per second.
	ThroughputPerS Spread `json:"throughput_per_s"`
	// P50Ms, P90Ms, P99Ms, P999Ms and MaxMs are spreads of the runs' acquire
	// latency percentiles, in ms (runs without latency samples are left out).
	P50Ms  Spread `json:"p50_ms"`
	P90Ms  Spread `json:"p90_ms"`
	P99Ms  Spread `json:"p99_ms"`
	P999Ms Spread `json:"p999_ms"`
	MaxMs  Spread `json:"max_ms"`
	// GrantCallP50Ms is the spread of the runs' granting-call p50
	// (Run.GrantCallMs), in ms (runs without samples are left out).
	GrantCallP50Ms Spread `json:"grant_call_p50_ms"`
	// Fairness is Jain's index over grants per client (runs without a grant
	// are left out).
	Fairness Spread `json:"fairness"`
	// NotAcquired, Lost, ExpiredOnRelease and InfoOps are spreads of the
	// runs' ErrorBreakdown counts.
	NotAcquired      Spread `json:"not_acquired"`
	Lost             Spread `json:"lost"`
	ExpiredOnRelease Spread `json:"expired_on_release"`
	InfoOps          Spread `json:"info_ops"`
	// RoundTripsPerGrant is Redis commands per grant (runs reporting 0, unknown, are left out).
	RoundTripsPerGrant Spread `json:"round_trips_per_grant"`
	// Grants is successful outermost acquires per run.
	Grants Spread `json:"grants"`
	// FailedShare and InfoShare are shares (0..1) of acquire attempts that
	// failed or had an unknown outcome.
	FailedShare Spread `json:"failed_share"`
	InfoShare   Spread `json:"info_share"`
	// LongestUnavailableMs is the longest time a key could not be acquired, in ms.
	LongestUnavailableMs Spread `json:"longest_unavailable_ms"`
	// Cost holds the cost figures over the windows of the pair's completed
	// runs (every seed's windows pooled; never windows of another
	// scenario): median, 95% interval and sample count.
	Cost Cost `json:"cost"`
	// Busy is how many completed runs were measured on a busy machine
	// (Run.Busy); BusyWhy is the first such run's numbers (Noise.Why).
	Busy    int    `json:"busy,omitempty"`
	BusyWhy string `json:"busy_why,omitempty"`
	// OtherCPUCores, StealShare and RunQueue are spreads of the runs'
	// mean machine noise (Noise): cores used by other processes, share
	// of CPU time stolen, runnable tasks (runs without noise figures are
	// left out).
	OtherCPUCores Spread `json:"other_cpu_cores"`
	StealShare    Spread `json:"steal_share"`
	RunQueue      Spread `json:"run_queue"`
	// RTTP99Ms is the spread of the runs' largest round-trip p99 to a
	// server before the run, in ms.
	RTTP99Ms Spread `json:"rtt_p99_ms"`
	// NotComparable is how many completed runs were outside the
	// strategy's working envelope (Run.NotComparable); EnvelopeWhy is
	// the first such run's reason.
	NotComparable int    `json:"not_comparable,omitempty"`
	EnvelopeWhy   string `json:"envelope_why,omitempty"`
}

// Cost is the cost figures of a (strategy, scenario) pair, each an
// Estimate over the windows of its runs (Run.Samples).
type Cost struct {
	// GrantsPerS is grants per second.
	GrantsPerS Estimate `json:"grants_per_s"`
	// AcquireP50Ms and AcquireP99Ms are acquire latency percentiles, in ms.
	AcquireP50Ms Estimate `json:"acquire_p50_ms"`
	AcquireP99Ms Estimate `json:"acquire_p99_ms"`
	// CommandsPerGrant is the Redis commands the clients sent per grant.
	CommandsPerGrant Estimate `json:"commands_per_grant"`
}

// CostOf returns the cost figures over the windows of runs (the runs of
// one pair; runs that could not complete give no samples).
func CostOf(runs []Run) Cost {
	return Cost{
		GrantsPerS:       EstimateOf(SamplesOf(runs, FigureGrantsPerS)),
		AcquireP50Ms:     EstimateOf(SamplesOf(runs, FigureAcquireP50Ms)),
		AcquireP99Ms:     EstimateOf(SamplesOf(runs, FigureAcquireP99Ms)),
		CommandsPerGrant: EstimateOf(SamplesOf(runs, FigureCommandsPerGrant)),
	}
}

// Of returns the Estimate of a figure (one of Figures); zero for others.
func (c Cost) Of(figure string) Estimate {
	switch figure {
	case FigureGrantsPerS:
		return c.GrantsPerS
	case FigureAcquireP50Ms:
		return c.AcquireP50Ms
	case FigureAcquireP99Ms:
		return c.AcquireP99Ms
	case FigureCommandsPerGrant:
		return c.CommandsPerGrant
	}
	return Estimate{}
}

// Outcomes of a run as Observed reports them.
const (
	ObservedHeld         = "held"
	ObservedViolated     = "violated"
	ObservedInconclusive = "inconclusive"
	ObservedError        = "error"
	// ObservedUnchecked: the run completed but no checker ran on it.
	ObservedUnchecked = "unchecked"
)

// Observed reduces a run's verdicts to one word: "error" when the run could
// not complete, "violated" when any check was violated, "inconclusive" when
// none was violated but one was inconclusive, "unchecked" when no check
// ran at all (every verdict skipped or empty), else "held".
func Observed(r Run) string {
	if r.Error != "" {
		return ObservedError
	}
	vs := []checker.Status{r.Verdict.Exclusion, r.Verdict.Resource, r.Verdict.Liveness, r.Verdict.Fencing, r.Verdict.Reentrancy}
	inconclusive := false
	for _, v := range vs {
		switch v {
		case checker.Violated:
			return ObservedViolated
		case checker.Inconclusive:
			inconclusive = true
		}
	}
	if inconclusive {
		return ObservedInconclusive
	}
	for _, v := range vs {
		if v == checker.OK {
			return ObservedHeld
		}
	}
	return ObservedUnchecked
}

// Summarize groups runs by (strategy, scenario) and aggregates each group's
// repeats over seeds: median with min–max of the performance figures, the
// total of violations and how many seeds were as expected. Groups come out in
// the order of their first run.
func Summarize(runs []Run) []Summary {
	type key struct{ strategy, scenario string }
	var order []key
	groups := map[key][]Run{}
	for _, r := range runs {
		k := key{r.Strategy, r.Scenario}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], r)
	}
	out := make([]Summary, 0, len(order))
	for _, k := range order {
		out = append(out, summarize(groups[k]))
	}
	return out
}

// summarize aggregates the runs of one (strategy, scenario) pair; rs is not empty.
func summarize(rs []Run) Summary {
	s := Summary{
		Strategy: rs[0].Strategy,
		Scenario: rs[0].Scenario,
		Expected: rs[0].Expected,
		Reason:   rs[0].Reason,
		Seeds:    len(rs),
		Clients:  rs[0].Config.Clients,
		Keys:     rs[0].Config.Keys,
		TTLMs:    rs[0].Config.TTLMs,
		CS:       rs[0].Config.CSMs,
		Observed: map[string]int{},
	}
	var tput, p50, p90, p99, p999, maxL, call50, rt, grants, failed, info, unavail, fair []float64
	var notAcq, lost, expired, infoOps []float64
	var other, steal, runq, rtt []float64
	for _, r := range rs {
		s.Observed[Observed(r)]++
		s.Violations += r.Violations
		switch r.Outcome() {
		case OutcomeAsExpected:
			s.AsExpected++
		case OutcomeInconclusive:
			s.Inconclusive++
		}
		if r.Error != "" {
			s.Errors++
			continue
		}
		tput = append(tput, r.ThroughputPerS)
		grants = append(grants, float64(r.Grants))
		failed = append(failed, r.Liveness.FailedShare)
		info = append(info, r.Liveness.InfoShare)
		unavail = append(unavail, r.Liveness.LongestUnavailableMs)
		notAcq = append(notAcq, float64(r.Errors.NotAcquired))
		lost = append(lost, float64(r.Errors.Lost))
		expired = append(expired, float64(r.Errors.ExpiredOnRelease))
		infoOps = append(infoOps, float64(r.Errors.Info))
		if r.Grants > 0 {
			fair = append(fair, r.Fairness)
		}
		if r.AcquireLatencyMs.Samples > 0 {
			p50 = append(p50, r.AcquireLatencyMs.P50)
			p90 = append(p90, r.AcquireLatencyMs.P90)
			p99 = append(p99, r.AcquireLatencyMs.P99)
			p999 = append(p999, r.AcquireLatencyMs.P999)
			maxL = append(maxL, r.AcquireLatencyMs.Max)
		}
		if r.GrantCallMs.Samples > 0 {
			call50 = append(call50, r.GrantCallMs.P50)
		}
		if r.RoundTripsPerGrant > 0 {
			rt = append(rt, r.RoundTripsPerGrant)
		}
		if n := r.Noise; n != nil {
			if n.Samples > 0 {
				other = append(other, n.OtherCPUCores.Mean)
				steal = append(steal, n.StealShare.Mean)
				runq = append(runq, n.RunQueue.Mean)
			}
			if p := noise.MaxP99Ms(n.RTTBefore); p > 0 {
				rtt = append(rtt, p)
			}
			if n.Busy {
				if s.Busy == 0 {
					s.BusyWhy = n.Why
				}
				s.Busy++
			}
		}
		if r.NotComparable() {
			if s.NotComparable == 0 {
				s.EnvelopeWhy = r.Envelope.Why
			}
			s.NotComparable++
		}
	}
	s.Cost = CostOf(rs)
	s.OtherCPUCores = SpreadOf(other)
	s.StealShare = SpreadOf(steal)
	s.RunQueue = SpreadOf(runq)
	s.RTTP99Ms = SpreadOf(rtt)
	s.GrantCallP50Ms = SpreadOf(call50)
	s.ThroughputPerS = SpreadOf(tput)
	s.P50Ms = SpreadOf(p50)
	s.P90Ms = SpreadOf(p90)
	s.P99Ms = SpreadOf(p99)
	s.P999Ms = SpreadOf(p999)
	s.Fairness = SpreadOf(fair)
	s.NotAcquired = SpreadOf(notAcq)
	s.Lost = SpreadOf(lost)
	s.ExpiredOnRelease = SpreadOf(expired)
	s.InfoOps = SpreadOf(infoOps)
	s.MaxMs = SpreadOf(maxL)
	s.RoundTripsPerGrant = SpreadOf(rt)
	s.Grants = SpreadOf(grants)
	s.FailedShare = SpreadOf(failed)
	s.InfoShare = SpreadOf(info)
	s.LongestUnavailableMs = SpreadOf(unavail)
	return s
}
