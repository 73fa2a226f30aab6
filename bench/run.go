// Package bench orchestrates lockbench: one run is scenario → cluster →
// workload (with the scenario's nemesis) → history file → checker →
// validate (the verdict table and the judgement) → a results.Run; a bench
// is a profile's matrix of runs plus the report.
package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lockbench/lockbench/chaos/fault/link"
	"github.com/lockbench/lockbench/chaos/schedule"
	"github.com/lockbench/lockbench/cluster/clockshim"
	"github.com/lockbench/lockbench/cluster/dockerd"
	"github.com/lockbench/lockbench/cluster/preflight"
	"github.com/lockbench/lockbench/figures"
	"github.com/lockbench/lockbench/outdir"
	lbstats "github.com/lockbench/lockbench/stats"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/chaos"
	"github.com/lockbench/lockbench/checker"
	"github.com/lockbench/lockbench/cluster"
	"github.com/lockbench/lockbench/commandstats"
	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/history/measure"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/adapterclient"
	"github.com/lockbench/lockbench/impl/strategies"
	"github.com/lockbench/lockbench/internal/errs"
	"github.com/lockbench/lockbench/internal/noise"
	"github.com/lockbench/lockbench/observer"
	"github.com/lockbench/lockbench/resource"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/validate"
	"github.com/lockbench/lockbench/verdicts"
	"github.com/lockbench/lockbench/workload"
)

// ErrOverloaded is wrapped by the error of a run whose verdict contradicts
// the verdict table while the harness itself ran late (a client stalled
// inside a hold by more than TTL/2 with no fault to explain it; see
// workload.Stats.MaxOverrun): the machine, not the lock, is suspect. It wraps
// cluster.ErrEnvironment, so lockbench exits 3.
var ErrOverloaded = fmt.Errorf("harness overloaded: %w", cluster.ErrEnvironment)

// ConsensusMinTTL is the shortest TTL a run of a lock on etcd or
// ZooKeeper uses (a shorter --ttl or profile TTL is raised to it, as
// etcd's whole-second leases raise it anyway). ZooKeeper would grant a
// session timeout of 2 ticks (100 ms), but its client pings every third
// of it, and on a loaded 2-core machine a 100 ms session expires between
// pings: measured, zk-lock at TTL 100 ms with 16 clients was granted 0-2
// times in a 2 s run (most acquires unknown), at 1 s 19 times. Both
// families run at the same TTL, so their rows compare.
const ConsensusMinTTL = time.Second

// ConsensusMinDuration is the shortest run of a lock on etcd or
// ZooKeeper (a shorter --duration or profile duration is raised to it):
// at TTL 1 s with 16 clients on one key they were granted 7-17 times a
// second on a loaded 2-core machine, and a run needs validate.MinHolds
// holds besides those a fault keeps.
const ConsensusMinDuration = 3 * time.Second

// Spec is one run: a strategy under a scenario with one seed.
type Spec struct {
	// Strategy and Scenario are registry names (strategies.Lookup, chaos.Lookup);
	// Strategy is Lock's name when Lock is set.
	Strategy, Scenario string
	// Workload configures the clients; Seed and Policy are filled in from
	// this Spec. Zero fields take workload's defaults.
	Workload workload.Config
	// Policy overrides the strategy's default usage policy when non-nil.
	Policy *impl.Policy
	// Fencing overrides the resource's fencing mode; default "writes" for
	// strategies that claim fencing, else "off".
	Fencing resource.Fencing
	// Seed seeds the workload and the nemesis.
	Seed int64
	// OutDir is the results folder; the history goes to
	// OutDir/histories/<strategy>-<scenario>-<seed>.jsonl.
	OutDir string
	// Cluster configures the Redis processes.
	Cluster cluster.Options
	// CheckTimeout bounds each porcupine check; default 10 s.
	CheckTimeout time.Duration
	// Command is the command line that reproduces this run alone.
	Command string
	// Library holds library settings of a library adapter by flag name
	// (strategies.Settings, e.g. "redsync-tries": "3"); nil: the defaults.
	Library map[string]string
	// Schedule, when set, replaces the named scenario with this fault
	// schedule (chaos.ScheduleScenario; lockbench run --schedule, lockbench
	// hunt): Scenario is then "" or the schedule's scenario name
	// (Schedule.Scenario), and the run is judged by the weakest
	// expectation of the scenarios that exercise its primitives
	// (verdicts.Source.ForSchedule).
	Schedule *schedule.Schedule
	// Lock, when set, is the strategy the run drives instead of the one
	// the registry holds under Strategy (strategies.Lookup): a lock given as
	// Go code in the caller's process (package locktest). Strategy must
	// then be Lock.Name(). Its expectations come from its claims
	// (verdicts.SourceOf) unless its name has verdict rows.
	Lock impl.Strategy
	// Shared, when set, lends the run its etcd or ZooKeeper cluster
	// instead of one started and stopped for the run alone (see Shared);
	// the run's keys then carry a prefix of their own. nil: every run
	// starts its own servers.
	Shared *Shared
	// HistoryTag, when set, ends the history's file name
	// (<strategy>-<scenario>-<seed>-<tag>.jsonl), so that runs sharing
	// strategy, scenario and seed keep a history each: a profile's time
	// scales tag theirs with the TTL asked ("ttl5s"). "": no tag.
	HistoryTag string
	// ClockSkew, when set, skews the run's history clock by this much
	// (history.NewSkewedClock; lockbench run --clock-skew): every time the
	// history records is ClockSkew later, as on a client host whose clock
	// runs ahead. For testing the cross-host check (crosshost.Check);
	// the history's header records it. 0: none.
	ClockSkew time.Duration
}

