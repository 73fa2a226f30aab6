// Package results defines the versioned result schema (results.json:
// File, Run and the types they hold), the files of a results folder by
// name, and loading, writing and merging results.json. It computes no
// figure and writes no report: package stats holds the statistics,
// figures the cost samples, curves and table (and bench.txt), compare sets
// two files side by side, outdir guards the output folder, and report
// writes report.md, details.md and index.html.
package results

import (
	"fmt"
	"slices"

	"github.com/lockbench/lockbench/checker"
	"github.com/lockbench/lockbench/checker/witness"
	"github.com/lockbench/lockbench/history/measure"
	"github.com/lockbench/lockbench/internal/noise"
	"github.com/lockbench/lockbench/stats"
)

// SchemaVersion is the version of results.json written by this package.
// Version 2 added the commit, seed, repeat, bench config, CPU model and
// kernel, acquire latency p99.9, fairness and the error breakdown; version 3
// each run's evidence counts and the checker's witnesses; version 4 each
// run's windows (cost samples), command counter, machine noise and working
// envelope, and the host's hypervisor flag, memory and CPU quota, and
// each run's inconclusive lines, missing evidence, liveness finding and
// earlier attempts, and the evidence's refusal counts.
const SchemaVersion = 4

// File is the whole results.json. docs/results-format.md
// documents every field with its unit; a test keeps the two in step.
type File struct {
	SchemaVersion int `json:"schema_version"`
	// Tool is the lockbench version ("lockbench 0.4.0"); Redis the
	// redis-server version string.
	Tool  string `json:"tool"`
	Redis string `json:"redis,omitempty"`
	// Commit is the VCS revision lockbench was built from ("-dirty" appended
	// when the work tree had changes), or "unknown".
	Commit string `json:"commit"`
	// Profile is the bench profile ("ci", "full") or "run" for a single run.
	Profile string `json:"profile"`
	// Command reproduces the whole bench or run.
	Command string `json:"command"`
	// Seed is the base seed: repeat i (from 0) of every cell runs seed Seed+i.
	Seed int64 `json:"seed"`
	// Repeat is how many times each (strategy, scenario) cell ran.
	Repeat int `json:"repeat"`
	// Config is the bench's configuration: the matrix and the base workload.
	// Each run's own configuration (a scenario may fix clients and TTL) is
	// in Run.Config.
	Config BenchConfig `json:"config"`
	// Started and Finished are wall-clock RFC 3339 times.
	Started  string `json:"started"`
	Finished string `json:"finished"`
	// Host describes the machine: cores, OS, Go version.
	Host Host `json:"host"`
	// Strategies describes each strategy that ran: summary and claims.
	Strategies []StrategyInfo `json:"strategies"`
	Runs       []Run          `json:"runs"`
	// Incomplete says why the bench or run stopped before every planned run
	// finished (interrupted, an environment error), with how many ran;
	// empty when it completed. A report of an incomplete file says so first.
	Incomplete string `json:"incomplete,omitempty"`
	// Sweep holds the client-sweep runs (baseline at several client counts)
	// behind the throughput-vs-clients plot; not part of the verdict matrix.
	Sweep []Run `json:"sweep,omitempty"`
	// Cost holds the uncontended cost runs: every strategy of the bench
	// without faults at 1 client on 1 key and at Config.CostClients
	// clients on as many keys (nobody waits), behind the overhead figures
	// (a hold's lock calls in ms and in round trips); not in the verdict
	// matrix, not gated.
	Cost []Run `json:"cost,omitempty"`
	// CostTable is what each lock costs, like for like: one row per
	// strategy with cost runs or runs of the cost scenario (baseline), each figure beside
	// its bound (figures.CostTableOf). figures.Write computes it from Runs and Cost, so it
	// always agrees with them; a reader may recompute it.
	CostTable []CostRow `json:"cost_table,omitempty"`
	// Sections are sections a command above the bench adds to the
	// report, shown first (lockbench diff's differences, worst first);
	// absent for a bench or a run.
	Sections []Section `json:"sections,omitempty"`
	// Shard says which part of a bench split over several runners this
	// folder holds (lockbench bench --shard I/N); absent for a whole
	// bench and for a merged one.
	Shard *ShardInfo `json:"shard,omitempty"`
	// Shards lists the parts a merged bench (lockbench merge) was joined
	// from, in shard order, each with its own host and times; absent
	// otherwise.
	Shards []ShardPart `json:"shards,omitempty"`
}

