package bench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/lockbench/lockbench/chaos"
	"github.com/lockbench/lockbench/cluster"
	"github.com/lockbench/lockbench/figures"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/adapterclient"
	"github.com/lockbench/lockbench/impl/strategies"
	"github.com/lockbench/lockbench/internal/errs"
	"github.com/lockbench/lockbench/outdir"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/shard"
	"github.com/lockbench/lockbench/validate"
	"github.com/lockbench/lockbench/verdicts"
	"github.com/lockbench/lockbench/workload"
)

// Version is lockbench's version, written into results.json ("tool") and
// printed by lockbench --version. Its minor number follows
// results.SchemaVersion: 0.4.x writes schema 4.
const Version = "0.4.0"

// commitFromLinker is the VCS revision the Makefile stamps with
// -ldflags "-X github.com/lockbench/lockbench/bench.commitFromLinker=REV",
// for builds without Go's own VCS stamping (e.g. go build -buildvcs=false,
// or a copy of the source outside git). Set only by the linker.
var commitFromLinker string

// Commit returns the VCS revision lockbench was built from: Go's vcs.revision
// build setting (with "-dirty" appended when vcs.modified is true), else the
// revision the Makefile stamped at link time, else "unknown" (go test, go
// run outside a git work tree).
func Commit() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		rev, dirty := "", false
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		if rev != "" {
			if dirty {
				rev += "-dirty"
			}
			return rev
		}
	}
	if commitFromLinker != "" {
		return commitFromLinker
	}
	return "unknown"
}

// Profile is a named matrix of runs.
type Profile struct {
	// Name is "ci", "full" or "adapters".
	Name string
	// Summary says what the profile is for.
	Summary string
	// Strategies and Scenarios span the matrix (every pair that applies
	// runs, unless Only narrows it).
	Strategies, Scenarios []string
	// Only narrows the matrix for some strategies: strategy → the only
	// scenarios (of Scenarios) it runs. A strategy not in it runs all.
	Only map[string][]string
	// Seeds is how many times each pair runs by default (repeats; seeds
	// base..base+Seeds-1); Options.Repeat overrides it.
	Seeds int
	// Workload is the base workload of every run.
	Workload workload.Config
	// ClientSweep lists client counts for the throughput-vs-clients plot,
	// run on the baseline for SweepStrategies; empty: no sweep.
	ClientSweep     []int
	SweepStrategies []string
	// CostClients, when set, adds the uncontended cost runs (File.Cost):
	// every strategy of the profile under the cost scenario at 1 client
	// and at each of these client counts, each client on a key of its own
	// (nobody waits: the overhead of the lock's calls), for CostDuration
	// each; not gated.
	CostClients  []int
	CostDuration time.Duration
	// Scales, when set, runs every cell at each of these time scales (TTL,
	// duration, seeds) instead of Workload's TTL and duration and Seeds;
	// locks on etcd and ZooKeeper run at ConsensusScales when set (their
	// TTL floor is ConsensusMinTTL). See VerdictsSweepProfile.
	Scales, ConsensusScales []Scale
	// Hunt, when set, is a short lockbench hunt the profile makes after
	// its matrix (cmd/lockbench runs it: package hunt builds on bench).
	Hunt *HuntPlan
	// NoRerun reports an inconclusive cell as it is instead of rerunning it
	// with the next seed and a longer run (runCell).
	NoRerun bool
}

// HuntPlan is a profile's short hunt (lockbench hunt, docs/hunt.md): the
// strategy, the base workload of its runs, how many schedules it draws
// and the wall-clock budget that bounds it, whichever ends it first.
type HuntPlan struct {
	Strategy  string
	Workload  workload.Config
	Schedules int
	Budget    time.Duration
}