// Resolved returns the spec's strategy, scenario, the scenario's setup for
// the strategy and the full workload config (the setup's client count, TTL,
// think time and minimum duration applied, and the lock's server's TTL:
// see Adjustments for what they change and why), or an error wrapping
// errs.ErrUsage that names the bad input and the valid choices.
func (s Spec) Resolved() (impl.Strategy, chaos.Scenario, chaos.Setup, workload.Config, error) {
	r, err := s.resolve()
	if err != nil {
		return nil, chaos.Scenario{}, chaos.Setup{}, workload.Config{}, err
	}
	return r.st, r.sc, r.setup, r.w, nil
}

// resolve is Resolved with the adjustments it made (Adjustments). A run
// never drops a setting silently: the TTL is raised to what the scenario
// and the lock's servers need (runTTL; a longer --ttl is kept), the
// critical sections, think time and retry policy given explicitly are
// scaled with it (retime), and the duration, client count and think time
// a scenario fixes replace the asked ones; each change is an Adjustment.
func (s Spec) resolve() (resolution, error) {
	fail := func(err error) (resolution, error) {
		return resolution{}, fmt.Errorf("%w: %v", errs.ErrUsage, err)
	}
	st, err := s.strategy()
	if err != nil {
		return fail(err)
	}
	sc, err := s.scenario()
	if err != nil {
		return fail(err)
	}
	info := st.Info()
	if ok, why := sc.AppliesTo(info); !ok {
		return fail(fmt.Errorf("scenario %s does not apply to strategy %s: %s", s.Scenario, s.Strategy, why))
	}
	setup := sc.SetupFor(info)
	if why := sc.UnsupportedOn(s.Cluster, info); why != "" {
		return fail(errors.New(why))
	}
	var adj []Adjustment
	w := s.Workload
	w.Seed = s.Seed
	if !info.Claims.Reentrant {
		w.Reentrancy = 1 // nesting applies to reentrant strategies only (the run's note says so)
	}
	if info.Claims.Reentrant && setup.Reentrancy > max(w.Reentrancy, 1) {
		adj = append(adj, Adjustment{Flag: "--reentrancy", From: fmt.Sprint(max(w.Reentrancy, 1)), To: fmt.Sprint(setup.Reentrancy),
			Why: fmt.Sprintf("scenario %s strikes a nested acquire", sc.Name)})
		w.Reentrancy = setup.Reentrancy
	}
	if setup.Clients > 0 && setup.Clients != w.Clients {
		from := w.Clients
		if from == 0 {
			from = 16 // workload's default
		}
		adj = append(adj, Adjustment{Flag: "--clients", From: fmt.Sprint(from), To: fmt.Sprint(setup.Clients),
			Why: fmt.Sprintf("scenario %s runs %d clients for its fault", sc.Name, setup.Clients)})
		w.Clients = setup.Clients
	}
	ttl, why := runTTL(st, sc.Name, setup, w.TTL)
	w, adj = retime(w, ttl, why, adj)
	if d, why := minDuration(st, sc, setup, w.TTL); w.Duration < d {
		if w.Duration > 0 {
			adj = append(adj, Adjustment{Flag: "--duration", From: w.Duration.String(), To: d.String(), Why: why})
		}
		w.Duration = d
	}
	if s.Schedule != nil {
		if d := s.Schedule.MinDuration(w.TTL); w.Duration < d {
			if w.Duration > 0 {
				adj = append(adj, Adjustment{Flag: "--duration", From: w.Duration.String(), To: d.String(),
					Why: fmt.Sprintf("schedule %s ends %.3g×TTL after it starts, and the run shows 2×TTL after it", s.Schedule.Name, s.Schedule.End())})
			}
			w.Duration = d
		}
	}
	if info.Server != impl.ServerRedis && w.OpTimeout == 0 {
		// A ZooKeeper acquire waits in the recipe's queue: with the
		// default 500 ms deadline most of 16 queued clients give up
		// (measured at TTL 1 s: 16 grants in 3 s with 79 given up;
		// with 3 s, 44-45 grants).
		w.OpTimeout = 3 * w.TTL
	}
	if setup.OpTimeoutTTL > 0 && w.OpTimeout == 0 && w.TTL > 0 {
		// The scenario's budget follows the TTL (chaos.Setup.OpTimeoutTTL),
		// never below the Redis default (the consensus locks' 3×TTL was set
		// above).
		def := 500 * time.Millisecond // workload.Config's default on Redis
		if d := time.Duration(setup.OpTimeoutTTL * float64(w.TTL)); d > def {
			adj = append(adj, Adjustment{Flag: "--op-timeout", From: def.String(), To: d.String(),
				Why: fmt.Sprintf("scenario %s gives each lock call %g×TTL: its fault stalls the server longer than the default budget; a given --op-timeout is kept", sc.Name, setup.OpTimeoutTTL)})
			def = d
		}
		w.OpTimeout = def
	}
	w.Policy = info.Policy
	if s.Policy != nil {
		w.Policy = *s.Policy
	}
	w.Fencing = s.Fencing
	if w.Fencing == "" {
		w.Fencing = resource.FencingOff
		if info.Claims.Fencing {
			w.Fencing = resource.FencingWrites
		}
	}
	w, err = w.WithDefaults()
	if err != nil {
		return fail(err)
	}
	if setup.ThinkTTL > 0 {
		think := time.Duration(setup.ThinkTTL * float64(w.TTL))
		adj = slices.DeleteFunc(adj, func(a Adjustment) bool { return a.Flag == "--think" }) // the scenario's, not a scaled one
		if think != s.Workload.Think {
			adj = append(adj, Adjustment{Flag: "--think", From: s.Workload.Think.String(), To: think.String(),
				Why: fmt.Sprintf("scenario %s pauses %g×TTL between a release and the next acquire for its fault", sc.Name, setup.ThinkTTL)})
		}
		w.Think = think
	}
	if st, err = strategies.Tune(st, s.Library, w.TTL); err != nil {
		return fail(err)
	}
	if s.Policy == nil {
		w.Policy = st.Info().Policy // a setting may change it (e.g. --redislock-refresh off)
	}
	return resolution{st: st, sc: sc, setup: setup, w: w, adjusted: adj}, nil
}