// ShardInfo describes one part of a bench split over several runners:
// which part, and which of the whole bench's planned runs it holds. The
// plan positions index the whole bench's runs in the order an unsharded
// bench runs them (its cells, then its client sweep, then its cost runs,
// from 0), so that lockbench merge can put the parts' runs back in that
// order and tell a missing or repeated run.
type ShardInfo struct {
	// Index is this part, from 1; Count how many parts the bench has.
	Index int `json:"index"`
	Count int `json:"count"`
	// Planned is how many runs the whole bench plans (cells, sweep and
	// cost runs; a cell's reruns not counted).
	Planned int `json:"planned"`
	// Runs, Sweep and Cost are the plan positions of this part's runs,
	// in the order of File.Runs, File.Sweep and File.Cost.
	Runs  []int `json:"runs,omitempty"`
	Sweep []int `json:"sweep,omitempty"`
	Cost  []int `json:"cost,omitempty"`
	// Hunt is true when this part runs the profile's hunt (in its hunt
	// folder).
	Hunt bool `json:"hunt,omitempty"`
}

// ShardPart is one part of a merged bench: the folder it was read from,
// the machine it ran on and when, and how many runs it held. Performance
// figures of parts on different hosts do not compare (see Host).
type ShardPart struct {
	// Index is the part, from 1.
	Index int `json:"index"`
	// Folder is the part's results folder as given to lockbench merge.
	Folder string `json:"folder"`
	// Host is the machine the part ran on.
	Host Host `json:"host"`
	// Started and Finished are the part's wall-clock RFC 3339 times.
	Started  string `json:"started"`
	Finished string `json:"finished"`
	// Runs is how many runs the part held (cells, sweep and cost runs).
	Runs int `json:"runs"`
}

// Section is one section of the report that a command above the bench
// writes (lockbench diff: the differences between two locks, worst first,
// with their tests and witnesses): a title, lead paragraphs, a table and
// notes, as text that both report formats render as is (Markdown escaped,
// HTML escaped).
type Section struct {
	// ID is the section's anchor in index.html, e.g. "diff".
	ID string `json:"id"`
	// Title is the section's heading.
	Title string `json:"title"`
	// Lead are paragraphs before the table.
	Lead []string `json:"lead,omitempty"`
	// Header names the table's columns; Rows are its cells (each row as
	// long as Header). No table when Header is empty.
	Header []string   `json:"header,omitempty"`
	Rows   [][]string `json:"rows,omitempty"`
	// Notes are lines after the table (a list).
	Notes []string `json:"notes,omitempty"`
}

// BenchConfig is the configuration a bench ran with: the profile's matrix,
// the base workload every run starts from, and the client sweep.
type BenchConfig struct {
	// Strategies and Scenarios span the matrix; pairs a scenario does not
	// apply to are left out.
	Strategies []string `json:"strategies"`
	Scenarios  []string `json:"scenarios"`
	// NotRun lists the scenarios lockbench has that the profile leaves
	// out, so that a report says what it did not test.
	NotRun []string `json:"not_run,omitempty"`
	// Workload is the base workload of every run (before a scenario fixes
	// its own clients, TTL or duration).
	Workload RunConfig `json:"workload"`
	// ClientSweep lists the client counts of the sweep, run on the baseline
	// for SweepStrategies; empty: no sweep.
	ClientSweep     []int    `json:"client_sweep,omitempty"`
	SweepStrategies []string `json:"sweep_strategies,omitempty"`
	// CostClients lists the client counts of the uncontended cost runs
	// (File.Cost), each on as many keys; empty: none.
	CostClients []int `json:"cost_clients,omitempty"`
}

// Host describes the machine that ran the bench. Performance figures from
// two different hosts cannot be compared.
type Host struct {
	// CPUs is the number of logical CPUs Go sees.
	CPUs int `json:"cpus"`
	// OS is GOOS/GOARCH, e.g. "linux/amd64".
	OS string `json:"os"`
	// Go is the Go version lockbench was built with.
	Go string `json:"go"`
	// CPUModel is the CPU's model name from /proc/cpuinfo ("unknown" if none).
	CPUModel string `json:"cpu_model"`
	// Kernel is the kernel release (/proc/sys/kernel/osrelease; "unknown" if none).
	Kernel string `json:"kernel"`
	// Hypervisor is true when the CPU reports a hypervisor (a virtual
	// machine: other guests may steal CPU time, see Run.Noise).
	Hypervisor bool `json:"hypervisor"`
	// MemoryMB is the machine's memory in MiB (0: unknown).
	MemoryMB int `json:"memory_mb,omitempty"`
	// CPUQuotaCores is the CPU limit of lockbench's control group, in
	// cores (0: none).
	CPUQuotaCores float64 `json:"cpu_quota_cores,omitempty"`
}

