// Package bench orchestrates lockbench: one run is scenario → cluster →
// workload (with the scenario's nemesis) → history file → checker → a
// results.Run; a bench is a profile's matrix of runs plus the report. The
// verdict table (verdicts.go) says what each (strategy, scenario) pair must
// show.
package bench

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sort"
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
	"github.com/lockbench/lockbench/results"
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
	if why := Unsupported(s.Cluster, sc, info); why != "" {
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

// Topology returns the cluster topology a strategy needs.
func Topology(st impl.Strategy) cluster.Topology { return topologyOf(st.Info()) }

// topologyOf is Topology from a strategy's Info.
func topologyOf(info impl.Info) cluster.Topology {
	if info.Nodes > 1 {
		return cluster.Topology{Kind: cluster.Independent, Nodes: info.Nodes}
	}
	return cluster.Topology{Kind: cluster.Single}
}

// RunTopology returns the topology a run of a strategy (its Info) under
// scenario sc uses: the scenario's when its setup sets one, else the
// strategy's (Topology).
func RunTopology(info impl.Info, sc chaos.Scenario) cluster.Topology {
	if t := sc.SetupFor(info).Topology; t.Kind != "" {
		return t
	}
	return topologyOf(info)
}

// TooFewServers returns "" when o is not the external backend or when its
// servers (o.External.Addrs) and Sentinels suffice for topology t, else
// what is missing and the fix, e.g. "needs 5 servers (topology
// independent:5), --redis-addrs gives 1: give 5 addresses in
// --redis-addrs".
func TooFewServers(o cluster.Options, t cluster.Topology) string {
	if o.Backend != cluster.BackendExternal {
		return ""
	}
	if n, have := t.Servers(), len(o.External.Addrs); have < n {
		return fmt.Sprintf("needs %d servers (topology %s), --redis-addrs gives %d: give %d addresses in --redis-addrs", n, t, have, n)
	}
	if t.Sentinels > 0 && len(o.External.SentinelAddrs) == 0 {
		return fmt.Sprintf("needs Sentinels (topology %s): give --sentinel-addrs and --master-name", t)
	}
	return ""
}

// CheckServers returns nil unless strategy (under scenario; "" for the
// strategy's own topology) cannot run on the external backend of o for
// too few servers; then an error wrapping errs.ErrUsage naming the strategy,
// the servers it needs and the fix; choose is the other fix ("a
// --strategy that needs fewer"). Unknown names and scenarios that do
// not apply give nil (Resolved reports them).
func CheckServers(o cluster.Options, strategy, scenario, choose string) error {
	st, err := impl.Lookup(strategy)
	if err != nil {
		return nil
	}
	t := Topology(st)
	if scenario != "" {
		sc, err := chaos.Lookup(scenario)
		if err != nil {
			return nil
		}
		if ok, _ := sc.AppliesTo(st.Info()); !ok {
			return nil
		}
		t = RunTopology(st.Info(), sc)
	}
	if why := TooFewServers(o, t); why != "" {
		on := ""
		if scenario != "" && t != Topology(st) {
			on = " under scenario " + scenario
		}
		return fmt.Errorf("%w: strategy %s%s %s, or choose %s (lockbench list shows each strategy's NODES)", errs.ErrUsage, strategy, on, why, choose)
	}
	return nil
}

// HistoryName is the history file of a run, relative to the results folder.
func HistoryName(strategy, scenario string, seed int64) string {
	return filepath.Join("histories", fmt.Sprintf("%s-%s-%d.jsonl", strategy, scenario, seed))
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
	topo := RunTopology(info, sc)
	ungated := customized(s, info, w)
	exp := ExpectedFor(s.Strategy, s.Scenario, ungated)
	out := results.Run{
		Strategy: s.Strategy, Scenario: s.Scenario, Seed: s.Seed,
		Expected: exp.Summary(), ExpectedChecks: exp.Checks(), Reason: exp.Reason,
		History: HistoryName(s.Strategy, s.Scenario, s.Seed), Command: s.Command,
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
		if copts.ClockShim, err = ClockShim(ctx); err != nil {
			return out, err
		}
	}
	c, err := cluster.Start(ctx, topo, copts)
	if err != nil {
		return out, fmt.Errorf("start redis for %s/%s: %w", s.Strategy, s.Scenario, err)
	}
	defer c.Stop()
	if c.Backend() == cluster.BackendExternal {
		shared := s.Cluster.External.SharedKeys
		if err := checkExternal(ctx, c.Addrs(), w.KeyPrefix, sc.Requires(info), shared); err != nil {
			return out, err
		}
		if !shared {
			// Delete the run's keys when it ends (also on error), so that
			// the next run's check finds none; the servers are the user's.
			defer deleteExternalKeys(ctx, c.Addrs(), w.KeyPrefix)
		}
	}
	// The histories folder is made only now: a run that could not start
	// its servers leaves no empty folder behind.
	if err := os.MkdirAll(filepath.Dir(histPath), 0o755); err != nil {
		return out, OutDirError(s.OutDir, err)
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
		Started: clock.Start().UTC().Format(time.RFC3339Nano), Ungated: ungated,
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

	var cmds atomic.Int64
	dial := newDialer(w, &cmds)
	// The liveness probe (client -1) dials with its own, longer timeout
	// (workload.Config.ProbeTimeout): a short --op-timeout must not make it
	// report a deadlock it did not see.
	pw := w
	pw.OpTimeout = w.ProbeTimeout()
	probeDial := newDialer(pw, &cmds)
	dialFor := func(client int) dialer {
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
			return []redis.UniversalClient{dialFor(client).sentinel(c.MasterName(), c.SentinelAddrs())}, nil
		}
	case links != nil:
		env.Nodes = func(client int) ([]redis.UniversalClient, error) {
			return dialFor(client).nodes(links.Addrs(client, len(nodes))), nil
		}
		env.Endpoints = func(client int) []string { return links.Addrs(client, len(nodes)) }
	default:
		addrs := make([]string, len(nodes))
		for i, n := range nodes {
			addrs[i] = n.Addr()
		}
		env.Nodes = func(client int) ([]redis.UniversalClient, error) { return dialFor(client).nodes(addrs), nil }
		env.Endpoints = func(int) []string { return addrs }
	}
	nem := sc.New(chaos.Env{Strategy: s.Strategy, TTL: w.TTL, Duration: w.Duration, Clock: clock, History: hw, Seed: s.Seed,
		Info: info, Clients: w.Clients, Cluster: c, Links: links})
	env.Faults = nem
	// Server-side command counts: INFO commandstats on every node before
	// and after the workload (RoundTripsPerGrant).
	statAddrs := make([]string, 0, len(c.Nodes()))
	for _, n := range c.Nodes() {
		statAddrs = append(statAddrs, n.Addr())
	}
	statsBefore, statsErr := commandCalls(ctx, statAddrs, time.Second)
	nemCtx, stopNemesis := context.WithCancel(ctx)
	nemDone := make(chan error, 1)
	go func() { nemDone <- nem.Run(nemCtx) }()

	stats, err := workload.Run(ctx, w, env)
	stopNemesis()
	nemErr := <-nemDone
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
		if after, err := commandCalls(ctx, statAddrs, time.Second); err == nil {
			serverCmds, serverCmdsKnown = commandsBetween(statsBefore, after)
		}
	}
	if err := workload.Probe(ctx, w, env); err != nil {
		return out, err
	}
	if err := hw.Close(); err != nil {
		return out, fmt.Errorf("%w: %v", cluster.ErrEnvironment, err)
	}
	out.Redis = c.RedisVersion()
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
	Fill(&out, ops, rep, exp, s.OutDir)
	out.Faults = FaultsOf(ops)
	out.Fairness, out.Errors = FairnessAndErrors(ops, w.Clients)

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
	if out.GrantCallMs, err = results.Percentiles(GrantCalls(ops)); err != nil {
		return out, err
	}
	if lag := stats.MaxOverrun; lag > w.TTL/2 && !out.AsExpected {
		out.Error = fmt.Sprintf("a client stalled for %v (TTL %v) inside a hold (a critical section overran its planned wait, or the first read came late after the grant) with no fault to explain it: the machine was too busy for this run's verdict to mean anything; rerun with fewer clients (--clients) or a longer TTL (--ttl)", lag.Round(time.Millisecond), w.TTL)
		return out, fmt.Errorf("%s/%s seed %d: %w: %s", s.Strategy, s.Scenario, s.Seed, ErrOverloaded, out.Error)
	}
	return out, nil
}

