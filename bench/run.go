// Package bench orchestrates lockbench: one run is scenario → cluster →
// workload (with the scenario's nemesis) → history file → checker →
// validate (the verdict table and the judgement) → a results.Run; a bench
// is a profile's matrix of runs plus the report.
package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/chaos"
	"github.com/lockbench/lockbench/checker"
	"github.com/lockbench/lockbench/cluster"
	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/internal/errs"
	"github.com/lockbench/lockbench/internal/noise"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/validate"
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
	// Strategy and Scenario are registry names (impl.Lookup, chaos.Lookup).
	Strategy, Scenario string
	// Workload configures the clients; Seed and Policy are filled in from
	// this Spec. Zero fields take workload's defaults.
	Workload workload.Config
	// Policy overrides the strategy's default usage policy when non-nil.
	Policy *impl.Policy
	// Fencing overrides the resource's fencing mode; default "writes" for
	// strategies that claim fencing, else "off".
	Fencing workload.Fencing
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
	// (impl.Settings, e.g. "redsync-tries": "3"); nil: the defaults.
	Library map[string]string
	// Shared, when set, lends the run its etcd or ZooKeeper cluster
	// instead of one started and stopped for the run alone (see Shared);
	// the run's keys then carry a prefix of their own. nil: every run
	// starts its own servers.
	Shared *Shared
}

// Resolved returns the spec's strategy, scenario, the scenario's setup for
// the strategy and the full workload config (the setup's client count, TTL,
// think time and minimum duration applied), or an error wrapping errs.ErrUsage that names
// the bad input and the valid choices.
func (s Spec) Resolved() (impl.Strategy, chaos.Scenario, chaos.Setup, workload.Config, error) {
	fail := func(err error) (impl.Strategy, chaos.Scenario, chaos.Setup, workload.Config, error) {
		return nil, chaos.Scenario{}, chaos.Setup{}, workload.Config{}, fmt.Errorf("%w: %v", errs.ErrUsage, err)
	}
	st, err := impl.Lookup(s.Strategy)
	if err != nil {
		return fail(err)
	}
	sc, err := chaos.Lookup(s.Scenario)
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
	w := s.Workload
	w.Seed = s.Seed
	if !info.Claims.Reentrant {
		w.Reentrancy = 1 // nesting applies to reentrant strategies only
	}
	if setup.Clients > 0 {
		w.Clients = setup.Clients
	}
	if setup.TTL > 0 {
		w.TTL = setup.TTL
		w.CS = workload.CSDist{} // defaults follow the TTL
		w.Retry = workload.Retry{}
		w.SafetyMargin = 0
	}
	if stt, ok := st.(impl.ServerTTLer); ok && w.TTL > 0 {
		// The server enforces another TTL (etcd: whole seconds): the run,
		// its critical sections, retries and faults follow that one, so a
		// pause of 2×TTL outlasts the lease the server keeps.
		w.TTL = stt.ServerTTL(w.TTL)
	}
	if info.Server != impl.ServerRedis {
		w.TTL = max(w.TTL, ConsensusMinTTL)
		w.Duration = max(w.Duration, ConsensusMinDuration)
		if w.OpTimeout == 0 {
			// A ZooKeeper acquire waits in the recipe's queue: with the
			// default 500 ms deadline most of 16 queued clients give up
			// (measured at TTL 1 s: 16 grants in 3 s with 79 given up;
			// with 3 s, 44-45 grants).
			w.OpTimeout = 3 * w.TTL
		}
	}
	if w.Duration < setup.MinDuration {
		w.Duration = setup.MinDuration
	}
	w.Policy = info.Policy
	if s.Policy != nil {
		w.Policy = *s.Policy
	}
	w.Fencing = s.Fencing
	if w.Fencing == "" {
		w.Fencing = workload.FencingOff
		if info.Claims.Fencing {
			w.Fencing = workload.FencingWrites
		}
	}
	w, err = w.WithDefaults()
	if err != nil {
		return fail(err)
	}
	if setup.ThinkTTL > 0 {
		w.Think = time.Duration(setup.ThinkTTL * float64(w.TTL))
	}
	if st, err = impl.Tune(st, s.Library, w.TTL); err != nil {
		return fail(err)
	}
	if s.Policy == nil {
		w.Policy = st.Info().Policy // a setting may change it (e.g. --redislock-refresh off)
	}
	return st, sc, setup, w, nil
}

// historyName is the history file of a run, relative to the results
// folder. Characters of an exec: strategy's command that do not belong
// in a file name become '_'.
func historyName(strategy, scenario string, seed int64) string {
	return filepath.Join("histories", fmt.Sprintf("%s-%s-%d.jsonl", fileSafe(strategy), scenario, seed))
}