// StrategyInfo is the description of one strategy for the report.
type StrategyInfo struct {
	Name    string   `json:"name"`
	Summary string   `json:"summary"`
	Source  string   `json:"source,omitempty"`
	Claims  []string `json:"claims"` // e.g. "token-release", "renewal", "fencing"
	Policy  []string `json:"policy"` // e.g. "check-validity", "honour-lost", "ask-lock"; empty: checks nothing
	// Library is a library adapter's module and version as linked (from
	// go.mod), e.g. "github.com/go-redsync/redsync/v4 v4.18.1"; empty for
	// home-made strategies.
	Library string `json:"library,omitempty"`
	// TTLMs is the TTL in ms the bench ran this strategy at when it
	// differs from the profile's (0: the profile's), and TTLWhy says why:
	// its call budget at the profile's TTL was below the bench's minimum.
	// The critical section stayed the profile's, so costs compare.
	TTLMs  float64 `json:"ttl_ms,omitempty"`
	TTLWhy string  `json:"ttl_why,omitempty"`
	// Group is the report group the strategy is listed under (impl's
	// Info.Group: "Redis single-node", "Redis quorum", "fenced",
	// "libraries", "consensus locks"); empty in files that predate it,
	// whose reports derive it from Claims and Library (GroupOf).
	Group string `json:"group,omitempty"`
	// Server is the kind of server the lock lives on when it is not
	// Redis: "etcd" or "zookeeper"; empty for Redis.
	Server string `json:"server,omitempty"`
}

