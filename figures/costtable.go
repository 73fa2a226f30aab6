package figures

import (
	"slices"
	"strings"
	"time"

	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/stats"
)

// RTTsPerHoldReference is what the overhead in round trips per hold
// (CostRow.RTTsPerHold) reads for a lock whose acquire and release each
// cost what a PING costs: 2. It is a reference, not a floor: the unit is
// a PING sent every 100 ms during the run (Run.RoundTripMs), which pays a
// wake-up that a lock's back-to-back calls partly skip, so the fastest
// locks read a little under 2 on an idle loopback. The floor in ms is
// CostRow.HoldBoundMs.
const RTTsPerHoldReference = 2

// CostScenario is the scenario whose runs are the contended cost cells
// (the handoff and the chooser's figures): bench.CostScenario.
const CostScenario = "baseline"

// CostTableOf returns the like-for-like cost table of f: a row for each
// strategy (in the order f.Strategies lists them, then any other in order
// of its first run) with an uncontended cost run (f.Cost) or a completed
// run of CostScenario (f.Runs). Runs that could not complete (Error set)
// are left out. nil when no strategy has any.
func CostTableOf(f *results.File) []results.CostRow {
	var order []string
	for _, s := range f.Strategies {
		order = append(order, s.Name)
	}
	for _, r := range slices.Concat(f.Runs, f.Cost) {
		if !slices.Contains(order, r.Strategy) {
			order = append(order, r.Strategy)
		}
	}
	caps := CapacityOf(f.Cost)
	var out []results.CostRow
	for _, st := range order {
		var one, base, all []results.Run
		for _, r := range f.Cost {
			if r.Strategy == st && r.Error == "" {
				all = append(all, r)
				if r.Config.Clients == 1 {
					one = append(one, r)
				}
			}
		}
		for _, r := range f.Runs {
			if r.Strategy == st && r.Scenario == CostScenario && r.Error == "" {
				base = append(base, r)
				all = append(all, r)
			}
		}
		if len(all) == 0 {
			continue
		}
		row := results.CostRow{Strategy: st,
			RTTsPerHold:    stats.EstimateOf(SamplesOf(one, FigureRTTsPerHold)),
			HoldP50Ms:      stats.EstimateOf(SamplesOf(one, FigureHoldP50Ms)),
			HoldP99Ms:      stats.EstimateOf(SamplesOf(one, FigureHoldP99Ms)),
			HandoffP50Ms:   stats.EstimateOf(SamplesOf(base, FigureHandoffP50Ms)),
			HandoffP99Ms:   stats.EstimateOf(SamplesOf(base, FigureHandoffP99Ms)),
			HandoffBoundMs: medianFloorRoundTrip(base),
		}
		row.RTTsCounted = RTTsCounted(one)
		row.CS, row.ThinkMs = timingOf(all)
		row.RoundTripMs, row.FloorRoundTripMs = medianRoundTrip(one), medianFloorRoundTrip(one)
		row.HoldBoundMs = 2 * row.FloorRoundTripMs
		var client, server []float64
		for _, r := range one {
			row.TTLMs = r.Config.TTLMs
			if r.ClientCommandsPerGrant > 0 {
				client = append(client, r.ClientCommandsPerGrant)
			}
			if r.RoundTripsPerGrant > 0 {
				server = append(server, r.RoundTripsPerGrant)
			}
		}
		row.ClientCmdsPerGrant, row.ServerCmdsPerGrant = medianOf(client), medianOf(server)
		for _, r := range one {
			row.OverheadBusy = row.OverheadBusy || r.Busy()
		}
		for _, r := range base {
			row.HandoffBusy = row.HandoffBusy || r.Busy()
		}
		for _, c := range caps {
			if c.Strategy != st || len(c.Points) < 2 {
				continue
			}
			p, first := c.Points[c.Peak], c.Points[0]
			row.PeakGrantsPerS, row.PeakClients, row.PeakBusy = p.GrantsPerS, p.Clients, p.Busy
			if c.Peak > 0 && first.GrantsPerS.Median > 0 && first.Clients > 0 {
				row.PeakShareOfLinear = p.GrantsPerS.Median / (first.GrantsPerS.Median / float64(first.Clients) * float64(p.Clients))
			}
			if c.Knee >= 0 {
				row.KneeClients = c.Points[c.Knee].Clients
			}
			if cs, ok := fixedCSMs(row.CS); ok && cs+row.ThinkMs > 0 {
				row.PeakBoundGrantsPerS = float64(p.Clients) * 1000 / (cs + row.ThinkMs)
			}
		}
		out = append(out, row)
	}
	return out
}

// timingOf returns the critical section and think time runs share, or
// "mixed: A; B" naming each (critical section, think time) when they
// differ, with think time 0.
func timingOf(runs []results.Run) (string, float64) {
	var seen []string
	for _, r := range runs {
		s := r.Config.CSMs + " think " + stats.FormatNum(r.Config.ThinkMs) + " ms"
		if !slices.Contains(seen, s) {
			seen = append(seen, s)
		}
	}
	switch len(seen) {
	case 0:
		return "", 0
	case 1:
		return runs[0].Config.CSMs, runs[0].Config.ThinkMs
	}
	return "mixed: " + strings.Join(seen, "; "), 0
}

// fixedCSMs returns the duration in ms of a fixed critical section written
// as RunConfig.CSMs ("fixed(5ms)"); false for any other.
func fixedCSMs(cs string) (float64, bool) {
	inner, ok := strings.CutPrefix(cs, "fixed(")
	if !ok {
		return 0, false
	}
	inner, ok = strings.CutSuffix(inner, ")")
	if !ok {
		return 0, false
	}
	d, err := time.ParseDuration(inner)
	if err != nil {
		return 0, false
	}
	return float64(d) / float64(time.Millisecond), true
}

// medianRoundTrip is the median of the runs' round-trip times
// (Run.RoundTripMs) in ms, 0 when none measured one.
func medianRoundTrip(runs []results.Run) float64 {
	var rtts []float64
	for _, r := range runs {
		if rtt := r.RoundTripMs(); rtt > 0 {
			rtts = append(rtts, rtt)
		}
	}
	return medianOf(rtts)
}

// medianFloorRoundTrip is the median of the runs' fastest round-trip
// times (Run.FloorRoundTripMs) in ms, 0 when none measured one.
func medianFloorRoundTrip(runs []results.Run) float64 {
	var rtts []float64
	for _, r := range runs {
		if rtt := r.FloorRoundTripMs(); rtt > 0 {
			rtts = append(rtts, rtt)
		}
	}
	return medianOf(rtts)
}

// medianOf is the median of xs, 0 when empty.
func medianOf(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	return stats.SpreadOf(xs).Median
}