// strategy returns the spec's strategy: Lock when set (its name must be
// Strategy), else the registry's (strategies.Lookup).
func (s Spec) strategy() (impl.Strategy, error) {
	if s.Lock == nil {
		return strategies.Lookup(s.Strategy)
	}
	if s.Lock.Name() != s.Strategy {
		return nil, fmt.Errorf("the spec's lock is named %q but the spec names strategy %q: give the same name to both", s.Lock.Name(), s.Strategy)
	}
	return s.Lock, nil
}

// scenario returns the spec's scenario: its fault schedule's
// (chaos.ScheduleScenario) when it has one, else the named one
// (chaos.Lookup).
func (s Spec) scenario() (chaos.Scenario, error) {
	if s.Schedule == nil {
		return chaos.Lookup(s.Scenario)
	}
	if err := s.Schedule.Check(); err != nil {
		return chaos.Scenario{}, fmt.Errorf("schedule %s: %w", s.Schedule.Name, err)
	}
	sc := chaos.ScheduleScenario(*s.Schedule)
	if s.Scenario != "" && s.Scenario != sc.Name {
		return chaos.Scenario{}, fmt.Errorf("a run with a fault schedule has no other scenario (got %s and schedule %s): give one or the other", s.Scenario, s.Schedule.Name)
	}
	return sc, nil
}

// ScenarioName is the scenario name a run of the spec records: the
// schedule's ("schedule:NAME") when it has one, else Scenario.
func (s Spec) ScenarioName() string {
	if s.Schedule != nil {
		return s.Schedule.Scenario()
	}
	return s.Scenario
}

// historyName is the history file of a run, relative to the results
// folder. Characters of an exec: strategy's command that do not belong
// in a file name become '_'.
func historyName(strategy, scenario string, seed int64) string {
	return taggedHistoryName(strategy, scenario, seed, "")
}

// taggedHistoryName is historyName with Spec.HistoryTag, if any, before
// the extension.
func taggedHistoryName(strategy, scenario string, seed int64, tag string) string {
	if tag != "" {
		tag = "-" + fileSafe(tag)
	}
	return filepath.Join("histories", fmt.Sprintf("%s-%s-%d%s.jsonl", fileSafe(strategy), fileSafe(scenario), seed, tag))
}

// adapterLogName is the file, beside a run's history, that holds the
// stderr of its adapter processes (exec: strategies; see historyName).
func adapterLogName(history string) string {
	return strings.TrimSuffix(history, ".jsonl") + ".adapter.log"
}

// ScheduleWaitNoted is the wait for the readiness barrier (every client's
// first call) from which a run says so (results.RunConfig.Adjusted and
// lockbench run's output): a client slow to start, such as an adapter
// process, made the run longer by that much.
const ScheduleWaitNoted = 100 * time.Millisecond

// Run executes one Spec and returns its result. The returned error is for
// runs that could not be carried out (bad input: wraps errs.ErrUsage; the
// machine: wraps cluster.ErrEnvironment; Ctrl-C: wraps context.Canceled);
// a violation is a result, not an error. Every Redis process the run
// started is stopped before Run returns, also on error or panic.
//
// A run has five phases, each a method of run: start the cluster
// (startCluster), connect the clients and open the history (connect),
// execute the workload under the scenario's nemesis (execute), judge the
// history file (judge) and measure what the run cost (measure).
func Run(ctx context.Context, s Spec) (results.Run, error) {
	r, err := plan(s)
	if err != nil {
		return results.Run{}, err
	}
	defer r.close()
	if err := r.startCluster(ctx); err != nil {
		return r.out, err
	}
	if err := r.connect(ctx); err != nil {
		return r.out, err
	}
	ex, err := r.execute(ctx)
	if err != nil {
		return r.out, err
	}
	ops, err := r.judge()
	if err != nil {
		return r.out, err
	}
	return r.measure(ops, ex)
}

// run is one Run in progress: what plan resolved, what the phases built,
// and the clean-ups they registered (run.close undoes them in reverse).
type run struct {
	s        Spec
	st       impl.Strategy
	info     impl.Info
	sc       chaos.Scenario
	setup    chaos.Setup
	w        workload.Config
	topo     cluster.Topology
	notGated string // verdicts.NotGated: why the run is not gated, "" when it is
	exp      verdicts.Expectation
	rep      checker.Report // the checkers' report, set by judge
	out      results.Run
	histPath string

	c      *cluster.Cluster
	shared bool // c is lent by Spec.Shared: the run does not stop it
	links  *link.Links
	nodes  []*cluster.Node // the nodes the strategy talks to
	clock  *history.Clock
	hw     *history.Writer
	env    workload.Env
	cmds   atomic.Int64

	cleanups []func()
}