// Run is one (strategy, scenario, seed) run.
type Run struct {
	Strategy string `json:"strategy"`
	Scenario string `json:"scenario"`
	// ScenarioKind says where the scenario's faults act (chaos.Kind:
	// "none", "client" for the holder's own pauses, crashes and slow
	// critical sections, or a server-side kind: "process",
	// "replication", "network", "clock", "mixed"); empty in files that
	// predate it.
	ScenarioKind string `json:"scenario_kind,omitempty"`
	Seed         int64  `json:"seed"`
	// Expected is the summary expectation: "must-hold", "must-break" or "at-risk".
	Expected string `json:"expected"`
	// ExpectedChecks is the expectation per check ("exclusion", "resource",
	// "liveness"): "hold", "break" or "at-risk".
	ExpectedChecks map[string]string `json:"expected_checks"`
	// Reason explains the expectation in one line.
	Reason string `json:"reason"`
	// Verdict is the observed status per check: "ok", "violated",
	// "inconclusive" or "skipped".
	Verdict Verdict `json:"verdict"`
	// AsExpected is true when every check the verdict table gates showed
	// its expected verdict on enough evidence: nothing contradicted the
	// expectation (Unexpected is empty) and no gated check is inconclusive
	// (Inconclusive is empty). See Outcome.
	AsExpected bool `json:"as_expected"`
	// Unexpected lists, one line each, what contradicted the expectation (a
	// must-hold check violated, a must-break canary not found on enough
	// evidence, ...).
	Unexpected []string `json:"unexpected,omitempty"`
	// Inconclusive lists, one line each, the gated checks (expected to
	// hold or to break) that are inconclusive, with the evidence they
	// lacked and the flag that supplies it, e.g. "exclusion must hold:
	// inconclusive: 2 holds, 0 chances to overlap (need ≥ 10): run longer
	// (--duration) or with more clients (--clients)". Never a contradiction.
	Inconclusive []string `json:"inconclusive,omitempty"`
	// Missing names, per check ("exclusion", "resource", "fencing",
	// "availability"), the evidence the check lacked, whatever its
	// expectation: a check listed here found no violation and its verdict
	// is "inconclusive" (validate's evidence rules, or a porcupine
	// timeout). A violation is never listed: a witness is evidence.
	Missing map[string]MissingEvidence `json:"missing_evidence,omitempty"`
	// LivenessFinding says, when the strategy granted (almost) nothing,
	// how little and why, from the history's evidence counts (timeouts of
	// whole calls and of per-node calls, split votes, contention), e.g.
	// "granted 0 times to 256 clients in 188 acquires: 188 acquires timed
	// out (100%); per-node: 940 of 940 timed out"; "" otherwise. It is
	// reported, not gated.
	LivenessFinding string `json:"liveness_finding,omitempty"`
	// Earlier are the attempts of this (strategy, scenario, seed) cell
	// that a bench ran before this one and found inconclusive, oldest
	// first: a bench reruns an inconclusive cell with the next seed and a
	// longer duration (bench.MaxReruns times at most), keeps every attempt
	// here with its history, and reports this, the last one.
	Earlier []Run `json:"earlier_attempts,omitempty"`
	// Violations is the number of exclusion violations (overlapping holds)
	// plus resource violations (lost updates).
	Violations int `json:"violations"`
	// Grants is the number of successful outermost acquires.
	Grants int `json:"grants"`
	// Acquires counts acquire attempts by result: ok, fail, info.
	Acquires map[string]int `json:"acquires"`
	// ThroughputPerS is grants per second of run time.
	ThroughputPerS float64 `json:"throughput_per_s"`
	// AcquireLatencyMs are percentiles of successful acquire latency, in ms,
	// including retries (from the first attempt to the grant).
	AcquireLatencyMs stats.Latency `json:"acquire_latency_ms"`
	// GrantCallMs are percentiles, in ms, of the granting acquire call
	// alone (invoke to complete of the attempt that was granted, without
	// the failed attempts and backoff before it): what one acquire costs
	// the client, where AcquireLatencyMs is mostly the wait for the lock
	// when clients contend for a key.
	GrantCallMs stats.Latency `json:"grant_call_ms"`
	// RoundTripsPerGrant is the Redis commands the servers executed per
	// successful acquire (0 if unknown), from INFO commandstats deltas
	// (calls + rejected_calls) taken on every node before and after the
	// workload, minus the harness's own commands (INFO, PING, nemesis and
	// set-up commands): retries and calls that reached a server but timed
	// out on the client are counted; Redis also counts each command a Lua
	// script runs, so a script strategy's figure is above its network round
	// trips.
	RoundTripsPerGrant float64 `json:"round_trips_per_grant,omitempty"`
	// ClientCommandsPerGrant is the commands the clients sent per
	// successful acquire (0 if unknown), counted by a go-redis hook (a
	// pipeline counts each command; a command that never reached a server
	// counts too): the client-side cross-check of RoundTripsPerGrant.
	ClientCommandsPerGrant float64 `json:"client_commands_per_grant,omitempty"`
	// ServerCommandsPerAttempt is the Redis commands the servers executed
	// (as RoundTripsPerGrant: INFO commandstats, the harness's own left
	// out) per acquire attempt of the clients (ok, fail and info), 0 if
	// unknown: what one call costs the servers, an adapter's inner
	// retries included, whoever sent them.
	ServerCommandsPerAttempt float64 `json:"server_commands_per_attempt,omitempty"`
	// Availability is what the clients' acquires came to outside every
	// fault window (the first entry, fault "quiet") and in each fault
	// window (measure.AvailabilityOf): the availability and grant latency
	// per fault window beside the quiet time.
	Availability []AvailabilityWindow `json:"availability,omitempty"`
	// Liveness figures.
	Liveness LivenessFigures `json:"liveness"`
	// Fairness is Jain's fairness index over the grants per client (Jain,
	// Chiu and Hawe 1984): (Σx)²/(n·Σx²) over the run's n clients, clients
	// without a grant included. 1: every client got as many grants; 1/n: one
	// client got them all; 0: no grant at all.
	Fairness float64 `json:"fairness"`
	// Errors counts, from the history, the ways a lock call did not give
	// the client what it wanted.
	Errors ErrorBreakdown `json:"errors"`
	// Config is the run's configuration (clients, keys, TTL, duration, ...).
	Config RunConfig `json:"config"`
	// Faults are the nemesis windows, ms since run start.
	Faults []Fault `json:"faults,omitempty"`
	// Checks holds each checker's message.
	Checks map[string]string `json:"checks"`
	// Evidence counts what the run's verdicts rest on (holds, clients,
	// chances to overlap, acquires and releases by result, resource
	// operations, faults recorded, landed and missed): see
	// measure.Evidence.
	Evidence measure.Evidence `json:"evidence"`
	// Witnesses are the checker's witnesses of every violation it found
	// (overlapping holds with the interval both held, lost updates and
	// stale writes with their operations, fencing, reentrancy and probe
	// witnesses), at most witness.MaxWitnesses per check, with the total
	// found per check; times in ns since run start, as in the history.
	// Reports and plots draw violations from these alone.
	Witnesses witness.Witnesses `json:"witnesses"`
	// History is the history file, relative to the results folder.
	History string `json:"history"`
	// Visualization is porcupine's HTML, relative to the results folder; empty if none was written.
	Visualization string `json:"visualization,omitempty"`
	// DurationS is the measured run time in seconds (workload only).
	DurationS float64 `json:"duration_s"`
	// Command reproduces this run alone.
	Command string `json:"command"`
	// Redis is the redis-server version the run used.
	Redis string `json:"redis,omitempty"`
	// Server is the kind and version of the servers of a lock that does
	// not live on Redis, as they report it at start, e.g. "etcd 3.7.3",
	// "zookeeper 3.8.0".
	Server string `json:"server,omitempty"`
	// Error is set when the run could not complete (environment failure).
	Error string `json:"error,omitempty"`
	// ServerCPU is redis-server's CPU busy during the run, in cores (INFO
	// cpu used_cpu_sys+used_cpu_user delta / wall time; 0.95 = 95% of one
	// core); 0 when not measured (lockbench perf measures it).
	ServerCPU float64 `json:"server_cpu,omitempty"`
	// ClientCPU is the load generator's CPU busy during the run, in cores
	// (getrusage; for redis-benchmark its child rusage); 0 when not measured.
	ClientCPU float64 `json:"client_cpu,omitempty"`
	// Windows are the run's cost samples: figures.WindowsPerRun equal time
	// windows of its history (figures.WindowsOf), each with its grants/s,
	// acquire latency p50 and p99 and commands per grant. Reports and
	// compare take medians and 95% intervals over them (stats.Estimate).
	Windows []Window `json:"windows,omitempty"`
	// CommandCounter is the clients' command counter at the windows'
	// boundaries (figures.CounterAtWindows: interpolated from samples taken
	// every few ms during the run), from which each window's commands
	// per grant follow.
	CommandCounter []CounterSample `json:"command_counter,omitempty"`
	// Noise is how busy the machine was during the run (other processes'
	// CPU, steal, run queue, round-trip times to the servers); nil when
	// not measured (lockbench check of a bare history).
	Noise *noise.Summary `json:"noise,omitempty"`
	// Envelope compares the strategy's call budget, derived from the TTL,
	// with the measured round-trip time; nil for strategies without such
	// a budget.
	Envelope *Envelope `json:"envelope,omitempty"`
}

