package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/lockbench/lockbench/chaos"
	"github.com/lockbench/lockbench/cluster"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/workload"
)

// Version is lockbench's version, written into results.json.
const Version = "0.1.0"

// Profile is a named matrix of runs.
type Profile struct {
	// Name is "ci" or "full".
	Name string
	// Summary says what the profile is for.
	Summary string
	// Strategies and Scenarios span the matrix (every pair runs).
	Strategies, Scenarios []string
	// Seeds is how many seeds each pair runs (seeds 1..Seeds).
	Seeds int
	// Workload is the base workload of every run.
	Workload workload.Config
	// ClientSweep lists client counts for the throughput-vs-clients plot,
	// run on the baseline for SweepStrategies; empty: no sweep.
	ClientSweep     []int
	SweepStrategies []string
}

// Profiles returns the bench profiles: "ci" (every strategy under every
// scenario once, short runs: the CI gate, under 3 minutes on 2 cores) and
// "full" (three seeds, longer runs, and a client sweep).
func Profiles() []Profile {
	base := workload.Config{Clients: 16, Keys: 1, TTL: 100 * time.Millisecond, Duration: time.Second, Reentrancy: 3}
	full := base
	full.Duration = 4 * time.Second
	return []Profile{
		{Name: "ci", Summary: "every strategy under the baseline, the client-side faults and one scenario of each server-side kind (process, replication, network, clock), one seed, 1 s runs: the CI gate",
			Strategies: impl.Names(), Scenarios: CIScenarios(), Seeds: 1, Workload: base},
		{Name: "full", Summary: "every strategy under every scenario, three seeds, 4 s runs, and a client sweep",
			Strategies: impl.Names(), Scenarios: chaos.Names(), Seeds: 3, Workload: full,
			ClientSweep: []int{1, 4, 16, 64, 256}, SweepStrategies: []string{"set-nx-px", "token-lua", "watchdog", "redlock", "fenced"}},
	}
}

// CIScenarios are the ci profile's scenarios: the baseline, every
// client-side scenario and one of each server-side kind, plus the
// Redlock-specific canary.
func CIScenarios() []string {
	return []string{"baseline", "long-cs", "gc-pause", "crash-between",
		"node-restart", "failover-lost-write", "partition-holder", "clock-jump", "redlock-clock-jump"}
}

// LookupProfile finds a profile; the error (wrapping ErrUsage) lists the valid names.
func LookupProfile(name string) (Profile, error) {
	var names []string
	for _, p := range Profiles() {
		if p.Name == name {
			return p, nil
		}
		names = append(names, p.Name)
	}
	return Profile{}, fmt.Errorf("%w: unknown profile %q (valid: %s)", ErrUsage, name, strings.Join(names, ", "))
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
	// Progress is called before each run with its index (from 0), the
	// total and a label; nil: silent.
	Progress func(i, total int, label string)
}

// Bench runs a profile's matrix, writes results.json, the plots and the
// report into o.OutDir and returns the results. An error means a run could
// not be carried out (environment, Ctrl-C); unexpected verdicts are in the
// returned file (Run.AsExpected), not errors.
func Bench(ctx context.Context, o Options) (*results.File, error) {
	p := o.Profile
	if err := os.MkdirAll(o.OutDir, 0o755); err != nil {
		return nil, OutDirError(o.OutDir, err)
	}
	f := &results.File{
		SchemaVersion: results.SchemaVersion, Tool: "lockbench " + Version, Profile: p.Name,
		Command: o.Command, Started: time.Now().UTC().Format(time.RFC3339),
		Host: ThisHost(),
	}
	for _, name := range p.Strategies {
		st, err := impl.Lookup(name)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrUsage, err)
		}
		f.Strategies = append(f.Strategies, StrategyInfo(st))
	}
	var specs []Spec
	for _, sc := range p.Scenarios {
		scen, err := chaos.Lookup(sc)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrUsage, err)
		}
		for _, st := range p.Strategies {
			strat, err := impl.Lookup(st)
			if err != nil {
				return nil, fmt.Errorf("%w: %v", ErrUsage, err)
			}
			if ok, _ := scen.AppliesTo(strat.Info()); !ok {
				continue
			}
			if Unsupported(o.Cluster, scen, strat.Info()) != "" {
				continue // reported n/a: the backend cannot inject this scenario's faults
			}
			for seed := int64(1); seed <= int64(p.Seeds); seed++ {
				specs = append(specs, Spec{Strategy: st, Scenario: sc, Seed: seed, Workload: p.Workload})
			}
		}
	}
	var sweep []Spec
	for _, st := range p.SweepStrategies {
		for _, n := range p.ClientSweep {
			w := p.Workload
			w.Clients = n
			sweep = append(sweep, Spec{Strategy: st, Scenario: "baseline", Seed: int64(1000 + n), Workload: w})
		}
	}
	total := len(specs) + len(sweep)
	var overloaded []error
	for i, s := range append(specs, sweep...) {
		s.OutDir, s.Cluster = o.OutDir, o.Cluster
		if o.KeyPrefix != "" {
			s.Workload.KeyPrefix = o.KeyPrefix
		}
		s.Command = RunCommand(s)
		if o.Progress != nil {
			o.Progress(i, total, fmt.Sprintf("%s/%s seed %d", s.Strategy, s.Scenario, s.Seed))
		}
		r, err := Run(ctx, s)
		if errors.Is(err, ErrOverloaded) {
			overloaded = append(overloaded, err) // keep the run, with its Error, and go on
		} else if err != nil {
			// Keep what finished (an interrupted bench still leaves a report).
			if werr := finish(o.OutDir, f); werr != nil {
				err = errors.Join(err, werr)
			}
			return f, err
		}
		if f.Redis == "" {
			f.Redis = r.Redis
		}
		if i < len(specs) {
			f.Runs = append(f.Runs, r)
		} else {
			f.Sweep = append(f.Sweep, r)
		}
	}
	if err := finish(o.OutDir, f); err != nil {
		return f, err
	}
	if len(overloaded) > 0 {
		return f, fmt.Errorf("%d runs with an unexpected verdict on an overloaded machine (results and report written): %w", len(overloaded), overloaded[0])
	}
	return f, nil
}