// atClose registers f to run when the run closes (last registered first).
func (r *run) atClose(f func()) { r.cleanups = append(r.cleanups, f) }

// close runs the registered clean-ups in reverse order.
func (r *run) close() {
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
}

// Plan returns what Run of s knows before it starts anything: the
// results.Run with its expectation (Expected, ExpectedChecks, Reason),
// its history's name, its config and its adjustments, and the resolved
// workload (Spec.Resolved). It starts no server and no client; the error
// is Resolved's. Package locktest's tests compare a Go lock's plan with
// the built-in strategy's it wraps.
func Plan(s Spec) (results.Run, workload.Config, error) {
	r, err := plan(s)
	if err != nil {
		return results.Run{}, workload.Config{}, err
	}
	return r.out, r.w, nil
}

// plan resolves s (Spec.Resolved), looks up its expectation in the verdict
// table and fills in what the results.Run knows before the run starts.
func plan(s Spec) (*run, error) {
	s.Scenario = s.ScenarioName()
	res, err := s.resolve()
	if err != nil {
		return nil, err
	}
	st, sc, setup, w := res.st, res.sc, res.setup, res.w
	r := &run{s: s, st: st, info: st.Info(), sc: sc, setup: setup, w: w}
	r.topo = sc.TopologyFor(r.info)
	r.notGated = verdicts.NotGated(st, s.Scenario, w)
	if src := verdicts.SourceOf(st.Name(), r.info); s.Schedule != nil {
		r.exp = src.ForSchedule(*s.Schedule, r.notGated)
	} else {
		r.exp = src.For(s.Scenario, r.notGated)
	}
	r.out = results.Run{
		Strategy: s.Strategy, Scenario: s.Scenario, ScenarioKind: string(sc.Kind), Seed: s.Seed,
		Expected: r.exp.Summary(), ExpectedChecks: r.exp.Checks(), Reason: r.exp.Reason,
		History: taggedHistoryName(s.Strategy, s.Scenario, s.Seed, s.HistoryTag), Command: s.Command,
		Config: runConfig(w, r.topo, s.Cluster),
	}
	if t, ok := st.(strategies.Tunable); ok {
		r.out.Config.Library = t.Settings()
	}
	for _, a := range res.adjusted {
		r.out.Config.Adjusted = append(r.out.Config.Adjusted, a.String())
	}
	r.histPath = filepath.Join(s.OutDir, r.out.History)
	return r, nil
}

// redis reports whether the strategy talks to Redis servers (not etcd or ZooKeeper).
func (r *run) redis() bool { return r.info.Server == impl.ServerRedis }

// startCluster starts the servers of the run's topology (with the
// scenario's persistence and clock shim), checks external servers and
// deletes the run's keys from them at close, makes the histories folder
// and starts the scenario's proxies.
func (r *run) startCluster(ctx context.Context) error {
	s, w, setup := r.s, r.w, r.setup
	copts := s.Cluster
	if setup.Persistence != "" {
		copts.Persistence = setup.Persistence
	}
	if setup.ClockShim && copts.ClockShim == "" {
		var err error
		if copts.ClockShim, err = clockshim.Cached(ctx); err != nil {
			return err
		}
	}
	c, tag, shared, err := s.Shared.get(ctx, r.topo, copts)
	if err != nil {
		return fmt.Errorf("start %s for %s/%s: %w", r.topo.Kind, s.Strategy, s.Scenario, err)
	}
	if shared {
		r.shared = true
		r.w.KeyPrefix += tag // a lock an earlier run left is no lock of this run
		w = r.w
	} else {
		if c, err = cluster.Start(ctx, r.topo, copts); err != nil {
			return fmt.Errorf("start %s for %s/%s: %w", serverNoun(r.topo), s.Strategy, s.Scenario, err)
		}
		r.atClose(func() { c.Stop() })
	}
	r.c = c
	if c.Backend() == cluster.BackendExternal && r.redis() {
		shared := s.Cluster.External.SharedKeys
		if err := preflight.CheckExternal(ctx, c.Addrs(), w.KeyPrefix, r.sc.Requires(r.info), shared, c.Security()); err != nil {
			return err
		}
		if !shared {
			// Delete the run's keys when it ends (also on error), so that
			// the next run's check finds none; the servers are the user's.
			r.atClose(func() { preflight.DeleteExternalKeys(ctx, c.Addrs(), w.KeyPrefix, c.Security()) })
		}
	}
	// The histories folder is made only now: a run that could not start
	// its servers leaves no empty folder behind.
	if err := os.MkdirAll(filepath.Dir(r.histPath), 0o755); err != nil {
		return outdir.OutDirError(s.OutDir, err)
	}
	r.nodes = c.Nodes()
	if n := r.info.Nodes; n >= 1 && n < len(r.nodes) {
		r.nodes = r.nodes[:n] // a single-node strategy talks to the primary only
	}
	if setup.Proxies {
		var only []int // nil: every node
		if setup.ProxyNode > 0 {
			only = []int{setup.ProxyNode - 1}
		}
		if r.links, err = link.NewLinksOf(ctx, w.Clients, r.nodes, only); err != nil {
			return err
		}
		links := r.links
		r.atClose(func() { links.Close() })
	}
	return nil
}

