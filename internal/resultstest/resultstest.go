// Package resultstest holds the results files that the tests of the
// packages reading them (results, figures, compare, report) share: a small
// bench with every kind of cell, cost windows around a throughput, and
// capacity runs. Tests only; nothing in lockbench's commands imports it.
package resultstest

import (
	"github.com/lockbench/lockbench/internal/noise"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/stats"
)

// SampleFile is a small bench: two strategies over two scenarios, three seeds
// for one pair, one unexpected result and one strategy name that is an HTML
// injection attempt.
func SampleFile() *results.File {
	run := func(strategy, scenario string, seed int64, expected string, v results.Verdict, asExpected bool, tput float64) results.Run {
		return results.Run{
			Strategy: strategy, Scenario: scenario, Seed: seed,
			Expected: expected, Reason: strategy + " under " + scenario + " because reasons",
			ExpectedChecks: map[string]string{"exclusion": "hold"},
			Verdict:        v, AsExpected: asExpected,
			Grants: int(tput * 5), ThroughputPerS: tput,
			Acquires:         map[string]int{"ok": int(tput * 5), "fail": 3, "info": 1},
			AcquireLatencyMs: stats.Latency{P50: 1.5, P90: 3, P99: tput / 100, Max: 42, Samples: 100},
			Liveness:         results.LivenessFigures{LongestUnavailableMs: 120, RecoveryMs: -1, FailedShare: 0.25, InfoShare: 0.01},
			Config:           results.RunConfig{Clients: 8, Keys: 1, TTLMs: 100, DurationMs: 5000, CSMs: "fixed(5ms)", Retry: "exponential:2ms:20ms", Topology: "single"},
			Checks:           map[string]string{"exclusion": "no overlap", "resource": "linearizable"},
			History:          "histories/" + scenario + " seed.jsonl",
			Command:          "lockbench run --strategy " + strategy + " --scenario " + scenario,
		}
	}
	ok := results.Verdict{Exclusion: "ok", Resource: "ok", Liveness: "ok"}
	bad := results.Verdict{Exclusion: "violated", Resource: "violated", Liveness: "ok"}
	evil := "<script>alert(1)</script>"
	broken := run("set-nx-px", "pause-holder", 1, "must-hold", bad, false, 300)
	broken.Unexpected = []string{"exclusion violated: 2 overlapping holds"}
	broken.Violations = 2
	broken.Visualization = "javascript:alert(2)"
	broken.Faults = []results.Fault{{Name: "pause", StartMs: 1000, EndMs: 1300, Note: "SIGSTOP holder"}}
	busy := run("token-lua", "baseline", 2, "must-hold", ok, true, 1200)
	busy.Noise = &noise.Summary{Samples: 10, OtherCPUCores: noise.Stat{Mean: 0.6, Max: 1.2}, RunQueue: noise.Stat{Mean: 3, Max: 5},
		RTTBefore: []noise.RTT{{Server: "127.0.0.1:1", P50Ms: 0.05, P99Ms: 0.2, N: 50}},
		Busy:      true, Why: "other processes used 0.60 cores on average (max 1.20; threshold 0.25)"}
	outside := run("set-nx-px", "baseline", 1, "must-hold", ok, true, 1100)
	outside.Envelope = &results.Envelope{BudgetMs: 5, Scope: "whole call", Rule: "0.05×TTL", RTTP99Ms: 7, Why: "call budget 5.00 ms is below the round-trip p99 7.00 ms"}
	f := &results.File{
		Tool: "lockbench test", Redis: "7.2.4", Profile: "ci",
		Command: "lockbench bench --profile ci --seed 1",
		Started: "2025-01-01T00:00:00Z", Finished: "2025-01-01T00:01:00Z",
		Host:   results.Host{CPUs: 2, OS: "linux/amd64", Go: "go1.26"},
		Config: results.BenchConfig{NotRun: []string{"latency", "random"}},
		Strategies: []results.StrategyInfo{
			{Name: "token-lua", Summary: "SET NX PX + Lua release", Claims: []string{"token-release"}},
			{Name: "set-nx-px", Summary: "SET NX PX, DEL release", Policy: nil},
			{Name: evil, Summary: "an injection attempt", Source: "https://example.com/a?b=c&d=e"},
		},
		Runs: []results.Run{
			run("token-lua", "baseline", 1, "must-hold", ok, true, 1000),
			busy,
			run("token-lua", "baseline", 3, "must-hold", ok, true, 900),
			outside,
			run("token-lua", "pause-holder", 1, "must-break", bad, true, 500),
			broken,
			run(evil, "baseline", 1, "at-risk", ok, true, 10),
		},
	}
	// Cost windows around each run's throughput (p99 = throughput/100).
	for i := range f.Runs {
		r := &f.Runs[i]
		SetPerf(r, r.ThroughputPerS, r.AcquireLatencyMs.P99)
		if r.Strategy == "token-lua" && r.Scenario == "baseline" {
			for j := range r.Windows {
				h := 0.5 + 0.1*float64(j)
				r.Windows[j].HandoffP50Ms = &h
			}
		}
	}
	// token-lua's uncontended cost run: 6 windows, hold p50 0.2-0.25 ms at
	// a 0.1 ms round trip, 2 round trips a hold counted.
	over := run("token-lua", "baseline", 1501, "must-hold", ok, true, 150)
	over.Config.Clients = 1
	over.Noise = &noise.Summary{RTTDuring: []noise.RTT{{Server: "127.0.0.1:1", P50Ms: 0.1, P99Ms: 0.2, N: 10}}}
	for j := range 6 {
		h := 0.2 + 0.01*float64(j)
		two := 2.0
		over.Windows = append(over.Windows, results.Window{StartMs: float64(j), EndMs: float64(j + 1), Grants: 30, GrantsPerS: 150, HoldP50Ms: &h, RoundTripsPerHold: &two})
	}
	f.Cost = []results.Run{over}
	return f
}

// jitter spreads a run's window values ±2.5% around their centre, the
// spread of a quiet machine.
var jitter = []float64{-0.025, 0.01, -0.01, 0.025, 0, 0.005}

// SetPerf gives a run WindowsPerRun windows around grants/s tput and
// acquire p99 p99 (p50 p99/4, 11 commands per grant), spread by jitter.
func SetPerf(r *results.Run, tput, p99 float64) {
	r.ThroughputPerS, r.AcquireLatencyMs.P99 = tput, p99
	r.Windows = nil
	for i, j := range jitter {
		p50, p, c := p99/4*(1+j), p99*(1+j), 11*(1+j)
		r.Windows = append(r.Windows, results.Window{StartMs: float64(i) * 100, EndMs: float64(i+1) * 100, Grants: int(tput / 10),
			GrantsPerS: tput * (1 + j), AcquireP50Ms: &p50, AcquireP99Ms: &p, CommandsPerGrant: &c})
	}
}

// CapacityRun is an uncontended cost run of strategy at clients clients
// whose 6 windows all granted rate grants/s.
func CapacityRun(strategy string, clients int, rate float64) results.Run {
	r := results.Run{Strategy: strategy, Scenario: "baseline", Config: results.RunConfig{Clients: clients, Keys: clients}, ThroughputPerS: rate, RoundTripsPerGrant: 4, ClientCommandsPerGrant: 2}
	for j := range 6 {
		r.Windows = append(r.Windows, results.Window{StartMs: float64(j), EndMs: float64(j + 1), GrantsPerS: rate + float64(j)})
	}
	return r
}