// RoundTripMs is the round-trip time lockbench measured to the run's
// servers during the run, in ms: the median over the servers of each
// one's p50 (Noise.RTTDuring: a PING, or for etcd and ZooKeeper a
// serializable read through the lock's client library, every 100 ms
// under the run's load), else before the run (Noise.RTTBefore); 0 when
// none was measured. It is the unit of figures.FigureRTTsPerHold.
func (r Run) RoundTripMs() float64 {
	if r.Noise == nil {
		return 0
	}
	for _, rtts := range [][]noise.RTT{r.Noise.RTTDuring, r.Noise.RTTBefore} {
		var p50 []float64
		for _, x := range rtts {
			if x.N > 0 {
				p50 = append(p50, x.P50Ms)
			}
		}
		if len(p50) > 0 {
			slices.Sort(p50)
			n := len(p50)
			if n%2 == 1 {
				return p50[n/2]
			}
			return (p50[n/2-1] + p50[n/2]) / 2
		}
	}
	return 0
}

// FloorRoundTripMs is the fastest round-trip time lockbench measured to
// the run's servers, in ms: per server the smaller p50 of the PINGs
// before the run (back to back on one connection: Noise.RTTBefore) and
// of those during it (Noise.RTTDuring), the median over the servers; 0
// when none was measured. No call to a server returns sooner, so n of
// them bound a lock's calls from below (CostRow.HoldBoundMs); it is
// usually below RoundTripMs, whose sparse PINGs pay a wake-up each.
func (r Run) FloorRoundTripMs() float64 {
	if r.Noise == nil {
		return 0
	}
	floor := map[string]float64{}
	var order []string
	for _, rtts := range [][]noise.RTT{r.Noise.RTTBefore, r.Noise.RTTDuring} {
		for _, x := range rtts {
			if x.N == 0 {
				continue
			}
			if v, ok := floor[x.Server]; !ok || x.P50Ms < v {
				if !ok {
					order = append(order, x.Server)
				}
				floor[x.Server] = x.P50Ms
			}
		}
	}
	p50 := make([]float64, 0, len(order))
	for _, s := range order {
		p50 = append(p50, floor[s])
	}
	if len(p50) == 0 {
		return 0
	}
	slices.Sort(p50)
	n := len(p50)
	if n%2 == 1 {
		return p50[n/2]
	}
	return (p50[n/2-1] + p50[n/2]) / 2
}