// Profiles returns the bench profiles: "ci" (every strategy under every
// scenario once, short runs: the CI gate, under 3 minutes on 2 cores) and
// "full" (three seeds, longer runs, a client sweep, and a hunt of 40
// schedules on token-lua).
func Profiles() []Profile {
	base := workload.Config{Clients: 16, Keys: 1, TTL: 100 * time.Millisecond, Duration: time.Second, Reentrancy: 3}
	full := base
	full.Duration = 4 * time.Second
	// consensus-seeds: 5 s runs (a gc-pause run at TTL 1 s keeps the key
	// 2 s of them; 3 s runs gave 9 holds in some seeds, one short of
	// validate.MinHolds).
	consensusBase := base
	consensusBase.Duration = 5 * time.Second
	return []Profile{
		{Name: "ci", Summary: "every Redis strategy on its own nodes (not token-lua-wait, whose failovers take seconds, nor the Redis Cluster locks, whose cluster takes 2 s to start: full runs them) under the baseline, the client-side faults and one scenario of each server-side kind (process, replication, network, clock); etcd-mutex and zk-lock under the baseline, gc-pause and leader-kill; one seed, 1 s runs (3 s on etcd and ZooKeeper): the CI gate",
			Strategies: ciStrategies(), Scenarios: ciScenarios(), Seeds: 1, Workload: base, Only: ciOnly(),
			CostClients: []int{4}, CostDuration: 500 * time.Millisecond},
		{Name: "full", Summary: "every strategy under every scenario, three seeds, 4 s runs, a client sweep, and a hunt of 40 fault schedules on token-lua (at most 4 minutes)",
			Strategies: strategies.Names(), Scenarios: chaos.Names(), Seeds: 3, Workload: full,
			ClientSweep: []int{1, 4, 16, 64, 256}, SweepStrategies: []string{"set-nx-px", "token-lua", "watchdog", "redlock", "fenced"},
			CostClients: []int{4, 16, 64, 256}, CostDuration: 2 * time.Second,
			Hunt: &HuntPlan{Strategy: "token-lua", Workload: workload.Config{Clients: 8, Keys: 1, TTL: 200 * time.Millisecond, Duration: 2 * time.Second, Reentrancy: 3},
				Schedules: 40, Budget: 4 * time.Minute}},
		{Name: "cost", Summary: "what a lock costs, like for like: " + strings.Join(costProfileStrategies(), ", ") + " under the baseline (16 clients on one key: the handoff) and uncontended at 1, 4, 16, 64 and 256 clients, a key each (the overhead and the capacity curve); one seed, 4 s baseline runs, 2 s cost runs, an inconclusive run reported, not rerun (about 2 minutes on 2 cores)",
			Strategies: costProfileStrategies(), Scenarios: []string{CostScenario}, Seeds: 1, Workload: full, NoRerun: true,
			CostClients: []int{4, 16, 64, 256}, CostDuration: 2 * time.Second},
		{Name: "adapters", Summary: "Python's redis-py Lock through its adapter (exec:redis-py, and exec:redis-py-renew with extend) beside token-lua and watchdog, its in-process counterparts, under the ci scenarios: one seed, 1 s runs; needs python3-redis (scripts/deps.sh)",
			Strategies: adapterProfileStrategies(), Scenarios: ciScenarios(), Seeds: 1, Workload: base},
		{Name: "consensus-seeds", Summary: "the consensus locks' key results with 20 seeds: token-lua loses its lock at failover-lost-write where etcd-mutex and zk-lock mostly keep it at leader-kill; gc-pause breaks etcd-mutex and zk-lock, and their fenced variants keep the resource safe",
			Strategies: []string{"token-lua", "etcd-mutex", "zk-lock", "etcd-fenced", "zk-fenced"},
			Scenarios:  []string{"failover-lost-write", "leader-kill", "gc-pause"}, Seeds: 20, Workload: consensusBase,
			Only: map[string][]string{"token-lua": {"failover-lost-write"}, "etcd-mutex": {"leader-kill", "gc-pause"},
				"zk-lock": {"leader-kill", "gc-pause"}, "etcd-fenced": {"gc-pause"}, "zk-fenced": {"gc-pause"}}},
		VerdictsSweepProfile(),
	}
}

// costProfileStrategies are the strategies of the "cost" profile: the
// single-node Lua lock, Redlock and the Redis lock libraries, and the
// etcd and ZooKeeper recipes, one of each kind of lock an engineer
// chooses between.
func costProfileStrategies() []string {
	return []string{"token-lua", "redlock", "redsync", "redislock", "etcd-mutex", "zk-lock"}
}