// adapterLogName is the file, beside a run's history, that holds the
// stderr of its adapter processes (exec: strategies; see historyName).
func adapterLogName(history string) string {
	return strings.TrimSuffix(history, ".jsonl") + ".adapter.log"
}

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
	notGated string // validate.NotGated: why the run is not gated, "" when it is
	exp      validate.Expectation
	rep      checker.Report // the checkers' report, set by judge
	out      results.Run
	histPath string

	c      *cluster.Cluster
	shared bool // c is lent by Spec.Shared: the run does not stop it
	links  *chaos.Links
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

// plan resolves s (Spec.Resolved), looks up its expectation in the verdict
// table and fills in what the results.Run knows before the run starts.
func plan(s Spec) (*run, error) {
	st, sc, setup, w, err := s.Resolved()
	if err != nil {
		return nil, err
	}
	r := &run{s: s, st: st, info: st.Info(), sc: sc, setup: setup, w: w}
	r.topo = sc.TopologyFor(r.info)
	r.notGated = validate.NotGated(st, s.Scenario, w)
	r.exp = validate.For(s.Strategy, s.Scenario, r.notGated)
	r.out = results.Run{
		Strategy: s.Strategy, Scenario: s.Scenario, ScenarioKind: string(sc.Kind), Seed: s.Seed,
		Expected: r.exp.Summary(), ExpectedChecks: r.exp.Checks(), Reason: r.exp.Reason,
		History: historyName(s.Strategy, s.Scenario, s.Seed), Command: s.Command,
		Config: runConfig(w, r.topo, s.Cluster),
	}
	if t, ok := st.(impl.Tunable); ok {
		r.out.Config.Library = t.Settings()
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
		if copts.ClockShim, err = cluster.ClockShim(ctx); err != nil {
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
		if err := cluster.CheckExternal(ctx, c.Addrs(), w.KeyPrefix, r.sc.Requires(r.info), shared); err != nil {
			return err
		}
		if !shared {
			// Delete the run's keys when it ends (also on error), so that
			// the next run's check finds none; the servers are the user's.
			r.atClose(func() { cluster.DeleteExternalKeys(ctx, c.Addrs(), w.KeyPrefix) })
		}
	}
	// The histories folder is made only now: a run that could not start
	// its servers leaves no empty folder behind.
	if err := os.MkdirAll(filepath.Dir(r.histPath), 0o755); err != nil {
		return results.OutDirError(s.OutDir, err)
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
		if r.links, err = chaos.NewLinksOf(ctx, w.Clients, r.nodes, only); err != nil {
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
	r.clock = history.NewClock()
	hw, err := history.Create(r.histPath, history.Header{
		Strategy: s.Strategy, Scenario: s.Scenario, Seed: s.Seed, Clients: w.Clients, Keys: w.Keys,
		TTLMs: w.TTL.Milliseconds(), Fencing: string(w.Fencing), Reentrant: r.info.Claims.Reentrant,
		Started: r.clock.Start().UTC().Format(time.RFC3339Nano), NotGated: r.notGated,
	})
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
	if impl.IsExec(s.Strategy) {
		logPath := adapterLogName(r.histPath)
		lf, err := os.Create(logPath)
		if err != nil {
			return results.OutDirError(s.OutDir, err)
		}
		r.atClose(func() { lf.Close() })
		st = impl.WithAdapterLog(st, lf, logPath)
	}
	dial := workload.NewDialer(w, &r.cmds)
	// The liveness probe (client -1) dials with its own, longer timeout
	// (workload.Config.ProbeTimeout): a short --op-timeout must not make it
	// report a deadlock it did not see.
	pw := w
	pw.OpTimeout = w.ProbeTimeout()
	probeDial := workload.NewDialer(pw, &r.cmds)
	dialFor := func(client int) workload.Dialer {
		if client < 0 {
			return probeDial
		}
		return dial
	}
	r.env = workload.NewEnv(st, hw, r.clock)
	r.env.Resource = workload.NewResource(w.Fencing)
	c, links, nodes := r.c, r.links, r.nodes
	switch {
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
	nem := r.sc.New(chaos.Env{Strategy: s.Strategy, TTL: w.TTL, Duration: w.Duration, Clock: r.clock, History: r.hw, Seed: s.Seed,
		Info: r.info, Clients: w.Clients, Cluster: c, Links: r.links})
	r.env.Faults = nem
	// Server-side command counts: INFO commandstats on every node before
	// and after the workload (RoundTripsPerGrant).
	statAddrs := make([]string, 0, len(c.Nodes()))
	var serverPIDs []int
	for _, n := range c.Nodes() {
		statAddrs = append(statAddrs, n.Addr())
		serverPIDs = append(serverPIDs, n.PID())
	}
	statsBefore, statsErr := []workload.NodeCalls(nil), errors.New("not a Redis cluster")
	if r.redis() {
		statsBefore, statsErr = workload.CommandCalls(ctx, statAddrs, time.Second)
	}
	var pinged []string // PING reaches Redis servers only
	if r.redis() {
		pinged = statAddrs
	}
	machine := noise.Start(ctx, noise.Options{Servers: pinged, PIDs: serverPIDs})
	r.atClose(func() { machine.Stop() })
	stopCounter := sampleCounter(r.clock, &r.cmds)
	r.atClose(func() { stopCounter() })
	nemCtx, stopNemesis := context.WithCancel(ctx)
	nemDone := make(chan error, 1)
	go func() { nemDone <- nem.Run(nemCtx) }()

	var ex executed
	stats, err := workload.Run(ctx, w, r.env)
	ex.stats = stats
	ex.counter, ex.noise = stopCounter(), machine.Stop()
	if !r.countsCommands() {
		// lockbench's counter saw none of the lock's commands, and 0
		// commands per grant would be a lie.
		ex.counter = nil
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
	ex.clientCmds = r.cmds.Load() // before the probe's own commands
	if statsErr == nil {
		if after, err := workload.CommandCalls(ctx, statAddrs, time.Second); err == nil {
			ex.serverCmds, ex.serverCmdsKnown = workload.CommandsBetween(statsBefore, after)
		}
	}
	if err := workload.Probe(ctx, w, r.env); err != nil {
		return ex, err
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
	rep := checker.Check(h, ops, checker.Options{Timeout: r.s.CheckTimeout, VisualizationPath: vis})
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
	var err error
	out.AcquireLatencyMs, err = results.Percentiles(stats.LatenciesMs)
	if err != nil {
		return out, err
	}
	if out.GrantCallMs, err = results.Percentiles(checker.GrantCalls(ops)); err != nil {
		return out, err
	}
	noiseSum := ex.noise
	out.Noise = &noiseSum
	out.SetWindows(ops, ex.counter)
	out.Envelope = envelopeOf(r.st, w.TTL, out.Noise, len(out.Faults) > 0)
	validate.Stalled(&out, r.rep, r.exp, stats.MaxOverrun, w.TTL)
	if lag := stats.MaxOverrun; lag > w.TTL/2 && out.Outcome() == results.OutcomeUnexpected {
		out.Error = fmt.Sprintf("a client stalled for %v (TTL %v) inside a hold (a critical section overran its planned wait, or the first read came late after the grant) with no fault to explain it: the machine was too busy for this run's verdict to mean anything; rerun with fewer clients (--clients) or a longer TTL (--ttl)", lag.Round(time.Millisecond), w.TTL)
		return out, fmt.Errorf("%s/%s seed %d: %w: %s", r.s.Strategy, r.s.Scenario, r.s.Seed, ErrOverloaded, out.Error)
	}
	return out, nil
}

// CheckBackend checks the backend before any run, after the usage checks
// (cluster.CheckBackend): the servers of specs' etcd and ZooKeeper
// strategies, the docker image, redis-server, or the external servers for
// the fault features of specs' scenarios. Specs that do not resolve are
// skipped (Run reports them). Run makes the same external check on the
// servers of its own topology.
func CheckBackend(ctx context.Context, o cluster.Options, prefix string, specs []Spec) error {
	var consensus []cluster.Topology
	var need []cluster.Feature
	for _, s := range specs {
		if st, err := impl.Lookup(s.Strategy); err == nil && st.Info().Server != impl.ServerRedis {
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
	return cluster.CheckBackend(ctx, o, prefix, consensus, need)
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
	return results.RunConfig{
		Clients: w.Clients, Keys: w.Keys, TTLMs: ms(int64(w.TTL)), DurationMs: ms(int64(w.Duration)),
		CSMs: w.CS.String(), Retry: w.Retry.String(), Topology: t.String(), Fencing: string(w.Fencing),
		Reentrancy: w.Reentrancy, Policy: pol, Backend: cluster.BackendName(o), Image: imageOf(o),
	}
}

// imageOf is the Docker image of a docker run, "" otherwise.
func imageOf(o cluster.Options) string {
	if o.Backend != cluster.BackendDocker {
		return ""
	}
	if o.Image == "" {
		return cluster.DefaultImage
	}
	return o.Image
}

// countsCommands reports whether lockbench's command counter sees the
// lock's commands: not for an exec: adapter, which sends its Redis
// commands itself, nor for a lock on etcd or ZooKeeper, whose clients
// the counter does not hook.
func (r *run) countsCommands() bool {
	return !impl.IsExec(r.s.Strategy) && r.st.Info().Server == impl.ServerRedis
}