// Busy reports whether the run's figures were taken on a busy machine
// (Noise.Busy).
func (r Run) Busy() bool { return r.Noise != nil && r.Noise.Busy }

// NotComparable reports whether the run's cost figures are outside the
// strategy's working envelope (Envelope.Comparable false).
func (r Run) NotComparable() bool { return r.Envelope != nil && !r.Envelope.Comparable }

// QuietWindow is the Fault of the AvailabilityWindow outside every fault
// window.
const QuietWindow = "quiet"

// AvailabilityWindow is what the clients' outermost acquires came to in
// one fault window, or outside every one (Fault QuietWindow).
type AvailabilityWindow struct {
	// Fault names the window (the scenario's fault, as results' faults[]
	// name it) or QuietWindow.
	Fault string `json:"fault"`
	// StartMs and EndMs bound the fault window, in ms since the run
	// started; 0 for the quiet entry.
	StartMs float64 `json:"start_ms,omitempty"`
	EndMs   float64 `json:"end_ms,omitempty"`
	// Acquires counts the acquire calls invoked in the window; OK, Fail
	// and Info their results.
	Acquires int `json:"acquires"`
	OK       int `json:"ok"`
	Fail     int `json:"fail"`
	Info     int `json:"info"`
	// Grants counts the grants that completed in the window (a call
	// invoked before it included); GrantsPerS divides by its length.
	Grants     int     `json:"grants"`
	GrantsPerS float64 `json:"grants_per_s"`
	// GrantCallP50Ms and GrantCallP99Ms are percentiles of those grants'
	// call durations (invoke to grant of the granting call), in ms;
	// absent without a grant.
	GrantCallP50Ms *float64 `json:"grant_call_p50_ms,omitempty"`
	GrantCallP99Ms *float64 `json:"grant_call_p99_ms,omitempty"`
	// AtBudget counts the acquire calls invoked in the window that took
	// at least 90% of the call budget (op_timeout_ms), whatever their
	// result: a lock waiting out its deadline.
	AtBudget int `json:"at_budget"`
}

// MissingEvidence is what one check lacked to call the absence of a
// violation a pass.
type MissingEvidence struct {
	// What names the evidence with its count and the documented minimum,
	// e.g. "2 holds, 0 chances to overlap (need ≥ 10)", "no fault landed
	// (3 injected, 3 missed)", "714 of 719 acquires unknown (99%; at most
	// 50%)".
	What string `json:"what"`
	// Fix names what would supply it, with the flag, e.g. "run longer
	// (--duration) or with more clients (--clients)"; "" when no flag
	// can.
	Fix string `json:"fix,omitempty"`
}

// String is "What: Fix", or What alone when there is no fix.
func (m MissingEvidence) String() string {
	if m.Fix == "" {
		return m.What
	}
	return m.What + ": " + m.Fix
}

// Outcomes of a run against its expectation (Run.Outcome).
const (
	// OutcomeAsExpected: every gated check showed its expected verdict.
	OutcomeAsExpected = "as-expected"
	// OutcomeUnexpected: something contradicted the expectation.
	OutcomeUnexpected = "unexpected"
	// OutcomeInconclusive: nothing contradicted the expectation, but a
	// gated check lacked the evidence to confirm it.
	OutcomeInconclusive = "inconclusive"
)

// Outcome is the run against its expectation: "unexpected" when
// something contradicted it (Unexpected, or AsExpected false with no
// line saying why), else "inconclusive" when a gated check lacked
// evidence (Inconclusive), else "as-expected". Unexpected wins over
// inconclusive, as lockbench's exit codes do (1 over 4).
func (r Run) Outcome() string {
	switch {
	case len(r.Unexpected) > 0:
		return OutcomeUnexpected
	case len(r.Inconclusive) > 0:
		return OutcomeInconclusive
	case !r.AsExpected:
		return OutcomeUnexpected
	}
	return OutcomeAsExpected
}