// connect opens the history file (marked interrupted at close when ctx
// was cancelled), the adapter log of an exec: strategy, and builds the
// workload's environment: how each client dials the nodes (directly,
// through the proxies, or through Sentinel), counting commands.
func (r *run) connect(ctx context.Context) error {
	s, w := r.s, r.w
	r.clock = history.NewSkewedClock(s.ClockSkew)
	hdr := history.Header{
		Strategy: s.Strategy, Scenario: s.Scenario, Seed: s.Seed, Clients: w.Clients, Keys: w.Keys,
		TTLMs: w.TTL.Milliseconds(), OpTimeoutMs: w.OpTimeout.Milliseconds(), Fencing: string(w.Fencing), Reentrant: r.info.Claims.Reentrant,
		Renewal: r.info.Claims.Renewal, Nodes: len(r.nodes),
		Started: r.clock.Start().UTC().Format(time.RFC3339Nano), NotGated: r.notGated, Schedule: r.scheduleJSON(),
		ClockSkewNs: int64(s.ClockSkew), SharedKeys: r.c.Backend() == cluster.BackendExternal && s.Cluster.External.SharedKeys,
	}
	if r.measuresClock() {
		// Before the first operation: the history's clock against the
		// server's, so that several client hosts' histories can be put on
		// one timeline (lockbench check H1 H2 ...).
		if c, err := r.measureClock(ctx); err != nil {
			hdr.ClockError = err.Error()
		} else {
			hdr.Clock = &c
		}
	}
	hw, err := history.Create(r.histPath, hdr)
	if err != nil {
		return fmt.Errorf("%w: %v", cluster.ErrEnvironment, err)
	}
	r.hw = hw
	r.atClose(func() {
		if ctx.Err() != nil {
			hw.MarkInterrupted()
		}
		hw.Close()
	})
	st := r.st
	if adapterclient.IsExec(s.Strategy) {
		logPath := adapterLogName(r.histPath)
		lf, err := os.Create(logPath)
		if err != nil {
			return outdir.OutDirError(s.OutDir, err)
		}
		r.atClose(func() { lf.Close() })
		st = adapterclient.WithAdapterLog(st, lf, logPath)
		st = adapterclient.WithAdapterEnv(st, r.c.Security().Environ())
		if r.setup.ClientClock {
			// Each adapter process gets the clock shim and an offset
			// file of its own, in a folder removed when the run ends.
			shim, err := clockshim.Cached(ctx)
			if err != nil {
				return err
			}
			dir, err := os.MkdirTemp("", "lockbench-client-clock-")
			if err != nil {
				return fmt.Errorf("%w: client clock offsets: %v", cluster.ErrEnvironment, err)
			}
			r.atClose(func() { os.RemoveAll(dir) })
			st = adapterclient.WithAdapterClock(st, shim, dir)
		}
	}
	dial := workload.NewDialer(w, &r.cmds)
	dial.Security = r.c.Security()
	// The liveness probe (client -1) dials with its own, longer timeout
	// (workload.Config.ProbeTimeout): a short --op-timeout must not make it
	// report a deadlock it did not see.
	pw := w
	pw.OpTimeout = w.ProbeTimeout()
	probeDial := workload.NewDialer(pw, &r.cmds)
	probeDial.Security = r.c.Security()
	// Each logical client counts its own round trips (workload.RoundTrips),
	// which its acquires and releases record.
	var rtMu sync.Mutex
	rts := map[int]*workload.RoundTrips{}
	roundTrips := func(client int) *workload.RoundTrips {
		rtMu.Lock()
		defer rtMu.Unlock()
		if rts[client] == nil {
			rts[client] = &workload.RoundTrips{}
		}
		return rts[client]
	}
	dialFor := func(client int) workload.Dialer {
		if client < 0 {
			return probeDial
		}
		d := dial
		d.Rounds = roundTrips(client)
		return d
	}
	r.env = workload.NewEnv(st, hw, r.clock)
	if !adapterclient.IsExec(r.s.Strategy) {
		r.env.RoundTrips = roundTrips // Redis: the clients' hooks; etcd, ZooKeeper: impl.Config.RoundTrip
	}
	r.env.Resource = resource.New(w.Fencing)
	r.env.Security = r.c.Security() // etcd Lockers dial Endpoints themselves
	c, links, nodes := r.c, r.links, r.nodes
	switch {
	case r.topo.Kind == cluster.RedisCluster:
		// One cluster client over every node: it finds the key's primary.
		addrs := c.Addrs()
		r.env.Nodes = func(client int) ([]redis.UniversalClient, error) {
			return []redis.UniversalClient{dialFor(client).Cluster(addrs)}, nil
		}
		r.env.Endpoints = func(int) []string { return addrs }
	case r.setup.Sentinel:
		r.env.Nodes = func(client int) ([]redis.UniversalClient, error) {
			return []redis.UniversalClient{dialFor(client).Sentinel(c.MasterName(), c.SentinelAddrs())}, nil
		}
	case links != nil:
		r.env.Nodes = func(client int) ([]redis.UniversalClient, error) {
			return dialFor(client).Nodes(links.Addrs(client, len(nodes))), nil
		}
		r.env.Endpoints = func(client int) []string { return links.Addrs(client, len(nodes)) }
	default:
		addrs := make([]string, len(nodes))
		for i, n := range nodes {
			addrs[i] = n.Addr()
		}
		if r.redis() { // etcd and ZooKeeper Lockers dial Endpoints themselves
			r.env.Nodes = workload.DialNodes(addrs, dialFor)
		}
		r.env.Endpoints = func(int) []string { return addrs }
	}
	return nil
}

