package results

import (
	"slices"
	"strings"
	"time"

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

// CostRow is one strategy's line of the like-for-like cost table
// (File.CostTable, CostTableOf): what the lock itself costs, each figure
// beside its bound, from runs whose critical section and think time are
// the same for every strategy (CS, ThinkMs). Round trips and commands per
// grant are counts that compare across machines and busy runs; ms and
// grants/s do not (Busy). docs/performance.md explains each figure.
type CostRow struct {
	// Strategy is the strategy's name.
	Strategy string `json:"strategy"`
	// CS is the critical section its cost runs ran (RunConfig.CSMs, e.g.
	// "fixed(5ms)") and ThinkMs their think time in ms; "mixed: ..."
	// when its runs differ (never in a bench: a test keeps it so).
	CS      string  `json:"cs"`
	ThinkMs float64 `json:"think_ms"`
	// TTLMs is the TTL of its 1-client cost runs in ms (a consensus lock
	// runs at its servers' floor, its critical section kept).
	TTLMs float64 `json:"ttl_ms"`
	// RoundTripMs is the median round-trip time measured during its
	// 1-client cost runs (Run.RoundTripMs: a PING every 100 ms, or a
	// serializable read on etcd and ZooKeeper), in ms, the unit of
	// RTTsPerHold; FloorRoundTripMs the fastest round trip measured to the
	// same servers (Run.FloorRoundTripMs: back-to-back PINGs), the unit of
	// the bounds. 0 when none was measured.
	RoundTripMs      float64 `json:"round_trip_ms"`
	FloorRoundTripMs float64 `json:"floor_round_trip_ms"`
	// RTTsPerHold is the overhead per hold (granting acquire call +
	// release call, 1 client on 1 key: nobody waits) in round trips of
	// RoundTripMs (FigureRTTsPerHold), over the windows of its 1-client
	// cost runs; RTTsPerHoldReference (2) is what two PING-like calls read.
	RTTsPerHold stats.Estimate `json:"rtts_per_hold"`
	// HoldP50Ms and HoldP99Ms are the same overhead in ms
	// (FigureHoldP50Ms, FigureHoldP99Ms); HoldBoundMs its lower bound, two
	// of the fastest round trips (2 × FloorRoundTripMs: an acquire and a
	// release each need one; 0 when no round trip was measured).
	HoldP50Ms   stats.Estimate `json:"hold_p50_ms"`
	HoldP99Ms   stats.Estimate `json:"hold_p99_ms"`
	HoldBoundMs float64        `json:"hold_bound_ms"`
	// ClientCmdsPerGrant is the median over its 1-client cost runs of the
	// commands the clients sent per grant (Run.ClientCommandsPerGrant),
	// ServerCmdsPerGrant of the commands the servers executed per grant
	// (Run.RoundTripsPerGrant: INFO commandstats, Lua's inner commands
	// included); 0 when not reported (locks on etcd and ZooKeeper).
	ClientCmdsPerGrant float64 `json:"client_cmds_per_grant"`
	ServerCmdsPerGrant float64 `json:"server_cmds_per_grant"`
	// HandoffP50Ms and HandoffP99Ms are the time from a release's
	// completion to the next waiting client's grant under contention
	// (FigureHandoffP50Ms, FigureHandoffP99Ms) over the windows of its
	// runs of the cost scenario (16 clients on one key in the bench
	// profiles); HandoffBoundMs one of the fastest round trips measured in
	// those runs (Run.FloorRoundTripMs): a waiter that asks after the
	// release completes needs one. A waiter whose request already waits at
	// the server behind the release can be granted sooner, so for a
	// polling lock the bound is a reference, not a floor.
	HandoffP50Ms   stats.Estimate `json:"handoff_p50_ms"`
	HandoffP99Ms   stats.Estimate `json:"handoff_p99_ms"`
	HandoffBoundMs float64        `json:"handoff_bound_ms"`
	// PeakGrantsPerS is the highest point of its capacity curve
	// (Capacity.Peak: grants/s with a key per client), at PeakClients
	// clients; PeakBoundGrantsPerS its upper bound, PeakClients × 1000 /
	// (critical section + think time in ms), when the critical section is
	// fixed (0 otherwise); PeakShareOfLinear the peak over linear scaling
	// of the fewest clients measured (0 when the peak is that point);
	// KneeClients the knee's client count (0: not reached). All zero
	// without cost runs at several client counts.
	PeakGrantsPerS      stats.Estimate `json:"peak_grants_per_s"`
	PeakClients         int            `json:"peak_clients"`
	PeakBoundGrantsPerS float64        `json:"peak_bound_grants_per_s"`
	PeakShareOfLinear   float64        `json:"peak_share_of_linear"`
	KneeClients         int            `json:"knee_clients"`
	// OverheadBusy is true when a 1-client cost run was measured on a
	// busy machine (Run.Busy), HandoffBusy when a run of the cost
	// scenario was, PeakBusy when a run of the peak was: their ms and
	// grants/s then say more about the machine; round trips and commands
	// still compare.
	OverheadBusy bool `json:"overhead_busy,omitempty"`
	HandoffBusy  bool `json:"handoff_busy,omitempty"`
	PeakBusy     bool `json:"peak_busy,omitempty"`
}

// CostTableOf returns the like-for-like cost table of f: a row for each
// strategy (in the order f.Strategies lists them, then any other in order
// of its first run) with an uncontended cost run (f.Cost) or a completed
// run of CostScenario (f.Runs). Runs that could not complete (Error set)
// are left out. nil when no strategy has any.
func CostTableOf(f *File) []CostRow {
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
	var out []CostRow
	for _, st := range order {
		var one, base, all []Run
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
		row := CostRow{Strategy: st,
			RTTsPerHold:    stats.EstimateOf(SamplesOf(one, FigureRTTsPerHold)),
			HoldP50Ms:      stats.EstimateOf(SamplesOf(one, FigureHoldP50Ms)),
			HoldP99Ms:      stats.EstimateOf(SamplesOf(one, FigureHoldP99Ms)),
			HandoffP50Ms:   stats.EstimateOf(SamplesOf(base, FigureHandoffP50Ms)),
			HandoffP99Ms:   stats.EstimateOf(SamplesOf(base, FigureHandoffP99Ms)),
			HandoffBoundMs: medianFloorRoundTrip(base),
		}
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

// CostScenario is the scenario whose runs are the contended cost cells
// (the handoff and the chooser's figures): bench.CostScenario.
const CostScenario = "baseline"

// timingOf returns the critical section and think time runs share, or
// "mixed: A; B" naming each (critical section, think time) when they
// differ, with think time 0.
func timingOf(runs []Run) (string, float64) {
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
func medianRoundTrip(runs []Run) float64 {
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
func medianFloorRoundTrip(runs []Run) float64 {
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