// Verdict is the observed status per check.
type Verdict struct {
	Exclusion  checker.Status `json:"exclusion"`
	Resource   checker.Status `json:"resource"`
	Liveness   checker.Status `json:"liveness"`
	Fencing    checker.Status `json:"fencing,omitempty"`
	Reentrancy checker.Status `json:"reentrancy,omitempty"`
	// Renewal is renewal liveness: no lease lost with no fault while its
	// holder ran (checker.Renewal); gated for locks that claim renewal.
	Renewal checker.Status `json:"renewal,omitempty"`
	// The contract checks' verdicts (verdicts.ContractChecks: promises
	// every lock makes about its own calls); empty in files that predate
	// them. Orphans: no acquire that said fail left its token on the
	// servers. Lost: a lock that claims renewal signals lost in time,
	// and no lock signals it for a released lease. Extends: no lease is
	// extended after its release. Reasons: no failed release or extend
	// states a reason (expired, taken) the server state rules out.
	Orphans checker.Status `json:"orphans,omitempty"`
	Lost    checker.Status `json:"lost,omitempty"`
	Extends checker.Status `json:"extends,omitempty"`
	Reasons checker.Status `json:"reasons,omitempty"`
}

// ErrorBreakdown counts the unwanted outcomes of a run's lock calls, from
// its history (whole-lock operations of the clients; per-node calls of a
// quorum strategy and the harness's probes are left out).
type ErrorBreakdown struct {
	// NotAcquired is the number of outermost acquire attempts that
	// certainly failed (result fail: the lock was held by another).
	NotAcquired int `json:"not_acquired"`
	// Lost is the number of holds the client learned it had lost before
	// releasing: the strategy signalled it (a lost operation), a renewal
	// certainly failed (an extend with result fail), or the lease's
	// validity deadline had passed when the release was invoked. A hold
	// counts once however many of these it shows.
	Lost int `json:"lost"`
	// ExpiredOnRelease is the number of holds whose release (any depth)
	// failed: the key was gone or held by another owner.
	ExpiredOnRelease int `json:"expired_on_release"`
	// Info is the number of lock operations (acquire, release, extend, any
	// depth) whose outcome is unknown (result info: a timeout or connection
	// error).
	Info int `json:"info"`
}

// LivenessFigures describe availability during the run.
type LivenessFigures struct {
	// LongestUnavailableMs is the longest time, over all keys, between two grants of a key, in ms.
	LongestUnavailableMs float64 `json:"longest_unavailable_ms"`
	// UnavailableMsByKey is the longest time between two grants of each key, in ms.
	UnavailableMsByKey map[string]float64 `json:"unavailable_ms_by_key,omitempty"`
	// RecoveryMs is the time from the end of the last fault to the next grant, in ms (-1: no grant after it; 0: no fault).
	RecoveryMs float64 `json:"recovery_ms"`
	// FailedShare is the share of acquire attempts that failed; InfoShare of those with unknown outcome.
	FailedShare float64 `json:"failed_share"`
	InfoShare   float64 `json:"info_share"`
	// GrantsDuringFaults counts grants invoked and completed inside a fault window.
	GrantsDuringFaults int `json:"grants_during_faults"`
	// Deadlocked lists keys left without a TTL or not acquirable within TTL + 1 s after the run.
	Deadlocked []string `json:"deadlocked,omitempty"`
	// Orphans counts the keys the observer found holding the token of an
	// acquire with an unknown outcome (or of a partial acquire on fewer
	// than a majority of the nodes that the lock could not be sure to
	// undo): a key blocked with no holder, expected after an unknown
	// outcome; LongestOrphanMs is how long the longest kept its key, in ms.
	Orphans         int     `json:"orphans,omitempty"`
	LongestOrphanMs float64 `json:"longest_orphan_ms,omitempty"`
}

