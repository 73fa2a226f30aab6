// Package diff is lockbench's upgrade check: it runs two locks, A (the
// release a team runs) and B (the candidate), cell by cell under the same
// scenarios, seeds and fault schedules, interleaved (A seed 1, B seed 1,
// A seed 2, ...) so that machine noise falls on both, and reports every
// difference between them that is significant at the run count: verdicts
// and violation rates per check (Fisher's exact test on violating runs),
// leases lost with no fault, availability and grant latency in each fault
// window and commands per grant (the Mann-Whitney U test, as compare runs
// it with golang.org/x/perf/benchmath). A difference that is not
// significant is reported as "no difference shown at N runs", with how
// many runs would show one of a given size (RunsToShow).
//
// It sits above the bench stage (it runs cells with bench.Run) and below
// the command; `lockbench compare` stays the tool for two saved benches
// of the same strategies.
package diff

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/chaos"
	"github.com/lockbench/lockbench/cluster"
	"github.com/lockbench/lockbench/figures"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/adapterclient"
	"github.com/lockbench/lockbench/impl/strategies"
	"github.com/lockbench/lockbench/internal/errs"
	"github.com/lockbench/lockbench/outdir"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/resource"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/validate"
	"github.com/lockbench/lockbench/workload"
)

// Sides name the two locks in folders and reports.
const (
	SideA = "A"
	SideB = "B"
)

// DefaultRepeat is how many runs a side each cell gets by default: 5, one
// more than the fewest with which Fisher's exact test can show a
// difference at all (4 runs that all violate against 4 that never do:
// p = 1/70; 3 against 3 gives 1/20, not below 0.05).
const DefaultRepeat = 5

// Options configure a diff.
type Options struct {
	// A and B are the two strategies (registry names or exec: adapters).
	A, B string
	// Scenarios are the scenarios to run, each on both sides; every one
	// must apply to both locks.
	Scenarios []string
	// Workload is the base workload of every run (Spec.Workload).
	Workload workload.Config
	// Policy and Fencing override the locks' defaults (nil, "": keep).
	Policy  *impl.Policy
	Fencing resource.Fencing
	// Library holds library settings by flag name, given to both sides.
	Library map[string]string
	// Seed is the first seed; run i of a cell uses Seed+i on both sides.
	Seed int64
	// Repeat is the runs a side per scenario (default DefaultRepeat).
	Repeat int
	// OutDir is the results folder: A's histories go to OutDir/A, B's to
	// OutDir/B, results.json and the report (with the differences first)
	// to OutDir.
	OutDir string
	// Cluster configures the servers of every run.
	Cluster cluster.Options
	// CheckTimeout bounds each porcupine check (0: the default).
	CheckTimeout time.Duration
	// MaxRegression is the relative change of a cost figure that is
	// gated when significant (0.1 = 10%).
	MaxRegression float64
	// Command reproduces the whole diff; RunCommand one run (nil: none).
	Command    string
	RunCommand func(bench.Spec) string
	// Profile names the profile the scenarios came from ("" if named).
	Profile string
	// Progress is called before each run (nil: silent).
	Progress func(i, total int, label string)
}

// Plan returns the runs of a diff in the order they run: for each
// scenario, for each seed, A then B. The error (wrapping errs.ErrUsage)
// names a lock or scenario that does not exist, or a scenario that does
// not apply to one of the locks.
func Plan(o Options) ([]bench.Spec, error) {
	if o.Repeat <= 0 {
		o.Repeat = DefaultRepeat
	}
	if o.Seed <= 0 {
		o.Seed = 1
	}
	if len(o.Scenarios) == 0 {
		return nil, fmt.Errorf("%w: no scenario to run: name one with --scenario (lockbench list) or a --profile", errs.ErrUsage)
	}
	var infos [2]impl.Info
	for i, name := range []string{o.A, o.B} {
		st, err := strategies.Lookup(name)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", errs.ErrUsage, []string{"A", "B"}[i], err)
		}
		infos[i] = st.Info()
	}
	var specs []bench.Spec
	for _, name := range o.Scenarios {
		sc, err := chaos.Lookup(name)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", errs.ErrUsage, err)
		}
		for i, in := range infos {
			if ok, why := sc.AppliesTo(in); !ok {
				return nil, fmt.Errorf("%w: scenario %s does not apply to %s (%s): %s; leave it out of --scenario", errs.ErrUsage, name, []string{"A", "B"}[i], []string{o.A, o.B}[i], why)
			}
		}
		for r := range o.Repeat {
			for _, side := range []string{SideA, SideB} {
				st := o.A
				if side == SideB {
					st = o.B
				}
				s := bench.Spec{Strategy: st, Scenario: name, Seed: o.Seed + int64(r), Workload: o.Workload,
					Policy: o.Policy, Fencing: o.Fencing, Library: o.Library, OutDir: filepath.Join(o.OutDir, side),
					Cluster: o.Cluster, CheckTimeout: o.CheckTimeout}
				if _, _, _, _, err := s.Resolved(); err != nil {
					return nil, err
				}
				specs = append(specs, s)
			}
		}
	}
	return specs, nil
}

