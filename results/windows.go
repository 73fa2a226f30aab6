package results

// Window is one of a run's figures.WindowsPerRun equal time windows, cut from its
// history (figures.WindowsOf): the figures of the grants that completed in it.
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
	// grants (measure.Grants; linear interpolation, as stats.Percentiles); absent when the
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
	// granting acquire call plus the release call (measure.HoldCalls), what
	// the lock costs per hold when nobody waits; absent without one.
	HoldP50Ms *float64 `json:"hold_p50_ms,omitempty"`
	HoldP99Ms *float64 `json:"hold_p99_ms,omitempty"`
	// RoundTripsPerHold is the median count of round trips the same
	// holds' lock calls made (measure.HoldCalls's rounds, counted on the
	// clients' own connections; a quorum lock's parallel commands share
	// one); absent when they were not counted (adapters).
	RoundTripsPerHold *float64 `json:"round_trips_per_hold,omitempty"`
	// HandoffP50Ms and HandoffP99Ms are percentiles, in ms, of the
	// handoffs that completed in the window: from a release's completion
	// to the next grant of the key to a client that was waiting
	// (measure.Handoffs); absent without one (nobody waited).
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