// ciStrategies are the ci profile's strategies: every Redis strategy on
// independent nodes and, of the consensus locks, etcd-mutex and zk-lock
// (their fenced variants differ only in the token, which consensus-seeds
// covers). A lock that waits for replicas (token-lua-wait) is left to the
// full profile: its failover runs last seconds each.
func ciStrategies() []string {
	var out []string
	for _, st := range strategies.All() {
		if st.Info().Replicas > 0 || st.Info().Cluster {
			continue // failovers that take seconds; a cluster start takes ~2 s
		}
		if st.Info().Server == impl.ServerRedis || st.Name() == "etcd-mutex" || st.Name() == "zk-lock" {
			out = append(out, st.Name())
		}
	}
	return out
}

// ciOnly narrows the consensus locks of the ci profile to the baseline,
// gc-pause and leader-kill: their runs last 3 s or more at TTL 1 s
// (bench.ConsensusMinTTL), so the other client faults would cost the
// budget more than they tell.
func ciOnly() map[string][]string {
	only := []string{"baseline", "gc-pause", "leader-kill"}
	return map[string][]string{"etcd-mutex": only, "zk-lock": only}
}

// adapterProfileStrategies are the "adapters" profile's strategies: the
// redis-py adapters of adapters/adapters.conf and the built-in locks whose
// algorithm they share (token-lua: SET NX PX and a token-checked Lua
// release; watchdog: the same, renewed).
func adapterProfileStrategies() []string {
	return []string{"token-lua", adapterclient.ExecPrefix + "redis-py", "watchdog", adapterclient.ExecPrefix + "redis-py-renew"}
}

// ciScenarios are the ci profile's scenarios: the baseline, every
// client-side scenario and one of each server-side kind (leader-kill:
// the etcd and ZooKeeper one), plus the Redlock-specific canary.
func ciScenarios() []string {
	return []string{"baseline", "long-cs", "gc-pause", "crash-between",
		"node-restart", "leader-kill", "failover-lost-write", "partition-holder", "clock-jump", "redlock-clock-jump"}
}

// LookupProfile finds a profile; the error (wrapping errs.ErrUsage) lists the valid names.
func LookupProfile(name string) (Profile, error) {
	var names []string
	for _, p := range Profiles() {
		if p.Name == name {
			return p, nil
		}
		names = append(names, p.Name)
	}
	return Profile{}, fmt.Errorf("%w: unknown profile %q (valid: %s)", errs.ErrUsage, name, strings.Join(names, ", "))
}

// Options configure a bench.
type Options struct {
	// Profile is the matrix to run.
	Profile Profile
	// OutDir is the results folder (created).
	OutDir string
	// Cluster configures the Redis processes of every run (its Backend
	// and Image included).
	Cluster cluster.Options
	// KeyPrefix replaces the workload's key prefix in every run ("":
	// workload's default "lb:").
	KeyPrefix string
	// Command is the command line that reproduces the bench.
	Command string
	// RunCommand returns the command line that reproduces one run (the
	// CLI's, with its flags and shell quoting); nil: runs carry none.
	RunCommand func(Spec) string
	// Seed is the base seed: repeat i (from 0) of every cell runs seed
	// Seed+i, and of the client sweep at n clients seed Seed+999+n+1000·i.
	// 0 is taken as 1, the CLI's default.
	Seed int64
	// Repeat is how many times each cell runs; 0: the profile's Seeds.
	Repeat int
	// Progress is called before each run with its index (from 0), the
	// total and a label; nil: silent.
	Progress func(i, total int, label string)
	// Notef receives notes, such as an earlier run in OutDir being
	// replaced; nil: silent.
	Notef func(format string, args ...any)
	// Shard, when its Count is above 1, runs only that part of the
	// bench's plan (shardPlan) and records which part in results.json
	// (File.Shard); lockbench merge joins the parts.
	Shard shard.Shard
	// Hunt is the budget of the hunt the caller runs after the matrix
	// (0: none): a sharded bench gives the hunt to one part
	// (File.Shard.Hunt), balanced with the cells.
	Hunt time.Duration
}