// Result is a finished diff: both sides' runs and their comparison.
type Result struct {
	// File is what results.json holds: both sides' runs (their history
	// paths relative to the results folder, under A/ and B/) and the
	// differences as the report's first section.
	File *results.File
	// Report is the comparison.
	Report Report
}

// Run runs the diff's cells interleaved (Plan), compares the sides
// (Compare) and writes results.json and the report into o.OutDir. An
// error means a run could not be carried out (the environment, Ctrl-C):
// the runs already finished are written, marked incomplete.
func Run(ctx context.Context, o Options) (*Result, error) {
	if o.Repeat <= 0 {
		o.Repeat = DefaultRepeat
	}
	if o.Seed <= 0 {
		o.Seed = 1
	}
	specs, err := Plan(o)
	if err != nil {
		return nil, err
	}
	if err := bench.CheckBackend(ctx, o.Cluster, o.Workload.KeyPrefix, specs); err != nil {
		return nil, err
	}
	if err := outdir.ReplaceEarlier(o.OutDir, nil); err != nil {
		return nil, err
	}
	for _, side := range []string{SideA, SideB} {
		if err := os.MkdirAll(filepath.Join(o.OutDir, side), 0o755); err != nil {
			return nil, outdir.OutDirError(o.OutDir, err)
		}
	}
	f := newFile(o)
	shared := bench.NewShared(o.Cluster)
	defer shared.Stop()
	var a, b []results.Run
	var runErr error
	var overloaded []string
	for i, s := range specs {
		s.Shared = shared
		if o.RunCommand != nil {
			s.Command = o.RunCommand(s)
		}
		side := sideOf(s, o)
		if o.Progress != nil {
			o.Progress(i, len(specs), fmt.Sprintf("%s %s/%s seed %d", side, label(s.Strategy), s.Scenario, s.Seed))
		}
		r, again, err := runAgainIfOverloaded(ctx, s, bench.Run)
		for _, n := range again {
			overloaded = append(overloaded, fmt.Sprintf("%s seed %d: %s", side, s.Seed, n))
			if o.Progress != nil {
				o.Progress(i, len(specs), fmt.Sprintf("%s %s/%s seed %d again: %s", side, label(s.Strategy), s.Scenario, s.Seed, n))
			}
		}
		if err != nil && !errors.Is(err, bench.ErrOverloaded) {
			f.Incomplete = fmt.Sprintf("stopped after %d of %d runs: %v", i, len(specs), err)
			runErr = err
			break
		}
		// Paths relative to the results folder, not the side's.
		r.History = filepath.Join(side, r.History)
		if r.Visualization != "" {
			r.Visualization = filepath.Join(side, r.Visualization)
		}
		if f.Redis == "" {
			f.Redis = r.Redis
		}
		if side == SideA {
			a = append(a, r)
		} else {
			b = append(b, r)
		}
	}
	both := append(slices.Clone(a), b...)
	validate.AvailabilityHints(both)
	a, b = both[:len(a)], both[len(a):]
	rep := Compare(o, a, b)
	if len(overloaded) > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%d run(s) judged the machine too busy for their verdict were run again with the same seed (at most %d times; one still too busy is left out): %s",
			len(overloaded), MaxOverloadedReruns, strings.Join(overloaded, "; ")))
	}
	f.Runs = labelRuns(o, a, b)
	f.Sections = []results.Section{rep.Section()}
	f.Finished = time.Now().UTC().Format(time.RFC3339)
	if err := figures.Write(o.OutDir, f); err != nil {
		return &Result{File: f, Report: rep}, errors.Join(runErr, outdir.OutputError(o.OutDir, err, outdir.OutputFix))
	}
	if err := report.Render(o.OutDir, f); err != nil {
		return &Result{File: f, Report: rep}, errors.Join(runErr, outdir.OutputError(o.OutDir, err, outdir.OutputFix))
	}
	return &Result{File: f, Report: rep}, runErr
}