// Fill sets a run's verdict, violations, liveness figures, faults and
// AsExpected from a checker report. outDir makes the visualisation path
// relative. Used by Run and by `lockbench check`.
func Fill(out *results.Run, ops []history.Operation, rep checker.Report, exp Expectation, outDir string) {
	out.Verdict = results.Verdict{
		Exclusion:  string(rep.Exclusion.Status),
		Resource:   string(rep.Resource.Status),
		Liveness:   string(rep.Liveness.Status),
		Fencing:    string(rep.Fencing.Status),
		Reentrancy: string(rep.Reentrancy.Status),
	}
	out.Violations = rep.Exclusion.Violations + rep.Resource.Violations
	out.Checks = map[string]string{
		"exclusion":  rep.Exclusion.Message,
		"resource":   rep.Resource.Message,
		"liveness":   rep.Liveness.Message,
		"fencing":    rep.Fencing.Message,
		"reentrancy": rep.Reentrancy.Message,
	}
	f := rep.Figures
	out.Liveness = results.LivenessFigures{
		LongestUnavailableMs: f.LongestUnavailableMs, UnavailableMsByKey: f.UnavailableMsByKey, RecoveryMs: f.RecoveryMs,
		FailedShare: f.FailedShare, InfoShare: f.InfoShare, Deadlocked: f.Deadlocked,
		GrantsDuringFaults: GrantsDuringFaults(ops),
	}
	if rep.Visualization != "" {
		if rel, err := filepath.Rel(outDir, rep.Visualization); err == nil {
			out.Visualization = rel
		} else {
			out.Visualization = rep.Visualization
		}
	}
	out.Unexpected = nil
	judge := func(name string, e Expect, r checker.Result) {
		switch {
		case e == Hold && (r.Status == checker.Violated || r.Status == checker.Inconclusive):
			out.Unexpected = append(out.Unexpected, fmt.Sprintf("%s must hold but is %s: %s", name, r.Status, r.Message))
		case e == Hold && r.Status == checker.Skipped && (name == "exclusion" || name == "resource"):
			out.Unexpected = append(out.Unexpected, fmt.Sprintf("%s must hold but nothing was checked: %s", name, r.Message))
		case e == Break && r.Status != checker.Violated:
			out.Unexpected = append(out.Unexpected, fmt.Sprintf("%s must break (canary) but is %s: %s", name, r.Status, r.Message))
		}
	}
	judge("exclusion", exp.Exclusion, rep.Exclusion)
	judge("resource", exp.Resource, rep.Resource)
	judge("liveness", exp.Liveness, rep.Liveness)
	switch g := out.Liveness.GrantsDuringFaults; {
	case exp.DuringFaults == "grants" && g == 0:
		out.Unexpected = append(out.Unexpected, "availability: must keep granting during the fault but granted nothing")
	case exp.DuringFaults == "no-grants" && g > 0:
		out.Unexpected = append(out.Unexpected, fmt.Sprintf("availability: must grant nothing during the fault but granted %d times", g))
	}
	// Fencing tokens and reentrancy counts are strategy promises: a strategy
	// that claims them must keep them in every scenario, unless exp.Fencing
	// expects otherwise (a fault that loses the fencing counter itself).
	promise := func(name string, r checker.Result) {
		if r.Status == checker.Violated || r.Status == checker.Inconclusive {
			out.Unexpected = append(out.Unexpected, fmt.Sprintf("%s is %s: %s", name, r.Status, r.Message))
		}
	}
	if exp.Fencing == "" || exp.Fencing == Hold {
		promise("fencing", rep.Fencing)
	} else {
		judge("fencing", exp.Fencing, rep.Fencing)
	}
	promise("reentrancy", rep.Reentrancy)
	out.AsExpected = len(out.Unexpected) == 0
}