// measuresClock reports whether the run measures its history's clock
// against its lock server's (Redis TIME): on the external backend, where
// several client hosts may share the servers (--shared-keys), for a lock
// on Redis (etcd and ZooKeeper have no TIME; their histories carry no
// clock).
func (r *run) measuresClock() bool {
	return r.c != nil && r.c.Backend() == cluster.BackendExternal && r.redis() && len(r.nodes) > 0
}

// measureClock measures the history's clock against the first node the
// strategy talks to (preflight.MeasureServerClock, directly, never through
// the scenario's proxies); every host of a cross-host run lists the same
// servers in the same order, so all measure against one server's clock.
// ctx bounds it.
func (r *run) measureClock(ctx context.Context) (history.ClockSync, error) {
	addr := r.nodes[0].Addr()
	m, err := preflight.MeasureServerClock(ctx, addr, r.c.Security(), r.clock.Now)
	if err != nil {
		return history.ClockSync{}, err
	}
	return history.ClockSync{Server: "redis " + addr + " TIME", OffsetNs: m.OffsetNs, HalfRTTNs: m.HalfRTTNs}, nil
}

// scheduleJSON is the run's fault schedule as compact JSON for the
// history header, nil when it plays a named scenario.
func (r *run) scheduleJSON() json.RawMessage {
	if r.s.Schedule == nil {
		return nil
	}
	b, err := json.Marshal(r.s.Schedule)
	if err != nil {
		return nil // a Schedule always marshals
	}
	return b
}

// executed is what execute measured beside the history.
type executed struct {
	stats workload.Stats
	// clientCmds are the commands the lock clients sent (the probe's left
	// out); serverCmds those the servers executed, when serverCmdsKnown.
	clientCmds      int64
	serverCmds      int64
	serverCmdsKnown bool
	counter         []results.CounterSample
	noise           noise.Summary
}

// execute runs the workload with the scenario's nemesis beside it, heals
// the nemesis, counts the servers' commands (INFO commandstats before and
// after), runs the liveness probe, closes the history and stops the
// servers.
func (r *run) execute(ctx context.Context) (executed, error) {
	s, w, c := r.s, r.w, r.c
	// The nemesis's schedule starts when every client has made its first
	// call (the readiness barrier), and the workload runs its duration
	// after that.
	r.env.Ready = workload.NewReadiness()
	nem := r.sc.New(chaos.Env{Strategy: s.Strategy, TTL: w.TTL, Duration: w.Duration, Clock: r.clock, History: r.hw, Seed: s.Seed,
		Info: r.info, Clients: w.Clients, Cluster: c, Links: r.links, Ready: r.env.Ready})
	r.env.Faults = nem
	// Server-side command counts: INFO commandstats on every node before
	// and after the workload (RoundTripsPerGrant).
	statAddrs := make([]string, 0, len(c.Nodes()))
	var serverPIDs []int
	for _, n := range c.Nodes() {
		statAddrs = append(statAddrs, n.Addr())
		serverPIDs = append(serverPIDs, n.PID())
	}
	statsBefore, statsErr := []commandstats.NodeCalls(nil), errors.New("not a Redis cluster")
	if r.redis() {
		statsBefore, statsErr = commandstats.CommandCalls(ctx, statAddrs, time.Second, c.Security())
	}
	var pinged []string // PING reaches Redis servers only
	if r.redis() {
		pinged = statAddrs
	}
	var probes []noise.Probe // etcd and ZooKeeper: a read through the lock's client library
	if !r.redis() {
		pr, closeProbes, err := consensusProbes(r.info.Server, statAddrs, c.Security())
		if err != nil {
			return executed{}, fmt.Errorf("%w: %v", cluster.ErrEnvironment, err)
		}
		probes = pr
		r.atClose(closeProbes)
	}
	machine := noise.Start(ctx, noise.Options{Servers: pinged, PIDs: serverPIDs, Probes: probes})
	r.atClose(func() { machine.Stop() })
	stopCounter := sampleCounter(r.clock, &r.cmds)
	r.atClose(func() { stopCounter() })
	var stopServerCounter func() []results.CounterSample
	if !r.countsCommands() && r.redis() && statsErr == nil {
		// An adapter sends its commands itself: count them on the servers.
		stopServerCounter = sampleServerCounter(ctx, r.clock, statAddrs, c.Security())
		r.atClose(func() { stopServerCounter() })
	}
	obs, err := r.startObserver(ctx)
	if err != nil {
		return executed{}, err
	}
	if obs != nil {
		r.atClose(func() { obs.Stop(ctx) })
		r.env.Observer = obs
	}
	nemCtx, stopNemesis := context.WithCancel(ctx)
	nemDone := make(chan error, 1)
	go func() { nemDone <- nem.Run(nemCtx) }()

	var ex executed
	stats, err := workload.Run(ctx, w, r.env)
	ex.stats = stats
	r.hw.SetMaxStall(stats.MaxOverrun) // for checks of the history alone (lockbench check H1 H2)
	ex.counter, ex.noise = stopCounter(), machine.Stop()
	if !r.countsCommands() {
		// lockbench's counter saw none of the lock's commands, and 0
		// commands per grant would be a lie; the servers' counter (an
		// adapter on Redis) replaces it below.
		ex.counter = nil
	}
	var serverSeries []results.CounterSample
	if stopServerCounter != nil {
		serverSeries = stopServerCounter()
	}
	stopNemesis()
	nemErr := <-nemDone
	if err != nil && errors.Is(err, impl.ErrFatal) && ctx.Err() == nil {
		// A client that cannot go on (a broken adapter) stopped the run:
		// keep what was recorded, marked incomplete.
		r.hw.MarkIncomplete(err.Error())
		return ex, fmt.Errorf("%s/%s seed %d stopped: %w; the history so far is kept in %s, marked incomplete", s.Strategy, s.Scenario, s.Seed, err, r.histPath)
	}
	if err != nil {
		return ex, err
	}
	if nemErr != nil && !errors.Is(nemErr, context.Canceled) {
		return ex, fmt.Errorf("nemesis %s: %w", s.Scenario, nemErr)
	}
	if err := nem.Heal(ctx); err != nil {
		return ex, fmt.Errorf("nemesis %s: heal: %w", s.Scenario, err)
	}
	// The observer's last read of every key: the state the run left,
	// before the probe takes the keys.
	obs.Stop(ctx)
	ex.clientCmds = r.cmds.Load() // before the probe's own commands
	if statsErr == nil {
		if after, err := commandstats.CommandCalls(ctx, statAddrs, time.Second, c.Security()); err == nil {
			own := obs.Commands() // the observer's reads are not the lock's commands
			for i := range after {
				after[i].Calls -= own[statAddrs[i]]
			}
			ex.serverCmds, ex.serverCmdsKnown = commandstats.CommandsBetween(statsBefore, after)
		}
	}
	if serverSeries != nil && ex.serverCmdsKnown {
		ex.counter = scaleCounter(serverSeries, ex.serverCmds)
	}
	if err := workload.Probe(ctx, w, r.env); err != nil {
		return ex, err
	}
	if r.measuresClock() {
		// After the last operation: the drift of the offset over the run
		// widens the cross-host check's uncertainty (crosshost.Check).
		// A failure leaves the end line without a clock, which the check
		// says (drift not measured).
		if c, err := r.measureClock(ctx); err == nil {
			r.hw.SetClockAfter(c)
		}
	}
	if err := r.hw.Close(); err != nil {
		return ex, fmt.Errorf("%w: %v", cluster.ErrEnvironment, err)
	}
	if r.redis() {
		r.out.Redis = c.RedisVersion()
	} else {
		r.out.Server = r.info.Server.String() + " " + c.ServerVersion()
	}
	r.links.Close()
	if !r.shared {
		if err := c.Stop(); err != nil {
			return ex, fmt.Errorf("stop %s: %w", serverNoun(r.topo), err)
		}
	}
	return ex, nil
}

