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
	"os"
	"path/filepath"
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
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/workload"
)

// ErrUsage is wrapped by errors caused by the caller's input (unknown
// strategy or scenario, impossible flags); lockbench exits 2 on it.
var ErrUsage = errors.New("usage error")

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
}

// Resolved returns the spec's strategy, scenario and full workload config,
// or an error wrapping ErrUsage that names the bad input and the valid choices.
func (s Spec) Resolved() (impl.Strategy, chaos.Scenario, workload.Config, error) {
	st, err := impl.Lookup(s.Strategy)
	if err != nil {
		return nil, chaos.Scenario{}, workload.Config{}, fmt.Errorf("%w: %v", ErrUsage, err)
	}
	sc, err := chaos.Lookup(s.Scenario)
	if err != nil {
		return nil, chaos.Scenario{}, workload.Config{}, fmt.Errorf("%w: %v", ErrUsage, err)
	}
	w := s.Workload
	w.Seed = s.Seed
	if !st.Info().Claims.Reentrant {
		w.Reentrancy = 1 // nesting applies to reentrant strategies only
	}
	w.Policy = st.Info().Policy
	if s.Policy != nil {
		w.Policy = *s.Policy
	}
	w.Fencing = s.Fencing
	if w.Fencing == "" {
		w.Fencing = workload.FencingOff
		if st.Info().Claims.Fencing {
			w.Fencing = workload.FencingWrites
		}
	}
	w, err = w.WithDefaults()
	if err != nil {
		return nil, chaos.Scenario{}, workload.Config{}, fmt.Errorf("%w: %v", ErrUsage, err)
	}
	return st, sc, w, nil
}

// Topology returns the cluster topology a strategy needs.
func Topology(st impl.Strategy) cluster.Topology {
	if n := st.Info().Nodes; n > 1 {
		return cluster.Topology{Kind: cluster.Independent, Nodes: n}
	}
	return cluster.Topology{Kind: cluster.Single}
}

// HistoryName is the history file of a run, relative to the results folder.
func HistoryName(strategy, scenario string, seed int64) string {
	return filepath.Join("histories", fmt.Sprintf("%s-%s-%d.jsonl", strategy, scenario, seed))
}

// Run executes one Spec and returns its result. The returned error is for
// runs that could not be carried out (bad input: wraps ErrUsage; the
// machine: wraps cluster.ErrEnvironment; Ctrl-C: wraps context.Canceled);
// a violation is a result, not an error. Every Redis process the run
// started is stopped before Run returns, also on error or panic.
func Run(ctx context.Context, s Spec) (results.Run, error) {
	st, sc, w, err := s.Resolved()
	if err != nil {
		return results.Run{}, err
	}
	exp := Expected(s.Strategy, s.Scenario)
	out := results.Run{
		Strategy: s.Strategy, Scenario: s.Scenario, Seed: s.Seed,
		Expected: exp.Summary(), ExpectedChecks: exp.Checks(), Reason: exp.Reason,
		History: HistoryName(s.Strategy, s.Scenario, s.Seed), Command: s.Command,
		Config: runConfig(w, Topology(st)),
	}
	histPath := filepath.Join(s.OutDir, out.History)
	if err := os.MkdirAll(filepath.Dir(histPath), 0o755); err != nil {
		return out, fmt.Errorf("%w: results folder: %v", cluster.ErrEnvironment, err)
	}

	c, err := cluster.Start(ctx, Topology(st), s.Cluster)
	if err != nil {
		return out, fmt.Errorf("start redis for %s/%s: %w", s.Strategy, s.Scenario, err)
	}
	defer c.Stop()

	clock := history.NewClock()
	hw, err := history.Create(histPath, history.Header{
		Strategy: s.Strategy, Scenario: s.Scenario, Seed: s.Seed, Clients: w.Clients, Keys: w.Keys,
		TTLMs: w.TTL.Milliseconds(), Fencing: string(w.Fencing), Reentrant: st.Info().Claims.Reentrant,
		Started: clock.Start().UTC().Format(time.RFC3339Nano),
	})
	if err != nil {
		return out, fmt.Errorf("%w: %v", cluster.ErrEnvironment, err)
	}
	defer hw.Close()

	var cmds atomic.Int64
	env := workload.Env{
		Strategy: st,
		Nodes:    redisClients(c.Addrs(), w, &cmds),
		History:  hw,
		Clock:    clock,
		IDs:      &history.IDs{},
		Resource: workload.NewResource(w.Fencing),
	}
	nem := sc.New(chaos.Env{Strategy: s.Strategy, TTL: w.TTL, Duration: w.Duration, Clock: clock, History: hw, Seed: s.Seed})
	env.Faults = nem
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
	if err := workload.Probe(ctx, w, env); err != nil {
		return out, err
	}
	if err := hw.Close(); err != nil {
		return out, fmt.Errorf("%w: %v", cluster.ErrEnvironment, err)
	}
	if err := c.Stop(); err != nil {
		return out, fmt.Errorf("stop redis: %w", err)
	}

	// Check the file, not memory: `lockbench check` must give the same verdict.
	h, ops, err := history.Load(histPath)
	if err != nil {
		return out, err
	}
	vis := strings.TrimSuffix(histPath, ".jsonl") + ".html"
	rep := checker.Check(h, ops, checker.Options{Timeout: s.CheckTimeout, VisualizationPath: vis})
	Fill(&out, rep, exp, s.OutDir)
	out.Faults = FaultsOf(ops)

	out.Grants = stats.Grants
	out.Acquires = map[string]int{"ok": stats.Attempts[history.OK], "fail": stats.Attempts[history.Fail], "info": stats.Attempts[history.Info]}
	out.DurationS = stats.Elapsed.Seconds()
	if out.DurationS > 0 {
		out.ThroughputPerS = float64(stats.Grants) / out.DurationS
	}
	if stats.Grants > 0 {
		out.RoundTripsPerGrant = float64(cmds.Load()) / float64(stats.Grants)
	}
	out.AcquireLatencyMs, err = results.Percentiles(stats.LatenciesMs)
	if err != nil {
		return out, err
	}
	return out, nil
}