// FromHistory fills a run's workload figures from its history alone (for
// `lockbench check`): grants, acquire attempts by result, acquire latency
// percentiles, throughput over the history's span, fairness, the error
// breakdown, and the configuration the header records.
func FromHistory(out *results.Run, h history.Header, ops []history.Operation) error {
	out.Acquires = map[string]int{"ok": 0, "fail": 0, "info": 0}
	var first, last int64 = -1, 0
	for _, op := range ops {
		if op.Client < 0 {
			continue
		}
		if first < 0 || op.Invoke < first {
			first = op.Invoke
		}
		last = max(last, op.Complete)
		if op.Kind == history.Acquire && op.Depth <= 1 && op.Node == "" {
			out.Acquires[string(op.Result)]++
		}
	}
	out.Grants = out.Acquires["ok"]
	if first >= 0 && last > first {
		out.DurationS = float64(last-first) / 1e9
		out.ThroughputPerS = float64(out.Grants) / out.DurationS
	}
	out.Config = results.RunConfig{Clients: h.Clients, Keys: h.Keys, TTLMs: float64(h.TTLMs), Fencing: h.Fencing, DurationMs: out.DurationS * 1000}
	out.Fairness, out.Errors = FairnessAndErrors(ops, h.Clients)
	var err error
	if out.AcquireLatencyMs, err = results.Percentiles(AcquireLatencies(ops)); err != nil {
		return err
	}
	out.GrantCallMs, err = results.Percentiles(GrantCalls(ops))
	return err
}