// Bench runs a profile's matrix, writes results.json, the plots and the
// report into o.OutDir and returns the results. A cell whose run is
// inconclusive is rerun (runCell: the next seed, twice the duration, at
// most MaxReruns times) and reported by its last attempt, the earlier ones
// kept in its Run.Earlier. An error means a run could not be carried out
// (environment, Ctrl-C); unexpected and inconclusive verdicts are in the
// returned file (Run.Outcome), not errors.
func Bench(ctx context.Context, o Options) (*results.File, error) {
	p := o.Profile
	seed, repeat := o.seedAndRepeat()
	specs, sweep, err := cells(p, seed, repeat)
	if err != nil {
		return nil, err
	}
	if len(p.Scales) > 0 {
		if specs, err = scaleCells(p, seed, o.Repeat); err != nil {
			return nil, err
		}
	}
	costs, err := costCells(p, seed)
	if err != nil {
		return nil, err
	}
	specs = supportedOnly(specs, o.Cluster) // the others are reported n/a
	sweep = supportedOnly(sweep, o.Cluster)
	costs = supportedOnly(costs, o.Cluster)
	var part *results.ShardInfo
	if !o.Shard.Whole() {
		parts, huntPart := shardPlan(specs, sweep, costs, o.Hunt, o.Shard.Count)
		mine := parts[o.Shard.Index-1]
		part = shardInfo(o.Shard, mine, len(specs), len(sweep), len(costs), huntPart == o.Shard.Index-1)
		nSpecs, nSweep := len(specs), len(sweep)
		specs, sweep, costs = pick(specs, mine, 0), pick(sweep, mine, nSpecs), pick(costs, mine, nSpecs+nSweep)
	}
	if err := CheckBackend(ctx, o.Cluster, o.KeyPrefix, slices.Concat(specs, sweep, costs)); err != nil {
		return nil, err
	}
	if err := outdir.ReplaceEarlier(o.OutDir, o.Notef); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(o.OutDir, 0o755); err != nil {
		return nil, outdir.OutDirError(o.OutDir, err)
	}
	f := &results.File{
		SchemaVersion: results.SchemaVersion, Tool: "lockbench " + Version, Commit: Commit(), Profile: p.Name,
		Command: o.Command, Seed: seed, Repeat: repeat, Started: time.Now().UTC().Format(time.RFC3339),
		Host: results.ThisHost(), Shard: part,
		Config: results.BenchConfig{
			Strategies: p.Strategies, Scenarios: p.Scenarios, NotRun: notRun(p), Workload: baseConfig(p.Workload, o.Cluster),
			ClientSweep: p.ClientSweep, SweepStrategies: p.SweepStrategies, CostClients: p.CostClients,
		},
	}
	for _, name := range p.Strategies {
		st, err := strategies.Lookup(name)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", errs.ErrUsage, err)
		}
		info := StrategyInfo(st)
		if ttl, why := envelopeTTL(st, p.Workload.TTL); why != "" {
			info.TTLMs, info.TTLWhy = ms(int64(ttl)), why
		}
		f.Strategies = append(f.Strategies, info)
	}
	total := len(specs) + len(sweep) + len(costs)
	var overloaded []error
	// etcd and ZooKeeper start once per bench (Shared) and stop when it
	// returns: done, failed, interrupted (Ctrl-C cancels ctx) or panicking.
	shared := NewShared(o.Cluster)
	defer shared.Stop()
	for i, s := range slices.Concat(specs, sweep, costs) {
		s.OutDir, s.Cluster, s.Shared = o.OutDir, o.Cluster, shared
		if o.KeyPrefix != "" {
			s.Workload.KeyPrefix = o.KeyPrefix
		}
		if o.RunCommand != nil {
			s.Command = o.RunCommand(s)
		}
		if o.Progress != nil {
			o.Progress(i, total, fmt.Sprintf("%s/%s seed %d", s.Strategy, s.Scenario, s.Seed))
		}
		var r results.Run
		if i < len(specs) && p.NoRerun {
			r, err = Run(ctx, s)
		} else if i < len(specs) {
			r, err = runCell(ctx, s, repeat, o.RunCommand, func(label string) {
				if o.Progress != nil {
					o.Progress(i, total, label)
				}
			})
		} else {
			r, err = Run(ctx, s) // the client sweep and the cost runs are not gated: nothing to rerun
		}
		if errors.Is(err, ErrOverloaded) {
			overloaded = append(overloaded, err) // keep the run, with its Error, and go on
		} else if err != nil {
			// Keep what finished (an interrupted bench still leaves a report).
			f.Incomplete = fmt.Sprintf("stopped after %d of %d runs: %v", i, total, err)
			if werr := finish(o.OutDir, f); werr != nil {
				err = errors.Join(err, werr)
			}
			return f, err
		}
		if f.Redis == "" {
			f.Redis = r.Redis
		}
		switch {
		case i < len(specs):
			f.Runs = append(f.Runs, r)
		case i < len(specs)+len(sweep):
			f.Sweep = append(f.Sweep, r)
		default:
			f.Cost = append(f.Cost, r)
		}
	}
	validate.AvailabilityHints(f.Runs)
	if err := finish(o.OutDir, f); err != nil {
		return f, err
	}
	if len(overloaded) > 0 {
		runs := "1 run"
		if len(overloaded) > 1 {
			runs = fmt.Sprintf("%d runs", len(overloaded))
		}
		return f, fmt.Errorf("%s with an unexpected verdict on an overloaded machine (results and report written): %w", runs, overloaded[0])
	}
	return f, nil
}