// Fill sets a run's verdict, violations, liveness figures, faults and
// AsExpected from a checker report. outDir makes the visualisation path
// relative. Used by Run and by `lockbench check`.
func Fill(out *results.Run, rep checker.Report, exp Expectation, outDir string) {
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
		LongestUnavailableMs: f.LongestUnavailableMs, RecoveryMs: f.RecoveryMs,
		FailedShare: f.FailedShare, InfoShare: f.InfoShare, Deadlocked: f.Deadlocked,
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
		case e == Break && r.Status != checker.Violated:
			out.Unexpected = append(out.Unexpected, fmt.Sprintf("%s must break (canary) but is %s: %s", name, r.Status, r.Message))
		}
	}
	judge("exclusion", exp.Exclusion, rep.Exclusion)
	judge("resource", exp.Resource, rep.Resource)
	judge("liveness", exp.Liveness, rep.Liveness)
	// Fencing tokens and reentrancy counts are strategy promises: a strategy
	// that claims them must keep them in every scenario.
	for _, x := range []struct {
		name string
		r    checker.Result
	}{{"fencing", rep.Fencing}, {"reentrancy", rep.Reentrancy}} {
		if x.r.Status == checker.Violated || x.r.Status == checker.Inconclusive {
			out.Unexpected = append(out.Unexpected, fmt.Sprintf("%s is %s: %s", x.name, x.r.Status, x.r.Message))
		}
	}
	out.AsExpected = len(out.Unexpected) == 0
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

func runConfig(w workload.Config, t cluster.Topology) results.RunConfig {
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
		Reentrancy: w.Reentrancy, Policy: pol,
	}
}

// redisClients returns workload.Env.Nodes: one go-redis client per node for
// each logical client, with short timeouts and no hidden retries (a retry
// inside go-redis would hide an operation from the history), counting
// commands into cmds.
func redisClients(addrs []string, w workload.Config, cmds *atomic.Int64) func(int) ([]redis.UniversalClient, error) {
	return func(int) ([]redis.UniversalClient, error) {
		out := make([]redis.UniversalClient, len(addrs))
		for i, a := range addrs {
			c := redis.NewClient(&redis.Options{
				Addr:               a,
				PoolSize:           4,
				MaxRetries:         -1,
				DialTimeout:        w.OpTimeout,
				ReadTimeout:        w.OpTimeout,
				WriteTimeout:       w.OpTimeout,
				DialerRetries:      1,
				DialerRetryTimeout: time.Millisecond,
			})
			c.AddHook(countHook{cmds})
			out[i] = c
		}
		return out, nil
	}
}