// ThisHost describes the machine lockbench runs on.
func ThisHost() results.Host {
	return results.Host{CPUs: runtime.NumCPU(), OS: runtime.GOOS + "/" + runtime.GOARCH, Go: runtime.Version()}
}

// finish stamps the end time and writes results.json, the plots and the report.
func finish(dir string, f *results.File) error {
	f.Finished = time.Now().UTC().Format(time.RFC3339)
	if err := results.Write(dir, f); err != nil {
		return err
	}
	return Report(dir, f)
}

// Unexpected returns the runs whose verdicts contradict their expectation.
func Unexpected(f *results.File) []results.Run {
	var out []results.Run
	for _, r := range f.Runs {
		if !r.AsExpected {
			out = append(out, r)
		}
	}
	return out
}

// RunCommand is the lockbench command line that reproduces one run.
func RunCommand(s Spec) string {
	w := s.Workload
	cmd := fmt.Sprintf("lockbench run --strategy %s --scenario %s --clients %d --keys %d --ttl %v --duration %v --seed %d",
		s.Strategy, s.Scenario, w.Clients, w.Keys, w.TTL, w.Duration, s.Seed)
	return cmd + backendArgs(s.Cluster, w.KeyPrefix)
}

// backendArgs are the backend flags of RunCommand ("" on the process
// backend with the default key prefix).
func backendArgs(o cluster.Options, prefix string) string {
	var b strings.Builder
	switch o.Backend {
	case cluster.BackendDocker:
		fmt.Fprintf(&b, " --backend docker --redis-image %s", imageOf(o))
	case cluster.BackendExternal:
		fmt.Fprintf(&b, " --backend external --redis-addrs %s", strings.Join(o.External.Addrs, ","))
		if len(o.External.SentinelAddrs) > 0 {
			fmt.Fprintf(&b, " --sentinel-addrs %s --master-name %s", strings.Join(o.External.SentinelAddrs, ","), o.External.MasterName)
		}
		if o.External.AllowDestructive {
			b.WriteString(" " + cluster.AllowDestructiveFlag)
		}
	}
	if prefix != "" && prefix != "lb:" {
		fmt.Fprintf(&b, " --key-prefix %s", prefix)
	}
	return b.String()
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
		{c.Reentrant, "reentrant"}, {c.Quorum, "quorum"}, {c.Fencing, "fencing"}, {c.Validity, "validity"}} {
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
	return results.StrategyInfo{Name: st.Name(), Summary: in.Summary, Source: in.Source, Claims: claims, Policy: pol, Library: in.Library}
}

// UnsupportedPairs returns the pairs of profile p that apply to their
// strategy but whose faults the backend of o cannot inject, in profile
// order, each with the reason (Unsupported): Bench skips them (n/a).
func UnsupportedPairs(p Profile, o cluster.Options) []Pair {
	var out []Pair
	for _, sc := range p.Scenarios {
		scen, err := chaos.Lookup(sc)
		if err != nil {
			continue
		}
		for _, st := range p.Strategies {
			strat, err := impl.Lookup(st)
			if err != nil {
				continue
			}
			if ok, _ := scen.AppliesTo(strat.Info()); !ok {
				continue
			}
			if why := Unsupported(o, scen, strat.Info()); why != "" {
				out = append(out, Pair{Strategy: st, Scenario: sc, Expectation: Expectation{Reason: why}})
			}
		}
	}
	return out
}