// seedAndRepeat returns the base seed (0 taken as 1) and the repeats (0: the profile's).
func (o Options) seedAndRepeat() (int64, int) {
	seed, repeat := o.Seed, o.Repeat
	if seed == 0 {
		seed = 1
	}
	if repeat <= 0 {
		repeat = max(o.Profile.Seeds, 1)
	}
	return seed, repeat
}

// CheckSeeds validates the seeds of lockbench run and bench: a run or
// cell with repeat runs uses seeds seed..seed+repeat-1, so seed must be at
// least 1, repeat at least 1 and seed+repeat-1 must not overflow int64.
// The error wraps errs.ErrUsage and names the largest --seed that works.
//
// maxRepeat bounds repeat: a bench plans all its runs before the first
// (a fresh user's --repeat 1000000000 took 24 GB before running anything).
func CheckSeeds(seed int64, repeat int) error {
	switch {
	case repeat < 1:
		return fmt.Errorf("%w: --repeat %d: want at least 1", errs.ErrUsage, repeat)
	case repeat > maxRepeat:
		return fmt.Errorf("%w: --repeat %d: want at most %d (a bench plans every run up front; for more, run several benches with other --seed values)", errs.ErrUsage, repeat, maxRepeat)
	case seed < 1:
		return fmt.Errorf("%w: --seed %d: want a seed ≥ 1", errs.ErrUsage, seed)
	case seed > math.MaxInt64-int64(repeat-1):
		return fmt.Errorf("%w: --seed %d with --repeat %d: the last seed (--seed + --repeat - 1) would overflow int64; use a --seed of at most %d", errs.ErrUsage, seed, repeat, math.MaxInt64-int64(repeat-1))
	}
	return nil
}

// maxRepeat is the largest --repeat of run and bench: 1000 repeats of the
// ci profile are 82 000 runs, days of machine time.
const maxRepeat = 1000

// cells plans a profile's runs: for each scenario (in p.Scenarios' order),
// repeat rounds (seeds seed..seed+repeat-1), each running once every
// strategy (in p.Strategies' order) the scenario applies to: cells are
// interleaved round-robin over repeats, so a machine that slows down
// during a bench slows every strategy of a scenario alike; then the client
// sweep (baseline; for each repeat i and client count n every strategy,
// with seed seed+999+n+1000·i). The plan
// depends on its arguments only (no map order, no clock), so two benches
// with the same profile, seed and repeat run the same cells. Unknown names
// give an error wrapping errs.ErrUsage.
func cells(p Profile, seed int64, repeat int) (specs, sweep []Spec, err error) {
	for _, sc := range p.Scenarios {
		scen, err := chaos.Lookup(sc)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %v", errs.ErrUsage, err)
		}
		var applies []impl.Strategy
		for _, st := range p.Strategies {
			strat, err := strategies.Lookup(st)
			if err != nil {
				return nil, nil, fmt.Errorf("%w: %v", errs.ErrUsage, err)
			}
			if ok, _ := scen.AppliesTo(strat.Info()); ok && p.runs(st, sc) {
				applies = append(applies, strat)
			}
		}
		// Round-robin over repeats: every strategy's repeat i before any
		// repeat i+1, so drift of the machine hits all strategies alike.
		for i := range repeat {
			for _, st := range applies {
				specs = append(specs, Spec{Strategy: st.Name(), Scenario: sc, Seed: seed + int64(i), Workload: cellWorkload(st, sc, p.Workload)})
			}
		}
	}
	sweepers := map[string]impl.Strategy{}
	for _, st := range p.SweepStrategies {
		strat, err := strategies.Lookup(st)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %v", errs.ErrUsage, err)
		}
		sweepers[st] = strat
		for _, n := range p.ClientSweep {
			if last := int64(999+n) + 1000*int64(repeat-1); seed > math.MaxInt64-last {
				return nil, nil, fmt.Errorf("%w: --seed %d: the client sweep's seeds (up to --seed+%d) would overflow int64; use a --seed of at most %d", errs.ErrUsage, seed, last, math.MaxInt64-last)
			}
		}
	}
	// The sweep, round-robin too: for each repeat and client count, every
	// strategy in turn.
	for i := range repeat {
		for _, n := range p.ClientSweep {
			for _, st := range p.SweepStrategies {
				w := cellWorkload(sweepers[st], CostScenario, p.Workload)
				w.Clients = n
				sweep = append(sweep, Spec{Strategy: st, Scenario: "baseline", Seed: seed + 999 + int64(n) + 1000*int64(i), Workload: w})
			}
		}
	}
	return specs, sweep, nil
}