// startObserver starts the server-state observer of a Redis run
// (observer.Observer): it reads every key of the run on every Redis node
// of the cluster (replicas too: a failover promotes one, and the observer
// marks a replica's reads), through direct connections (never the
// scenario's proxies), named as the cluster names them (the strategy's
// per-node calls use the same names for its nodes). nil for locks on etcd
// or ZooKeeper, which are not observed.
func (r *run) startObserver(ctx context.Context) (*observer.Observer, error) {
	if !r.redis() {
		return nil, nil
	}
	var nodes []observer.Node
	for _, n := range r.c.Nodes() {
		nodes = append(nodes, observer.Node{Name: n.Name(), Addr: n.Addr()})
	}
	keys := make([]string, r.w.Keys)
	for i := range keys {
		keys[i] = r.w.Key(i)
	}
	obs, err := observer.Start(ctx, observer.Config{Nodes: nodes, Security: r.c.Security(), Keys: keys, TTL: r.w.TTL, Clock: r.clock, History: r.hw})
	if err != nil {
		return nil, fmt.Errorf("observer: %w", err)
	}
	return obs, nil
}

// judge checks the history file, not memory (`lockbench check` must give
// the same verdict), and fills the verdicts into the result
// (validate.Fill). It returns the history's operations.
func (r *run) judge() ([]history.Operation, error) {
	h, ops, err := history.Load(r.histPath)
	if err != nil {
		return nil, err
	}
	vis := strings.TrimSuffix(r.histPath, ".jsonl") + ".html"
	for _, old := range []string{vis, strings.TrimSuffix(vis, ".html") + "-resource.html"} {
		os.Remove(old) // a visualisation left by an earlier run of the same pair would mislead
	}
	rep := checker.Check(h, ops, checker.Options{Timeout: r.s.CheckTimeout, VisualizationPath: vis,
		Renewal: verdicts.RenewalOptions(r.s.Strategy, r.s.Scenario)})
	validate.Fill(&r.out, ops, rep, r.exp, r.s.OutDir)
	r.rep = rep
	return ops, nil
}

