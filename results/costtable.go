package results

import (
	"github.com/lockbench/lockbench/stats"
)

// CostRow is one strategy's line of the like-for-like cost table
// (File.CostTable, figures.CostTableOf): what the lock itself costs, each figure
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
	// release call, 1 client on 1 key: nobody waits) in round trips
	// (figures.FigureRTTsPerHold): counted by
	// lockbench's Redis clients where it holds them (RTTsCounted), else
	// the calls' time in round trips of RoundTripMs; over the windows of
	// its 1-client cost runs. figures.RTTsPerHoldReference (2) is what two
	// PING-like calls read.
	RTTsPerHold stats.Estimate `json:"rtts_per_hold"`
	// RTTsCounted says RTTsPerHold is a count (the built-in strategies),
	// not a time ratio (adapters).
	RTTsCounted bool `json:"rtts_counted,omitempty"`
	// HoldP50Ms and HoldP99Ms are the same overhead in ms
	// (figures.FigureHoldP50Ms, figures.FigureHoldP99Ms); HoldBoundMs its lower bound, two
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
	// (figures.FigureHandoffP50Ms, figures.FigureHandoffP99Ms) over the windows of its
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
	// (figures.Capacity.Peak: grants/s with a key per client), at PeakClients
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