// costCells plans a profile's uncontended cost runs (Profile.CostClients):
// for 1 client and each of CostClients, every strategy in turn under
// CostScenario, each client on a key of its own, for CostDuration, with
// the cost cells' timing (cellWorkload), seed seed+1500+n for n clients (apart from the cells' and the sweep's seeds, so their histories do not collide);
// nil when the profile has none. A seed whose cost seeds would overflow
// int64 gives an error wrapping errs.ErrUsage.
func costCells(p Profile, seed int64) ([]Spec, error) {
	if len(p.CostClients) == 0 {
		return nil, nil
	}
	var out []Spec
	for _, n := range append([]int{1}, p.CostClients...) {
		if last := int64(1500 + n); seed > math.MaxInt64-last {
			return nil, fmt.Errorf("%w: --seed %d: the cost runs' seeds (up to --seed+%d) would overflow int64; use a --seed of at most %d", errs.ErrUsage, seed, last, math.MaxInt64-last)
		}
		for _, name := range p.Strategies {
			st, err := strategies.Lookup(name)
			if err != nil {
				continue // cells reports unknown names
			}
			w := cellWorkload(st, CostScenario, p.Workload)
			w.Clients, w.Keys, w.OwnKeys = n, n, true
			if p.CostDuration > 0 {
				w.Duration = p.CostDuration
			}
			out = append(out, Spec{Strategy: name, Scenario: CostScenario, Seed: seed + 1500 + int64(n), Workload: w})
		}
	}
	return out, nil
}

// runs reports whether p's matrix holds the pair (strategy, scenario)
// (Only narrows it; applicability aside).
func (p Profile) runs(strategy, scenario string) bool {
	only, ok := p.Only[strategy]
	return !ok || slices.Contains(only, scenario)
}

// baseConfig describes a profile's base workload for results.json (defaults
// applied; a config defaults cannot complete is recorded as given).
func baseConfig(w workload.Config, o cluster.Options) results.RunConfig {
	if d, err := w.WithDefaults(); err == nil {
		w = d
	}
	return runConfig(w, cluster.Topology{Kind: cluster.Single}, o)
}

// finish stamps the end time and writes results.json, the plots and the report.
func finish(dir string, f *results.File) error {
	f.Finished = time.Now().UTC().Format(time.RFC3339)
	if err := figures.Write(dir, f); err != nil {
		return outdir.OutputError(dir, err, outdir.OutputFix)
	}
	if err := report.Render(dir, f); err != nil {
		return outdir.OutputError(dir, err, outdir.OutputFix)
	}
	return nil
}