// RunConfig is the configuration of one run.
type RunConfig struct {
	Clients int     `json:"clients"`
	Keys    int     `json:"keys"`
	TTLMs   float64 `json:"ttl_ms"`
	// OpTimeoutMs is each lock call's budget in ms (--op-timeout, or the
	// strategy's default); 0 when not recorded.
	OpTimeoutMs float64 `json:"op_timeout_ms,omitempty"`
	DurationMs  float64 `json:"duration_ms"`
	CSMs        string  `json:"cs"`    // CS duration distribution, e.g. "uniform(1ms,5ms) tail 5%×2ttl"
	Retry       string  `json:"retry"` // retry policy
	// ThinkMs is the pause between a release and the next acquire, in ms
	// (--think, or the scenario's); 0 (absent) when none.
	ThinkMs    float64  `json:"think_ms,omitempty"`
	Topology   string   `json:"topology"` // e.g. "single", "independent:5"
	Fencing    string   `json:"fencing"`  // off, writes, all
	Reentrancy int      `json:"reentrancy"`
	Policy     []string `json:"policy"`
	// Backend runs the Redis servers: process, docker or external.
	Backend string `json:"backend,omitempty"`
	// Image is the Docker image of the docker backend ("" otherwise).
	Image string `json:"image,omitempty"`
	// Library holds a library adapter's effective library settings by flag
	// name, defaults included (e.g. "redsync-tries": "1"); empty for
	// home-made strategies.
	Library map[string]string `json:"library,omitempty"`
	// Adjusted lists, one line each, the settings the run used other than
	// it was asked for, "--flag FROM → TO (why)": a scenario that needs a
	// longer TTL (the critical sections, think time and retry policy
	// scaled with it), a longer duration, its own client count or think
	// time, or a lock whose servers enforce a longer TTL. The fields above
	// are what ran. Empty when the run used the settings it was asked for.
	Adjusted []string `json:"adjusted,omitempty"`
	// ScheduleWaitMs is how long after the clients started every one of
	// them had made its first lock call, in ms: the readiness barrier the
	// fault schedule starts at; the clients ran the duration after it. A
	// client slow to start (an adapter process) makes it long. 0 in runs
	// that predate it.
	ScheduleWaitMs float64 `json:"schedule_wait_ms,omitempty"`
}

// Fault is one nemesis window, in ms since run start.
type Fault struct {
	Name    string  `json:"name"`
	StartMs float64 `json:"start_ms"`
	EndMs   float64 `json:"end_ms"`
	Note    string  `json:"note,omitempty"`
}

// KnownVerdict reports whether v is a value a check's verdict may take:
// "ok", "violated", "inconclusive", "skipped", or "" (not recorded).
func KnownVerdict(v checker.Status) bool {
	switch v {
	case "", checker.OK, checker.Violated, checker.Inconclusive, checker.Skipped:
		return true
	}
	return false
}

// UnknownVerdicts lists, one line each, the checks whose stored verdict is
// not a KnownVerdict (e.g. "exclusion verdict \"banana\" is none of ok,
// violated, inconclusive, skipped"): lockbench writes none, so such a run
// comes from an edited file or another tool, and report shows it as
// unexpected.
func (r Run) UnknownVerdicts() []string {
	var out []string
	for _, c := range []struct {
		name string
		got  checker.Status
	}{
		{"exclusion", r.Verdict.Exclusion}, {"resource", r.Verdict.Resource}, {"liveness", r.Verdict.Liveness},
		{"fencing", r.Verdict.Fencing}, {"reentrancy", r.Verdict.Reentrancy}, {"orphans", r.Verdict.Orphans},
		{"lost", r.Verdict.Lost}, {"extends", r.Verdict.Extends}, {"reasons", r.Verdict.Reasons},
	} {
		if !KnownVerdict(c.got) {
			out = append(out, fmt.Sprintf("%s verdict %q is none of ok, violated, inconclusive, skipped", c.name, c.got))
		}
	}
	return out
}

// Contradictions lists, one line each, the checks whose stored verdict
// contradicts the stored per-check expectation (ExpectedChecks): a "hold"
// check "violated", a "break" check neither "violated" nor "inconclusive"
// (an inconclusive check lacked evidence: it contradicts nothing).
// lockbench sets AsExpected from the same rule (and a few more: fencing,
// reentrancy, availability during faults), so a run marked AsExpected with
// contradictions here comes from an edited file or another tool; report
// uses it so that it never shows such a run as expected.
func (r Run) Contradictions() []string {
	var out []string
	for _, c := range []struct {
		name string
		got  checker.Status
	}{
		{"exclusion", r.Verdict.Exclusion}, {"resource", r.Verdict.Resource}, {"liveness", r.Verdict.Liveness},
	} {
		switch want := r.ExpectedChecks[c.name]; {
		case want == "hold" && c.got == checker.Violated:
			out = append(out, fmt.Sprintf("%s must hold but is %s", c.name, c.got))
		case want == "break" && c.got != checker.Violated && c.got != checker.Inconclusive:
			out = append(out, fmt.Sprintf("%s must break (canary) but is %s", c.name, orNone(string(c.got))))
		}
	}
	return out
}

// orNone returns s, or "none" when s is empty.
func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