// ExpectedFor is Expected(strategy, scenario), unless ungated names why the
// run left the strategy's defaults (customized; recorded in the history
// header as Ungated): then every check is at risk, with that reason, so
// lockbench run and lockbench check of its history agree.
func ExpectedFor(strategy, scenario, ungated string) Expectation {
	if ungated == "" {
		return Expected(strategy, scenario)
	}
	return Expectation{Exclusion: AtRisk, Resource: AtRisk, Liveness: AtRisk, Fencing: AtRisk,
		Reason: ungated + ": the verdict table assumes the strategy's defaults, so nothing is gated"}
}

// customized names the flags that take a run away from the strategy's
// defaults the verdict table assumes (usage policy, fencing mode); "" if none.
func customized(s Spec, info impl.Info, w workload.Config) string {
	var why []string
	if s.Policy != nil && *s.Policy != info.Policy {
		why = append(why, "custom usage policy (--policy)")
	}
	def := workload.FencingOff
	if info.Claims.Fencing {
		def = workload.FencingWrites
	}
	if w.Fencing != def {
		why = append(why, fmt.Sprintf("fencing %s instead of %s (--fencing)", w.Fencing, def))
	}
	if changed := libraryChanged(s, w); changed != "" {
		why = append(why, "library settings changed ("+changed+")")
	}
	if long := longCS(s.Strategy, w); long != "" {
		why = append(why, long)
	}
	if lone := oneClient(s.Strategy, s.Scenario, w); lone != "" {
		why = append(why, lone)
	}
	return strings.Join(why, " and ")
}

// oneClient names why a run with fewer than two clients cannot show the
// breaks the verdict table expects of strategy under scenario (one client
// cannot overlap itself nor lose another's update), "" when it has two or
// more clients or the table expects no break.
func oneClient(strategy, scenario string, w workload.Config) string {
	if w.Clients >= 2 || Expected(strategy, scenario).Summary() != "must-break" {
		return ""
	}
	return fmt.Sprintf("%d client (--clients %d) cannot overlap itself, so the breaks the verdict table expects for %s/%s need 2 or more clients", w.Clients, w.Clients, strategy, scenario)
}

