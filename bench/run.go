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
func Run(ctx context.Context, s Spec) (results.Run, error) {
	st, sc, setup, w, err := s.Resolved()
	if err != nil {
		return results.Run{}, err
	}
	info := st.Info()
	topo := sc.TopologyFor(info)
	notGated := validate.NotGated(st, s.Scenario, w)
	exp := validate.For(s.Strategy, s.Scenario, notGated)
	out := results.Run{
		Strategy: s.Strategy, Scenario: s.Scenario, ScenarioKind: string(sc.Kind), Seed: s.Seed,
		Expected: exp.Summary(), ExpectedChecks: exp.Checks(), Reason: exp.Reason,
		History: historyName(s.Strategy, s.Scenario, s.Seed), Command: s.Command,
		Config: runConfig(w, topo, s.Cluster),
	}
	if t, ok := st.(impl.Tunable); ok {
		out.Config.Library = t.Settings()
	}
	histPath := filepath.Join(s.OutDir, out.History)

	copts := s.Cluster
	if setup.Persistence != "" {
		copts.Persistence = setup.Persistence
	}
	if setup.ClockShim && copts.ClockShim == "" {
		if copts.ClockShim, err = cluster.ClockShim(ctx); err != nil {
			return out, err
		}
	}
	c, err := cluster.Start(ctx, topo, copts)
	if err != nil {
		return out, fmt.Errorf("start redis for %s/%s: %w", s.Strategy, s.Scenario, err)
	}
	defer c.Stop()
	redisServers := info.Server == impl.ServerRedis
	if c.Backend() == cluster.BackendExternal && redisServers {
		shared := s.Cluster.External.SharedKeys
		if err := cluster.CheckExternal(ctx, c.Addrs(), w.KeyPrefix, sc.Requires(info), shared); err != nil {
			return out, err
		}
		if !shared {
			// Delete the run's keys when it ends (also on error), so that
			// the next run's check finds none; the servers are the user's.
			defer cluster.DeleteExternalKeys(ctx, c.Addrs(), w.KeyPrefix)
		}
	}
	// The histories folder is made only now: a run that could not start
	// its servers leaves no empty folder behind.
	if err := os.MkdirAll(filepath.Dir(histPath), 0o755); err != nil {
		return out, results.OutDirError(s.OutDir, err)
	}
	nodes := c.Nodes()
	if n := info.Nodes; n >= 1 && n < len(nodes) {
		nodes = nodes[:n] // a single-node strategy talks to the primary only
	}
	var links *chaos.Links
	if setup.Proxies {
		var only []int // nil: every node
		if setup.ProxyNode > 0 {
			only = []int{setup.ProxyNode - 1}
		}
		if links, err = chaos.NewLinksOf(ctx, w.Clients, nodes, only); err != nil {
			return out, err
		}
		defer links.Close()
	}

	clock := history.NewClock()
	hw, err := history.Create(histPath, history.Header{
		Strategy: s.Strategy, Scenario: s.Scenario, Seed: s.Seed, Clients: w.Clients, Keys: w.Keys,
		TTLMs: w.TTL.Milliseconds(), Fencing: string(w.Fencing), Reentrant: info.Claims.Reentrant,
		Started: clock.Start().UTC().Format(time.RFC3339Nano), NotGated: notGated,
	})
	if err != nil {
		return out, fmt.Errorf("%w: %v", cluster.ErrEnvironment, err)
	}
	defer func() {
		if ctx.Err() != nil {
			hw.MarkInterrupted()
		}
		hw.Close()
	}()
	if impl.IsExec(s.Strategy) {
		logPath := adapterLogName(histPath)
		lf, err := os.Create(logPath)
		if err != nil {
			return out, results.OutDirError(s.OutDir, err)
		}
		defer lf.Close()
		st = impl.WithAdapterLog(st, lf, logPath)
	}

	var cmds atomic.Int64
	dial := workload.NewDialer(w, &cmds)
	// The liveness probe (client -1) dials with its own, longer timeout
	// (workload.Config.ProbeTimeout): a short --op-timeout must not make it
	// report a deadlock it did not see.
	pw := w
	pw.OpTimeout = w.ProbeTimeout()
	probeDial := workload.NewDialer(pw, &cmds)
	dialFor := func(client int) workload.Dialer {
		if client < 0 {
			return probeDial
		}
		return dial
	}
	env := workload.Env{
		Strategy: st,
		History:  hw,
		Clock:    clock,
		IDs:      &history.IDs{},
		Resource: workload.NewResource(w.Fencing),
	}
	switch {
	case setup.Sentinel:
		env.Nodes = func(client int) ([]redis.UniversalClient, error) {
			return []redis.UniversalClient{dialFor(client).Sentinel(c.MasterName(), c.SentinelAddrs())}, nil
		}
	case links != nil:
		env.Nodes = func(client int) ([]redis.UniversalClient, error) {
			return dialFor(client).Nodes(links.Addrs(client, len(nodes))), nil
		}
		env.Endpoints = func(client int) []string { return links.Addrs(client, len(nodes)) }
	default:
		addrs := make([]string, len(nodes))
		for i, n := range nodes {
			addrs[i] = n.Addr()
		}
		if redisServers { // etcd and ZooKeeper Lockers dial Endpoints themselves
			env.Nodes = func(client int) ([]redis.UniversalClient, error) { return dialFor(client).Nodes(addrs), nil }
		}
		env.Endpoints = func(int) []string { return addrs }
	}
	nem := sc.New(chaos.Env{Strategy: s.Strategy, TTL: w.TTL, Duration: w.Duration, Clock: clock, History: hw, Seed: s.Seed,
		Info: info, Clients: w.Clients, Cluster: c, Links: links})
	env.Faults = nem
	// Server-side command counts: INFO commandstats on every node before
	// and after the workload (RoundTripsPerGrant).
	statAddrs := make([]string, 0, len(c.Nodes()))
	var serverPIDs []int
	for _, n := range c.Nodes() {
		statAddrs = append(statAddrs, n.Addr())
		serverPIDs = append(serverPIDs, n.PID())
	}
	statsBefore, statsErr := []workload.NodeCalls(nil), errors.New("not a Redis cluster")
	if redisServers {
		statsBefore, statsErr = workload.CommandCalls(ctx, statAddrs, time.Second)
	}
	var pinged []string // PING reaches Redis servers only
	if redisServers {
		pinged = statAddrs
	}
	machine := noise.Start(ctx, noise.Options{Servers: pinged, PIDs: serverPIDs})
	defer machine.Stop()
	stopCounter := sampleCounter(clock, &cmds)
	defer stopCounter()
	nemCtx, stopNemesis := context.WithCancel(ctx)
	nemDone := make(chan error, 1)
	go func() { nemDone <- nem.Run(nemCtx) }()

	stats, err := workload.Run(ctx, w, env)
	counter, noiseSum := stopCounter(), machine.Stop()
	stopNemesis()
	nemErr := <-nemDone
	if err != nil && errors.Is(err, impl.ErrFatal) && ctx.Err() == nil {
		// A client that cannot go on (a broken adapter) stopped the run:
		// keep what was recorded, marked incomplete.
		hw.MarkIncomplete(err.Error())
		return out, fmt.Errorf("%s/%s seed %d stopped: %w; the history so far is kept in %s, marked incomplete", s.Strategy, s.Scenario, s.Seed, err, histPath)
	}
	if err != nil {
		return out, err
	}
	if nemErr != nil && !errors.Is(nemErr, context.Canceled) {
		return out, fmt.Errorf("nemesis %s: %w", s.Scenario, nemErr)
	}
	if err := nem.Heal(ctx); err != nil {
		return out, fmt.Errorf("nemesis %s: heal: %w", s.Scenario, err)
	}
	clientCmds := cmds.Load() // before the probe's own commands
	var serverCmds int64
	serverCmdsKnown := false
	if statsErr == nil {
		if after, err := workload.CommandCalls(ctx, statAddrs, time.Second); err == nil {
			serverCmds, serverCmdsKnown = workload.CommandsBetween(statsBefore, after)
		}
	}
	if err := workload.Probe(ctx, w, env); err != nil {
		return out, err
	}
	if err := hw.Close(); err != nil {
		return out, fmt.Errorf("%w: %v", cluster.ErrEnvironment, err)
	}
	if redisServers {
		out.Redis = c.RedisVersion()
	}
	links.Close()
	if err := c.Stop(); err != nil {
		return out, fmt.Errorf("stop redis: %w", err)
	}

	// Check the file, not memory: `lockbench check` must give the same verdict.
	h, ops, err := history.Load(histPath)
	if err != nil {
		return out, err
	}
	vis := strings.TrimSuffix(histPath, ".jsonl") + ".html"
	for _, old := range []string{vis, strings.TrimSuffix(vis, ".html") + "-resource.html"} {
		os.Remove(old) // a visualisation left by an earlier run of the same pair would mislead
	}
	rep := checker.Check(h, ops, checker.Options{Timeout: s.CheckTimeout, VisualizationPath: vis})
	validate.Fill(&out, ops, rep, exp, s.OutDir)

	out.Grants = stats.Grants
	out.Acquires = map[string]int{"ok": stats.Attempts[history.OK], "fail": stats.Attempts[history.Fail], "info": stats.Attempts[history.Info]}
	out.DurationS = stats.Elapsed.Seconds()
	if out.DurationS > 0 {
		out.ThroughputPerS = float64(stats.Grants) / out.DurationS
	}
	if stats.Grants > 0 {
		out.ClientCommandsPerGrant = float64(clientCmds) / float64(stats.Grants)
		if serverCmdsKnown {
			out.RoundTripsPerGrant = float64(serverCmds) / float64(stats.Grants)
		}
	}
	out.AcquireLatencyMs, err = results.Percentiles(stats.LatenciesMs)
	if err != nil {
		return out, err
	}
	if out.GrantCallMs, err = results.Percentiles(checker.GrantCalls(ops)); err != nil {
		return out, err
	}
	out.Noise = &noiseSum
	out.SetWindows(ops, counter)
	out.Envelope = envelopeOf(st, w.TTL, out.Noise, len(out.Faults) > 0)
	if lag := stats.MaxOverrun; lag > w.TTL/2 && out.Outcome() == results.OutcomeUnexpected {
		out.Error = fmt.Sprintf("a client stalled for %v (TTL %v) inside a hold (a critical section overran its planned wait, or the first read came late after the grant) with no fault to explain it: the machine was too busy for this run's verdict to mean anything; rerun with fewer clients (--clients) or a longer TTL (--ttl)", lag.Round(time.Millisecond), w.TTL)
		return out, fmt.Errorf("%s/%s seed %d: %w: %s", s.Strategy, s.Scenario, s.Seed, ErrOverloaded, out.Error)
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