// measure fills in the run's throughput, commands per grant, latencies,
// machine noise, cost windows and call-budget envelope, and turns an
// unexpected verdict on an overloaded machine into ErrOverloaded.
func (r *run) measure(ops []history.Operation, ex executed) (results.Run, error) {
	out, stats, w := r.out, ex.stats, r.w
	out.Grants = stats.Grants
	out.Acquires = map[string]int{"ok": stats.Attempts[history.OK], "fail": stats.Attempts[history.Fail], "info": stats.Attempts[history.Info]}
	out.DurationS = stats.Elapsed.Seconds()
	out.Config.ScheduleWaitMs = float64(stats.ReadyAfter) / float64(time.Millisecond)
	if stats.ReadyAfter >= ScheduleWaitNoted {
		out.Config.Adjusted = append(out.Config.Adjusted, fmt.Sprintf("--duration %v → %v (the fault schedule waited %v for every client's first call, and the clients ran the duration after that)",
			w.Duration, (w.Duration+stats.ReadyAfter).Round(time.Millisecond), stats.ReadyAfter.Round(time.Millisecond)))
	}
	if out.DurationS > 0 {
		out.ThroughputPerS = float64(stats.Grants) / out.DurationS
	}
	if stats.Grants > 0 {
		if r.countsCommands() {
			out.ClientCommandsPerGrant = float64(ex.clientCmds) / float64(stats.Grants)
		}
		if ex.serverCmdsKnown {
			out.RoundTripsPerGrant = float64(ex.serverCmds) / float64(stats.Grants)
		}
	}
	if attempts := stats.Attempts[history.OK] + stats.Attempts[history.Fail] + stats.Attempts[history.Info]; ex.serverCmdsKnown && attempts > 0 {
		out.ServerCommandsPerAttempt = float64(ex.serverCmds) / float64(attempts)
	}
	var err error
	out.AcquireLatencyMs, err = lbstats.Percentiles(stats.LatenciesMs)
	if err != nil {
		return out, err
	}
	if out.GrantCallMs, err = lbstats.Percentiles(measure.GrantCalls(ops)); err != nil {
		return out, err
	}
	noiseSum := ex.noise
	out.Noise = &noiseSum
	figures.SetWindows(&out, ops, ex.counter)
	out.Envelope = envelopeOf(r.st, w.TTL, out.Noise, len(out.Faults) > 0)
	validate.Stalled(&out, r.rep, r.exp, stats.MaxOverrun, w.TTL)
	validate.BusyPartialOrphans(&out, r.rep, r.exp)
	if lag := stats.MaxOverrun; lag > w.TTL/2 && out.Outcome() == results.OutcomeUnexpected {
		out.Error = fmt.Sprintf("a client stalled for %v (TTL %v) inside a hold (a critical section overran its planned wait, or the first read came late after the grant) with no fault to explain it: the machine was too busy for this run's verdict to mean anything; rerun with fewer clients (--clients) or a longer TTL (--ttl)", lag.Round(time.Millisecond), w.TTL)
		return out, fmt.Errorf("%s/%s seed %d: %w: %s", r.s.Strategy, r.s.Scenario, r.s.Seed, ErrOverloaded, out.Error)
	}
	return out, nil
}

// CheckBackend checks the backend before any run, after the usage checks
// (preflight.CheckBackend): the servers of specs' etcd and ZooKeeper
// strategies, the docker image, redis-server, or the external servers for
// the fault features of specs' scenarios. Specs that do not resolve are
// skipped (Run reports them). Run makes the same external check on the
// servers of its own topology.
func CheckBackend(ctx context.Context, o cluster.Options, prefix string, specs []Spec) error {
	var consensus []cluster.Topology
	var need []cluster.Feature
	for _, s := range specs {
		if st, err := s.strategy(); err == nil && st.Info().Server != impl.ServerRedis {
			consensus = append(consensus, chaos.StrategyTopology(st.Info()))
		}
		if o.Backend != cluster.BackendExternal {
			continue // only external servers are probed for fault commands
		}
		s.Cluster = o
		st, sc, _, _, err := s.Resolved()
		if err != nil {
			continue
		}
		for _, f := range sc.Requires(st.Info()) {
			if !slices.Contains(need, f) {
				need = append(need, f)
			}
		}
	}
	return preflight.CheckBackend(ctx, o, prefix, consensus, need)
}

func ms(ns int64) float64 { return float64(ns) / 1e6 }

// serverNoun names the servers of topology t in errors: "redis", "etcd"
// or "zookeeper".
func serverNoun(t cluster.Topology) string {
	if t.Kind.Consensus() {
		return string(t.Kind)
	}
	return "redis"
}

func runConfig(w workload.Config, t cluster.Topology, o cluster.Options) results.RunConfig {
	var pol []string
	if w.Policy.CheckValidity {
		pol = append(pol, "check-validity")
	}
	if w.Policy.HonourLost {
		pol = append(pol, "honour-lost")
	}
	if w.Policy.AskLock {
		pol = append(pol, "ask-lock")
	}
	return results.RunConfig{
		Clients: w.Clients, Keys: w.Keys, TTLMs: ms(int64(w.TTL)), OpTimeoutMs: ms(int64(w.OpTimeout)), DurationMs: ms(int64(w.Duration)),
		CSMs: w.CS.String(), Retry: w.Retry.String(), ThinkMs: ms(int64(w.Think)), Topology: t.String(), Fencing: string(w.Fencing),
		Reentrancy: w.Reentrancy, Policy: pol, Backend: cluster.BackendName(o), Image: imageOf(o),
	}
}

// imageOf is the Docker image of a docker run, "" otherwise.
func imageOf(o cluster.Options) string {
	if o.Backend != cluster.BackendDocker {
		return ""
	}
	if o.Image == "" {
		return dockerd.DefaultImage
	}
	return o.Image
}

// countsCommands reports whether lockbench's command counter sees the
// lock's commands: not for an exec: adapter, which sends its Redis
// commands itself, nor for a lock on etcd or ZooKeeper, whose clients
// the counter does not hook.
func (r *run) countsCommands() bool {
	return !adapterclient.IsExec(r.s.Strategy) && r.st.Info().Server == impl.ServerRedis
}

// fileSafe turns a key into a file-name part: letters, digits, '-' and '_'
// kept, anything else '_'.
func fileSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return r
		}
		return '_'
	}, s)
}