// longCS names why a run's own critical sections break the verdict
// table's assumption for strategy, "" when they do not: the table's rows
// (e.g. "critical sections are far shorter than the TTL") assume the
// default critical section, TTL/20, and only a strategy the table expects
// to hold through the long-cs scenario (renewal, a validity check) keeps
// its verdicts with critical sections as long as the TTL. A workload
// whose largest planned wait (CSLimit) reaches TTL/2, the stall the
// harness already calls overloaded, takes any other strategy outside the
// table. The long-cs scenario's own slow critical sections are a fault,
// not the workload's CS, and stay gated.
func longCS(strategy string, w workload.Config) string {
	if e := Expected(strategy, "long-cs"); e.Exclusion == Hold && e.Resource == Hold {
		return ""
	}
	largest := CSLimit(w.CS)
	if w.TTL <= 0 || largest < w.TTL/2 {
		return ""
	}
	reach := "reach TTL/2 or more"
	if largest > w.TTL {
		reach = "exceed the TTL"
	}
	return fmt.Sprintf("critical sections of up to %v %s (TTL %v; --cs, --cs-min, --cs-max, --cs-tail, --ttl), while the verdict table assumes them far shorter than the TTL (default TTL/20) for %s",
		largest, reach, w.TTL, strategy)
}

// CSLimit is the largest wait a critical-section distribution plans: the
// tail when some sections take it, else Min (fixed), Max (uniform) or,
// for an exponential, Max when it caps it and 10 × the mean otherwise
// (exceeded by one section in about 22 000).
func CSLimit(d workload.CSDist) time.Duration {
	var m time.Duration
	switch d.Kind {
	case "uniform":
		m = max(d.Min, d.Max)
	case "exponential":
		m = 10 * d.Min
		if d.Max > 0 {
			m = d.Max
		}
	default:
		m = d.Min
	}
	if d.TailShare > 0 {
		m = max(m, d.Tail)
	}
	return m
}

// libraryChanged names the library settings of s that differ from the
// adapter's defaults ("--redsync-tries 3, ..."); "" if none.
func libraryChanged(s Spec, w workload.Config) string {
	st, err := impl.Lookup(s.Strategy)
	if err != nil || len(s.Library) == 0 {
		return ""
	}
	def, ok := st.(impl.Tunable)
	tuned, err := impl.Tune(st, s.Library, w.TTL)
	if !ok || err != nil {
		return ""
	}
	was, now := def.Settings(), tuned.(impl.Tunable).Settings()
	var out []string
	for _, k := range slices.Sorted(maps.Keys(now)) {
		if now[k] != was[k] {
			out = append(out, "--"+k+" "+now[k])
		}
	}
	return strings.Join(out, ", ")
}

