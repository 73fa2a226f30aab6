package figures

import (
	"github.com/lockbench/lockbench/checker"
	"github.com/lockbench/lockbench/internal/noise"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/stats"
)

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
	ThroughputPerS stats.Spread `json:"throughput_per_s"`
	// P50Ms, P90Ms, P99Ms, P999Ms and MaxMs are spreads of the runs' acquire
	// latency percentiles, in ms (runs without latency samples are left out).
	P50Ms  stats.Spread `json:"p50_ms"`
	P90Ms  stats.Spread `json:"p90_ms"`
	P99Ms  stats.Spread `json:"p99_ms"`
	P999Ms stats.Spread `json:"p999_ms"`
	MaxMs  stats.Spread `json:"max_ms"`
	// GrantCallP50Ms is the spread of the runs' granting-call p50
	// (Run.GrantCallMs), in ms (runs without samples are left out).
	GrantCallP50Ms stats.Spread `json:"grant_call_p50_ms"`
	// Fairness is Jain's index over grants per client (runs without a grant
	// are left out).
	Fairness stats.Spread `json:"fairness"`
	// NotAcquired, Lost, ExpiredOnRelease and InfoOps are spreads of the
	// runs' ErrorBreakdown counts.
	NotAcquired      stats.Spread `json:"not_acquired"`
	Lost             stats.Spread `json:"lost"`
	ExpiredOnRelease stats.Spread `json:"expired_on_release"`
	InfoOps          stats.Spread `json:"info_ops"`
	// RoundTripsPerGrant is Redis commands per grant (runs reporting 0, unknown, are left out).
	RoundTripsPerGrant stats.Spread `json:"round_trips_per_grant"`
	// Grants is successful outermost acquires per run.
	Grants stats.Spread `json:"grants"`
	// FailedShare and InfoShare are shares (0..1) of acquire attempts that
	// failed or had an unknown outcome.
	FailedShare stats.Spread `json:"failed_share"`
	InfoShare   stats.Spread `json:"info_share"`
	// LongestUnavailableMs is the longest time a key could not be acquired, in ms.
	LongestUnavailableMs stats.Spread `json:"longest_unavailable_ms"`
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
	OtherCPUCores stats.Spread `json:"other_cpu_cores"`
	StealShare    stats.Spread `json:"steal_share"`
	RunQueue      stats.Spread `json:"run_queue"`
	// RTTP99Ms is the spread of the runs' largest round-trip p99 to a
	// server before the run, in ms.
	RTTP99Ms stats.Spread `json:"rtt_p99_ms"`
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
	GrantsPerS stats.Estimate `json:"grants_per_s"`
	// AcquireP50Ms and AcquireP99Ms are acquire latency percentiles, in ms.
	AcquireP50Ms stats.Estimate `json:"acquire_p50_ms"`
	AcquireP99Ms stats.Estimate `json:"acquire_p99_ms"`
	// CommandsPerGrant is the Redis commands the clients sent per grant.
	CommandsPerGrant stats.Estimate `json:"commands_per_grant"`
}

// CostOf returns the cost figures over the windows of runs (the runs of
// one pair; runs that could not complete give no samples).
func CostOf(runs []results.Run) Cost {
	return Cost{
		GrantsPerS:       stats.EstimateOf(SamplesOf(runs, FigureGrantsPerS)),
		AcquireP50Ms:     stats.EstimateOf(SamplesOf(runs, FigureAcquireP50Ms)),
		AcquireP99Ms:     stats.EstimateOf(SamplesOf(runs, FigureAcquireP99Ms)),
		CommandsPerGrant: stats.EstimateOf(SamplesOf(runs, FigureCommandsPerGrant)),
	}
}

// Of returns the Estimate of a figure (one of Figures); zero for others.
func (c Cost) Of(figure string) stats.Estimate {
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
	return stats.Estimate{}
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
func Observed(r results.Run) string {
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
func Summarize(runs []results.Run) []Summary {
	type key struct{ strategy, scenario string }
	var order []key
	groups := map[key][]results.Run{}
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
func summarize(rs []results.Run) Summary {
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
		case results.OutcomeAsExpected:
			s.AsExpected++
		case results.OutcomeInconclusive:
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
	s.OtherCPUCores = stats.SpreadOf(other)
	s.StealShare = stats.SpreadOf(steal)
	s.RunQueue = stats.SpreadOf(runq)
	s.RTTP99Ms = stats.SpreadOf(rtt)
	s.GrantCallP50Ms = stats.SpreadOf(call50)
	s.ThroughputPerS = stats.SpreadOf(tput)
	s.P50Ms = stats.SpreadOf(p50)
	s.P90Ms = stats.SpreadOf(p90)
	s.P99Ms = stats.SpreadOf(p99)
	s.P999Ms = stats.SpreadOf(p999)
	s.Fairness = stats.SpreadOf(fair)
	s.NotAcquired = stats.SpreadOf(notAcq)
	s.Lost = stats.SpreadOf(lost)
	s.ExpiredOnRelease = stats.SpreadOf(expired)
	s.InfoOps = stats.SpreadOf(infoOps)
	s.MaxMs = stats.SpreadOf(maxL)
	s.RoundTripsPerGrant = stats.SpreadOf(rt)
	s.Grants = stats.SpreadOf(grants)
	s.FailedShare = stats.SpreadOf(failed)
	s.InfoShare = stats.SpreadOf(info)
	s.LongestUnavailableMs = stats.SpreadOf(unavail)
	return s
}