// MaxOverloadedReruns is how many times a run whose verdict the machine
// made meaningless (bench.ErrOverloaded: a client stalled past TTL/2 in a
// hold with no fault to explain it) is run again with the same seed
// before it is left out of the comparison. Without it a diff on a busy
// machine compared what was left: a mutant whose runs stalled more often
// than its twin's (ttl-unit-confusion under crash-between at load
// average 45: 2 of 4 runs left) had too few runs to show its liveness
// violation in every one of them.
const MaxOverloadedReruns = 2

// runAgainIfOverloaded runs s with run and, while its error wraps
// bench.ErrOverloaded, up to MaxOverloadedReruns times more with the same
// seed. It returns the last run and its error, and why each earlier
// attempt was run again (its Error).
func runAgainIfOverloaded(ctx context.Context, s bench.Spec, run func(context.Context, bench.Spec) (results.Run, error)) (results.Run, []string, error) {
	r, err := run(ctx, s)
	var again []string
	for k := 0; k < MaxOverloadedReruns && errors.Is(err, bench.ErrOverloaded) && ctx.Err() == nil; k++ {
		again = append(again, r.Error)
		r, err = run(ctx, s)
	}
	return r, again, err
}

// sideOf is the side a planned spec belongs to (Plan puts A's runs under
// OutDir/A).
func sideOf(s bench.Spec, o Options) string {
	if s.OutDir == filepath.Join(o.OutDir, SideB) {
		return SideB
	}
	return SideA
}

// label shortens an exec: strategy for progress lines: its command's
// last path element and arguments.
func label(strategy string) string {
	if !adapterclient.IsExec(strategy) {
		return strategy
	}
	cmd := strings.TrimPrefix(strategy, adapterclient.ExecPrefix)
	if f := strings.Fields(cmd); len(f) > 0 {
		f[0] = filepath.Base(f[0])
		return adapterclient.ExecPrefix + strings.Join(f, " ")
	}
	return strategy
}

// Names returns the names the report shows for A and B: the strategies'
// own, or, when both sides run the same lock (a diff of a lock against
// itself), the name with " (A)" and " (B)" appended, so the report keeps
// the sides apart.
func Names(o Options) (a, b string) {
	if o.A == o.B {
		return o.A + " (A)", o.B + " (B)"
	}
	return o.A, o.B
}

// labelRuns returns A's and B's runs for results.json, their strategy
// renamed by Names when both sides run the same lock.
func labelRuns(o Options, a, b []results.Run) []results.Run {
	na, nb := Names(o)
	var out []results.Run
	for _, r := range a {
		r.Strategy = na
		out = append(out, r)
	}
	for _, r := range b {
		r.Strategy = nb
		out = append(out, r)
	}
	return out
}

// newFile starts results.json of a diff: both locks as its strategies.
func newFile(o Options) *results.File {
	na, nb := Names(o)
	f := &results.File{
		SchemaVersion: results.SchemaVersion, Tool: "lockbench " + bench.Version, Commit: bench.Commit(), Profile: "diff",
		Command: o.Command, Seed: o.Seed, Repeat: o.Repeat, Started: time.Now().UTC().Format(time.RFC3339),
		Host:   results.ThisHost(),
		Config: results.BenchConfig{Strategies: []string{na, nb}, Scenarios: o.Scenarios},
	}
	if w, err := o.Workload.WithDefaults(); err == nil {
		f.Config.Workload = results.RunConfig{Clients: w.Clients, Keys: w.Keys, TTLMs: float64(w.TTL) / 1e6, DurationMs: float64(w.Duration) / 1e6,
			OpTimeoutMs: float64(w.OpTimeout) / 1e6, CSMs: w.CS.String(), Retry: w.Retry.String(), Reentrancy: w.Reentrancy}
	}
	for i, name := range []string{o.A, o.B} {
		if st, err := strategies.Lookup(name); err == nil {
			info := bench.StrategyInfo(st)
			info.Name = []string{na, nb}[i]
			f.Strategies = append(f.Strategies, info)
		}
	}
	return f
}