// CheckBackend checks the backend before any run, after the usage checks:
// on the docker backend that the daemon answers and holds o.Image
// (cluster.CheckImage: exit 3, lockbench never pulls); on the external
// backend, every server of o.External.Addrs: that
// it answers, that no two addresses reach the same server (the same
// run_id in INFO server; errs.ErrUsage), that it holds no key under prefix ("": "lb:"; a key left by
// an earlier run or another program would read as a stale lock, a
// deadlock; not checked with o.External.SharedKeys), and that it accepts
// the Redis commands the faults of specs' scenarios use there (DEBUG SLEEP
// for a pause). An unreachable server or
// a refused command gives an error wrapping cluster.ErrEnvironment (exit
// 3), keys under the prefix one wrapping errs.ErrUsage (exit 2); each names the
// server and the fix. Specs that do not resolve are skipped (Run reports
// them). Run makes the same check on the servers of its own topology.
// On the process backend, that redis-server can be found
// (cluster.CheckRedisServer: exit 3).
func CheckBackend(ctx context.Context, o cluster.Options, prefix string, specs []Spec) error {
	switch o.Backend {
	case cluster.BackendDocker:
		return cluster.CheckImage(ctx, o.Image)
	case cluster.BackendProcess, "":
		return cluster.CheckRedisServer(o)
	}
	if o.Backend != cluster.BackendExternal {
		return nil
	}
	if prefix == "" {
		prefix = "lb:"
	}
	var need []cluster.Feature
	for _, s := range specs {
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
	return checkExternal(ctx, o.External.Addrs, prefix, need, o.External.SharedKeys)
}

// checkExternal is CheckBackend on the servers addrs for the features
// need; shared skips the check for keys (only that each server answers).
// Two addresses reaching the same server (the same run_id, as 0.0.0.0:P
// and 127.0.0.1:P do) are a usage error: a quorum on one server is none.
func checkExternal(ctx context.Context, addrs []string, prefix string, need []cluster.Feature, shared bool) error {
	seen := map[string]string{} // run_id → the address first giving it
	for _, a := range addrs {
		id, err := cluster.RunID(ctx, a)
		if err != nil {
			return err
		}
		if first, ok := seen[id]; ok && id != "" {
			return fmt.Errorf("%w: external: %s and %s are the same server (run_id %s): give %d distinct servers in --redis-addrs",
				errs.ErrUsage, first, a, id, len(addrs))
		}
		seen[id] = a
	}
	for _, a := range addrs {
		k, err := cluster.KeysUnder(ctx, a, prefix)
		if err != nil {
			return err
		}
		if k != nil && !shared {
			n := fmt.Sprint(k.N)
			if k.AtLeast {
				n = "at least " + n
			}
			cli := "redis-cli"
			if h, p, err := net.SplitHostPort(a); err == nil {
				cli = fmt.Sprintf("redis-cli -h %s -p %s", h, p)
			}
			return fmt.Errorf("%w: external: %s keys under %q already exist on %s (e.g. %s): a stale lock reads as a deadlock; delete them (%s --scan --pattern '%s*' | xargs %s del) or pass another --key-prefix (or %s when several lockbench processes share these keys)",
				errs.ErrUsage, n, prefix, a, k.Example, cli, prefix, cli, cluster.SharedKeysFlag)
		}
	}
	for _, a := range addrs {
		if err := cluster.ProbeFaultCommands(ctx, a, need); err != nil {
			return err
		}
	}
	return nil
}

// deleteExternalKeys deletes the keys under prefix on every server of an
// external run (best effort, bounded by a few seconds even after ctx is
// cancelled: an interrupted run cleans up too). A key it could not delete
// is found by the next run's check, which names it.
func deleteExternalKeys(ctx context.Context, addrs []string, prefix string) {
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	for _, a := range addrs {
		cluster.DeleteKeysUnder(dctx, a, prefix)
	}
}

// GrantsDuringFaults counts the grants (outermost acquires with result ok)
// invoked and completed inside one nemesis window that lasts at least 1 ms.
func GrantsDuringFaults(ops []history.Operation) int {
	var ws [][2]int64
	for _, op := range ops {
		if op.Kind == history.Nemesis && op.Complete-op.Invoke >= int64(time.Millisecond) {
			ws = append(ws, [2]int64{op.Invoke, op.Complete})
		}
	}
	n := 0
	for _, op := range ops {
		if op.Kind != history.Acquire || op.Result != history.OK || op.Depth > 1 || op.Client < 0 || op.Node != "" {
			continue
		}
		for _, w := range ws {
			if op.Invoke >= w[0] && op.Complete <= w[1] {
				n++
				break
			}
		}
	}
	return n
}

// FaultsOf returns the nemesis windows of a history in ms since run start.
func FaultsOf(ops []history.Operation) []results.Fault {
	var fs []results.Fault
	for _, op := range ops {
		if op.Kind == history.Nemesis {
			name, _, _ := strings.Cut(op.Note, ":")
			fs = append(fs, results.Fault{Name: name, StartMs: ms(op.Invoke), EndMs: ms(op.Complete), Note: op.Note})
		}
	}
	sort.Slice(fs, func(i, j int) bool { return fs[i].StartMs < fs[j].StartMs })
	return fs
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
		Reentrancy: w.Reentrancy, Policy: pol, Backend: backendName(o), Image: imageOf(o),
	}
}