// StrategyInfo describes a strategy for results.json.
func StrategyInfo(st impl.Strategy) results.StrategyInfo {
	in := st.Info()
	var claims, pol []string
	c := in.Claims
	for _, x := range []struct {
		on   bool
		name string
	}{{c.AtomicAcquire, "atomic-acquire"}, {c.TokenRelease, "token-release"}, {c.Renewal, "renewal"},
		{c.Reentrant, "reentrant"}, {c.Quorum, "quorum"}, {c.Fencing, "fencing"}, {c.Validity, "validity"}, {c.ReplicaAck, "replica-ack"}} {
		if x.on {
			claims = append(claims, x.name)
		}
	}
	if in.Policy.CheckValidity {
		pol = append(pol, "check-validity")
	}
	if in.Policy.HonourLost {
		pol = append(pol, "honour-lost")
	}
	if in.Policy.AskLock {
		pol = append(pol, "ask-lock")
	}
	var server string
	if in.Server != impl.ServerRedis {
		server = in.Server.String()
	}
	return results.StrategyInfo{Name: st.Name(), Summary: in.Summary, Source: in.Source, Claims: claims, Policy: pol, Library: in.Library, Group: in.Group(), Server: server}
}

// SkippedPairs returns every pair of profile p that a bench on the backend
// of o skips, in profile order, each with the reason: the pairs whose
// scenario does not apply to the strategy (n/a in the verdict table:
// "not applicable: ...") and those whose faults the backend cannot inject
// (Unsupported).
func SkippedPairs(p Profile, o cluster.Options) []verdicts.Pair {
	var out []verdicts.Pair
	for _, sc := range p.Scenarios {
		scen, err := chaos.Lookup(sc)
		if err != nil {
			continue
		}
		for _, st := range p.Strategies {
			strat, err := strategies.Lookup(st)
			if err != nil {
				continue
			}
			if !p.runs(st, sc) {
				continue // not in the profile's matrix (Only)
			}
			why := ""
			if ok, na := scen.AppliesTo(strat.Info()); !ok {
				why = "not applicable: " + na
			} else {
				why = scen.UnsupportedOn(o, strat.Info())
			}
			if why != "" {
				out = append(out, verdicts.Pair{Strategy: st, Scenario: sc, Expectation: verdicts.Expectation{Reason: why}})
			}
		}
	}
	return out
}

// CheckScenarios returns nil unless a scenario of named (the scenarios
// the user named in --scenarios) has no pair of profile p that can run on
// the backend of o; then an error wrapping errs.ErrUsage naming the scenario,
// why each of its pairs is skipped (skipped, from SkippedPairs) and the
// fix, as a named strategy that cannot run is refused (CheckServers).
func CheckScenarios(p Profile, o cluster.Options, named []string, skipped []verdicts.Pair) error {
	for _, sc := range named {
		var reasons []string         // distinct, in order
		who := map[string][]string{} // reason → its strategies
		n := 0
		for _, na := range skipped {
			if na.Scenario != sc {
				continue
			}
			n++
			head, _, _ := strings.Cut(na.Reason, "; scenarios that work there")
			if who[head] == nil {
				reasons = append(reasons, head)
			}
			who[head] = append(who[head], na.Strategy)
		}
		planned := 0 // strategies the profile runs under sc (Only narrows some)
		for _, st := range p.Strategies {
			if only, ok := p.Only[st]; !ok || slices.Contains(only, sc) {
				planned++
			}
		}
		if n == 0 || n < planned {
			continue // some pair of it runs
		}
		why := make([]string, len(reasons))
		for i, r := range reasons {
			why[i] = fmt.Sprintf("%s: %s", strings.Join(who[r], ", "), r)
		}
		return fmt.Errorf("%w: --scenarios %s: none of the selected strategies can run it on the %s backend (%s); choose other --scenarios, --strategies or --backend",
			errs.ErrUsage, sc, cluster.BackendName(o), strings.Join(why, "; "))
	}
	return nil
}

// supportedOnly drops the specs whose faults the backend of o cannot
// inject (see Unsupported and SkippedPairs).
func supportedOnly(specs []Spec, o cluster.Options) []Spec {
	var out []Spec
	for _, s := range specs {
		sc, err1 := chaos.Lookup(s.Scenario)
		st, err2 := strategies.Lookup(s.Strategy)
		if err1 == nil && err2 == nil && sc.UnsupportedOn(o, st.Info()) != "" {
			continue
		}
		out = append(out, s)
	}
	return out
}

// notRun returns the scenarios (chaos.Names order) that profile p leaves
// out.
func notRun(p Profile) []string {
	var out []string
	for _, sc := range chaos.Names() {
		if !slices.Contains(p.Scenarios, sc) {
			out = append(out, sc)
		}
	}
	return out
}