// backendName is the backend o runs on ("process" for "").
func backendName(o cluster.Options) string {
	if o.Backend == "" {
		return cluster.BackendProcess
	}
	return o.Backend
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

// Unsupported returns "" when the backend of o can run scenario sc for a
// strategy, else a one-line reason naming the missing features, the
// scenarios that do work there for the strategy, and, on the external
// backend, --allow-destructive when that flag would make it work.
func Unsupported(o cluster.Options, sc chaos.Scenario, info impl.Info) string {
	if why := TooFewServers(o, RunTopology(info, sc)); why != "" {
		return fmt.Sprintf("on the %s backend the strategy %s, or choose strategies that need fewer", backendName(o), why)
	}
	have, err := cluster.BackendFeatures(o.Backend, o)
	if err != nil {
		return err.Error()
	}
	why := sc.Unsupported(info, have)
	if why == "" {
		return ""
	}
	msg := fmt.Sprintf("scenario %s cannot run on the %s backend: it %s", sc.Name, backendName(o), why)
	if o.Backend == cluster.BackendExternal && !o.External.AllowDestructive {
		d := o
		d.External.AllowDestructive = true
		if all, _ := cluster.BackendFeatures(d.Backend, d); sc.Unsupported(info, all) == "" {
			msg += fmt.Sprintf("; it injects faults through Redis commands on your servers: pass %s to allow them", cluster.AllowDestructiveFlag)
		}
	}
	return msg + fmt.Sprintf("; scenarios that work there: %s", strings.Join(chaos.SupportedOn(info, have), ", "))
}

// dialer builds go-redis clients with short timeouts and no hidden retries
// (a retry inside go-redis would hide an operation from the history),
// counting commands into cmds.
//
// go-redis's pool stops dialling once it has seen PoolSize failed dials in
// its lifetime (the count is only reset by a background probe that retries
// every second), so a client that met a killed node a few times would keep
// failing for up to 1 s after the node is back: nodePoolSize raises that
// threshold far above what a run reaches. A client has at most a couple of
// commands in flight per node, so the pool never holds more connections
// than before.
//
// ContextTimeoutEnabled makes go-redis honour context deadlines on the
// socket (by default v9 ignores them and waits ReadTimeout): without it a
// quorum strategy's per-node timeout (impl.Config.NodeTimeout) and the
// watchdog's renewal timeout would not bound a call to a paused or slow node.
type dialer struct {
	w    workload.Config
	cmds *atomic.Int64
}

// nodePoolSize is the go-redis PoolSize of a node client: the number of
// failed dials after which its pool stops dialling (see dialer).
const nodePoolSize = 1024

func newDialer(w workload.Config, cmds *atomic.Int64) dialer { return dialer{w, cmds} }

func (d dialer) nodes(addrs []string) []redis.UniversalClient {
	out := make([]redis.UniversalClient, len(addrs))
	for i, a := range addrs {
		c := redis.NewClient(&redis.Options{
			Addr: a, PoolSize: nodePoolSize, MaxRetries: -1, ContextTimeoutEnabled: true,
			DialTimeout: d.w.OpTimeout, ReadTimeout: d.w.OpTimeout, WriteTimeout: d.w.OpTimeout,
			DialerRetries: 1, DialerRetryTimeout: time.Millisecond,
		})
		c.AddHook(countHook{d.cmds})
		out[i] = c
	}
	return out
}

func (d dialer) sentinel(master string, sentinels []string) redis.UniversalClient {
	c := redis.NewFailoverClient(&redis.FailoverOptions{
		MasterName: master, SentinelAddrs: sentinels, PoolSize: 4, MaxRetries: -1, ContextTimeoutEnabled: true,
		DialTimeout: d.w.OpTimeout, ReadTimeout: d.w.OpTimeout, WriteTimeout: d.w.OpTimeout,
	})
	c.AddHook(countHook{d.cmds})
	return c
}

// ClockShim builds (once per machine, cached in the user cache folder) the
// clock-offset LD_PRELOAD library the clock-jump scenarios need and returns
// its path. Errors wrap cluster.ErrEnvironment (e.g. gcc missing).
func ClockShim(ctx context.Context) (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	return cluster.BuildClockShim(ctx, filepath.Join(dir, "lockbench"))
}
