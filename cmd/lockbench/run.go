package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/chaos"
	"github.com/lockbench/lockbench/chaos/schedule"
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
	"github.com/lockbench/lockbench/workload"
)

// runFlags are the flags of `lockbench run`.
type runFlags struct {
	strategy, scenario, out      string
	schedule                     string
	clients, keys, reentrancy    int
	ttl, duration, think, csMin  time.Duration
	csMax, opTimeout, checkLimit time.Duration
	csKind, retry, fencing       string
	policy                       string
	tailShare                    float64
	zipf                         bool
	ownKeys                      bool
	seed                         int64
	be                           backendFlags
	repeat                       int
	// clockSkew is --clock-skew: the history clock's injected skew.
	clockSkew time.Duration
	// backendNote is what --backend auto picked and why (set by spec).
	backendNote string
}

func newRunCmd() *cobra.Command {
	var f runFlags
	var o output
	c := &cobra.Command{
		Use:   "run --strategy NAME --scenario NAME [flags]",
		Short: "Run one strategy under one scenario, check the history, write a report",
		Long: `Run one strategy under one scenario against Redis servers that lockbench
starts and stops itself (--backend process or docker) or an existing
deployment (--backend external), record the history, check it and write
results.json, report.md, index.html and the history to --out.

A scenario whose faults the backend cannot inject (e.g. clock-jump on docker)
is refused with a usage error that lists the scenarios that work there.

Names: lockbench list. Output: progress on stderr (a spinner on a terminal,
one line otherwise), then the verdicts on stdout; --quiet prints only errors
and the verdict line; --json prints the summary as JSON on stdout and nothing
else there.

Exit codes: 0 the verdict is as the verdict table expects, 1 it is not, 2
usage error, 3 environment error (also a harness too overloaded to trust:
a client stalled inside a hold by more than TTL/2 with no fault to explain
it), 4 inconclusive (nothing unexpected, but a gated check lacked evidence:
too few holds or chances to overlap, most acquire outcomes unknown, no
fault landed; the output names what is missing and the flag that supplies
it; 1 wins over 4), 130 interrupted (the runs already finished are
written).`,
		Example: `  lockbench run --strategy token-lua --scenario gc-pause
  lockbench run --strategy redlock --scenario long-cs --ttl 200ms --duration 5s --seed 7
  lockbench run --strategy reentrant --scenario baseline --reentrancy 3
  lockbench run --strategy token-lua --schedule hunt-out/surprise-1.schedule.json --ttl 200ms --seed 3
  lockbench run --strategy token-lua --scenario node-pause --backend docker --redis-image lockbench/redis:local
  lockbench run --strategy token-lua --scenario node-pause --backend external --redis-addrs 10.0.0.5:6379 --allow-destructive`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return strayArgument(cmd, os.Args[1:], args[0])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error { return f.run(cmd, &o) },
	}
	fl := c.Flags()
	f.scenario = "baseline"
	fl.Var(&onceString{v: &f.strategy, many: "--strategies"}, "strategy", "lock strategy (required; see lockbench list)")
	fl.Var(&onceString{v: &f.scenario, many: "--scenarios"}, "scenario", "fault scenario (see lockbench list)")
	fl.Var(&onceString{v: &f.schedule, many: "--scenarios"}, "schedule", "play the fault schedule in this file instead of a scenario (lockbench hunt writes them; format: docs/hunt.md)")
	addWorkloadFlags(fl, &f)
	fl.Int64Var(&f.seed, "seed", 1, "seed of every random choice (workload and nemesis)")
	fl.IntVar(&f.repeat, "repeat", 1, "runs with seeds --seed, --seed+1, ...; the report shows the median and min–max")
	fl.StringVar(&f.out, "out", "lockbench-out/run", "results folder")
	f.be.add(fl)
	fl.DurationVar(&f.clockSkew, "clock-skew", 0, "external backend, for testing cross-host checks: record every time in the history this much later, as a client host whose clock runs ahead would (the history's header says so; its clock measured against the server places it right)")
	libraryFlags(c)
	o.addFlags(c, false)
	return c
}

// addWorkloadFlags adds the workload flags run, diff and hunt share: clients,
// keys, TTL, duration, critical sections, think time, retry, nesting,
// fencing, usage policy, call and check timeouts.
func addWorkloadFlags(fl *pflag.FlagSet, f *runFlags) {
	fl.IntVar(&f.clients, "clients", 16, "concurrent clients, each its own lock owner")
	fl.IntVar(&f.keys, "keys", 1, "lock keys (1 = fully contended)")
	fl.BoolVar(&f.zipf, "zipf", false, "choose keys with a Zipf distribution instead of uniformly")
	fl.BoolVar(&f.ownKeys, "own-keys", false, "give every client a key of its own (--keys is then --clients): nobody waits, as in a bench's uncontended cost runs")
	fl.DurationVar(&f.ttl, "ttl", 100*time.Millisecond, "lock TTL")
	fl.DurationVar(&f.duration, "duration", 2*time.Second, "how long clients start new holds")
	fl.StringVar(&f.csKind, "cs", "fixed", "critical-section duration distribution: fixed, uniform, exponential")
	fl.DurationVar(&f.csMin, "cs-min", 0, "CS duration (fixed), lower bound (uniform) or mean (exponential); default TTL/20")
	fl.DurationVar(&f.csMax, "cs-max", 0, "CS upper bound (uniform, exponential)")
	fl.Float64Var(&f.tailShare, "cs-tail", 0, "share (0..1) of critical sections that run 2×TTL")
	fl.DurationVar(&f.think, "think", 0, "pause between a release and the next acquire")
	fl.StringVar(&f.retry, "retry", "", "retry policy: none, spin, fixed:DUR, exponential:BASE:MAX (default exponential:TTL/50:TTL/5)")
	fl.IntVar(&f.reentrancy, "reentrancy", 1, "nesting depth of acquires per hold (reentrant strategies)")
	fl.StringVar(&f.fencing, "fencing", "", "protected resource fencing: off, writes, all (default writes for fencing strategies, else off)")
	fl.StringVar(&f.policy, "policy", "", "usage policy override: default, none, check-validity, honour-lost, both")
	fl.DurationVar(&f.opTimeout, "op-timeout", 500*time.Millisecond, "timeout of each lock call (then its outcome is unknown: info); unset: 500ms on Redis, 3×TTL on etcd and ZooKeeper")
	fl.DurationVar(&f.checkLimit, "check-timeout", 10*time.Second, "porcupine time limit per check (then inconclusive)")
}

// run is `lockbench run`: check the input and the backend (prepare), run
// the repeats (repeats), write results.json and the report (write) and
// print the outcome (printRuns); its error is the exit code's.
func (f *runFlags) run(cmd *cobra.Command, o *output) error {
	spec, err := f.prepare(cmd, o)
	if err != nil {
		return err
	}
	started := time.Now().UTC().Format(time.RFC3339)
	runs, incomplete, runErr := f.repeats(cmd, o, spec)
	if len(runs) == 0 {
		return runErr
	}
	file, err := f.write(spec, runs, started, incomplete)
	if err != nil {
		// The checks ran: say their verdict before the error.
		if !o.json {
			fmt.Fprintf(cmd.OutOrStdout(), "%s; not written (see the error)\n", report.OutcomeOf(file, f.out).CountsLine())
		}
		return outdir.OutputError(f.out, err, outdir.OutputFix)
	}
	if err := f.printRuns(cmd, o, file); err != nil {
		return err
	}
	if runErr != nil {
		return runErr
	}
	return verdictError(runs)
}

// prepare checks the flags, the results folder and the backend, replaces
// an earlier run in the folder, and returns the run's Spec.
func (f *runFlags) prepare(cmd *cobra.Command, o *output) (bench.Spec, error) {
	if err := o.resolve(cmd); err != nil {
		return bench.Spec{}, err
	}
	if err := nonEmptyOut(f.out, "lockbench-out/run"); err != nil {
		return bench.Spec{}, err
	}
	spec, err := f.spec(cmd)
	if err != nil {
		return bench.Spec{}, err
	}
	if err := checkOutFolder(f.out, "run", "a run"); err != nil {
		return bench.Spec{}, err
	}
	if err := outdir.CheckWritable(f.out); err != nil {
		return bench.Spec{}, outdir.OutDirError(f.out, err)
	}
	if !o.quiet {
		notices(cmd, spec, f)
	}
	if err := bench.CheckBackend(cmd.Context(), spec.Cluster, spec.Workload.KeyPrefix, []bench.Spec{spec}); err != nil {
		return bench.Spec{}, err
	}
	if err := outdir.ReplaceEarlier(f.out, o.notef(cmd)); err != nil {
		return bench.Spec{}, err
	}
	if err := os.MkdirAll(f.out, 0o755); err != nil {
		return bench.Spec{}, outdir.OutDirError(f.out, err)
	}
	return spec, nil
}

// repeats runs spec --repeat times, repeat i with seed --seed+i; every
// repeat is recorded. An interrupt after some runs finished returns them
// with incomplete saying so and the interrupt as runErr; an overloaded
// run is kept, its error returned as runErr; any other error returns no
// runs.
func (f *runFlags) repeats(cmd *cobra.Command, o *output, spec bench.Spec) (runs []results.Run, incomplete string, runErr error) {
	_, _, _, w, _ := spec.Resolved()
	for i := range f.repeat {
		s := spec
		s.Seed = spec.Seed + int64(i)
		if f.repeat > 1 {
			s.Command = singleSeedCommand(os.Args[1:], f.out, s.Seed)
		}
		stop := o.spinner(cmd.ErrOrStderr(), fmt.Sprintf("%s/%s seed %d", s.Strategy, s.Scenario, s.Seed), w.Duration)
		r, err := bench.Run(cmd.Context(), s)
		stop()
		if err != nil && !errors.Is(err, bench.ErrOverloaded) {
			if len(runs) == 0 || !errors.Is(err, context.Canceled) {
				return nil, "", err
			}
			// Interrupted: write the runs that finished, then exit 130.
			return runs, fmt.Sprintf("interrupted after %d of %d runs", len(runs), f.repeat), err
		}
		if err != nil && runErr == nil {
			runErr = err
		}
		runs = append(runs, r)
	}
	return runs, "", runErr
}

// write writes the runs as results.json and the report into --out; the
// file is returned also when writing failed.
func (f *runFlags) write(spec bench.Spec, runs []results.Run, started, incomplete string) (*results.File, error) {
	r := runs[0]
	st, _, _, _, _ := spec.Resolved() // with its library settings (--redsync-*, --redislock-*)
	file := &results.File{
		SchemaVersion: results.SchemaVersion, Tool: "lockbench " + bench.Version, Commit: bench.Commit(), Profile: "run",
		Command: spec.Command, Seed: spec.Seed, Repeat: f.repeat, Started: started, Finished: time.Now().UTC().Format(time.RFC3339),
		Config: results.BenchConfig{Strategies: []string{spec.Strategy}, Scenarios: []string{spec.Scenario}, Workload: r.Config},
		Host:   results.ThisHost(),
		Redis:  r.Redis, Strategies: []results.StrategyInfo{bench.StrategyInfo(st)}, Runs: runs,
		Incomplete: incomplete,
	}
	err := figures.Write(f.out, file)
	if err == nil {
		err = report.Render(f.out, file)
	}
	return file, err
}

// printRuns prints the outcome: JSON (--json), the verdict line (--quiet)
// or each run's verdicts and the report's path.
func (f *runFlags) printRuns(cmd *cobra.Command, o *output, file *results.File) error {
	switch sum := report.OutcomeOf(file, f.out); {
	case o.json:
		return printJSON(cmd.OutOrStdout(), sum)
	case o.quiet:
		fmt.Fprintln(cmd.OutOrStdout(), sum.VerdictLine())
	default:
		for _, r := range file.Runs {
			printRun(cmd, f.out, r)
		}
		fmt.Fprintf(cmd.OutOrStdout(), "report: %s\n", filepath.Join(f.out, "report.md"))
	}
	return nil
}

// libraryFlags adds one flag per library setting of the library adapters
// (strategies.Settings: --redsync-tries, --redislock-refresh, ...).
func libraryFlags(c *cobra.Command) {
	for _, s := range strategies.Settings() {
		if !s.Bool {
			c.Flags().String(s.Name, s.Default, s.Usage)
			continue
		}
		v := boolSetting(s.Default)
		c.Flags().Var(&v, s.Name, s.Usage+" (a bool flag: --"+s.Name+" or --"+s.Name+"=false)")
		c.Flags().Lookup(s.Name).NoOptDefVal = "true"
	}
}

// librarySettings returns the library flags given on the command line, by
// name; nil if none.
func librarySettings(cmd *cobra.Command) map[string]string {
	var m map[string]string
	for _, s := range strategies.Settings() {
		if fl := cmd.Flags().Lookup(s.Name); fl != nil && fl.Changed {
			if m == nil {
				m = map[string]string{}
			}
			m[s.Name] = fl.Value.String()
		}
	}
	return m
}

// boolSetting is the value of a library setting that is a bool flag
// (strategies.Setting.Bool): help shows it as a bool (given alone it is "true";
// a value goes after "=") while the adapter validates the text, so that
// --redsync-fail-fast=maybe gets the adapter's message.
type boolSetting string

func (b *boolSetting) String() string { return string(*b) }

// Set stores s; the adapter checks it (strategies.Tune).
func (b *boolSetting) Set(s string) error { *b = boolSetting(s); return nil }

// Type is the flag's type name in help: "bool", which help leaves out.
func (b *boolSetting) Type() string { return "bool" }

// IsBoolFlag tells pflag's help that the flag is a bool.
func (b *boolSetting) IsBoolFlag() bool { return true }

// strayArgument is the usage error for a positional argument arg of run
// (raw: the command line after the program name): a strategy name given
// without --strategy, a value after a bool flag (--redsync-fail-fast
// false), or a second value after a flag (--ttl 100ms 5s).
func strayArgument(cmd *cobra.Command, raw []string, arg string) error {
	for i := 1; i < len(raw); i++ {
		if raw[i] != arg || !strings.HasPrefix(raw[i-1], "--") || strings.Contains(raw[i-1], "=") {
			continue
		}
		if fl := cmd.Flags().Lookup(strings.TrimPrefix(raw[i-1], "--")); fl != nil && fl.NoOptDefVal != "" {
			return fmt.Errorf("%w: unexpected argument %q after %s: it is a bool flag and takes no separate value; write %s=false or %s=true (alone it means true)", errs.ErrUsage, arg, raw[i-1], raw[i-1], raw[i-1])
		}
		break
	}
	if !cmd.Flags().Changed("strategy") {
		known := adapterclient.IsExec(arg) // not looked up: that would start the adapter
		if !known {
			_, err := strategies.Lookup(arg)
			known = err == nil
		}
		if known {
			return fmt.Errorf("%w: unexpected argument %q: name the strategy with --strategy (e.g. lockbench run --strategy %s)", errs.ErrUsage, arg, arg)
		}
		// Not a strategy (run --ttl 100ms 5s once suggested --strategy 5s).
		return fmt.Errorf("%w: unexpected argument %q: lockbench run takes flags only, each with one value (e.g. --ttl 100ms); remove it or give it to its flag, and name the strategy with --strategy NAME (lockbench list names them)", errs.ErrUsage, arg)
	}
	return fmt.Errorf("%w: unexpected argument %q: lockbench run takes flags only, each with one value (e.g. --ttl 100ms); remove it or give it to its flag", errs.ErrUsage, arg)
}

// maxDuration is the longest --duration of one run.
const maxDuration = time.Hour

// maxTTL is the longest --ttl: a run's default critical section is TTL/20,
// and a lock that outlives an hour-long run tests nothing.
const maxTTL = time.Hour

// minOpTimeout is the shortest --op-timeout: below it a lock call cannot
// even make a round trip to Redis on loopback, so every call would be info.
const minOpTimeout = time.Millisecond

// minCheckTimeout is the shortest porcupine time limit (run
// --check-timeout, check --timeout): below it even a short clean history
// cannot be checked in time, so every check would be inconclusive (exit 4)
// for the flag's sake, not the lock's.
const minCheckTimeout = 100 * time.Millisecond

// checkTimeoutError is the usage error for a porcupine time limit below
// minCheckTimeout given as flag; nil when d is long enough.
func checkTimeoutError(flag string, d time.Duration) error {
	if d >= minCheckTimeout {
		return nil
	}
	return fmt.Errorf("%w: %s %v: want at least %v (shorter, every check is inconclusive before it can finish; default 10s)", errs.ErrUsage, flag, d, minCheckTimeout)
}

// onceString is a string flag that may be given once: pflag keeps the last
// of repeated values silently, and `run --strategy a --strategy b` ran b
// alone. many names bench's flag that takes several.
type onceString struct {
	v    *string
	set  bool
	many string
}

func (o *onceString) String() string {
	if o.v == nil {
		return ""
	}
	return *o.v
}

// Set stores s, or fails when the flag was already given.
func (o *onceString) Set(s string) error {
	if o.set {
		return fmt.Errorf("given twice (%q, then %q): run takes one; lockbench bench %s A,B runs several", *o.v, s, o.many)
	}
	*o.v, o.set = s, true
	return nil
}

// Type is the flag's type name in help.
func (o *onceString) Type() string { return "string" }

// spec validates the flags into a bench.Spec; errors wrap errs.ErrUsage.
// Its phases: the flags' own values (checkValues), the workload they
// describe (workload), the overrides of the strategy's defaults
// (overrides), then the backend and a dry resolution of the whole spec.
func (f *runFlags) spec(cmd *cobra.Command) (bench.Spec, error) {
	if err := f.checkValues(); err != nil {
		return bench.Spec{}, err
	}
	w, err := f.workload()
	if err != nil {
		return bench.Spec{}, err
	}
	if !cmd.Flags().Changed("op-timeout") {
		// The strategy's default: 500 ms on Redis, 3×TTL on etcd and
		// ZooKeeper (bench.Spec.Resolved). The flag's own default once
		// overrode it, and the note said "op timeout 500ms (... 3×TTL by
		// default)".
		w.OpTimeout = 0
	}
	s := bench.Spec{Strategy: f.strategy, Scenario: f.scenario, Seed: f.seed, Workload: w, OutDir: f.out, CheckTimeout: f.checkLimit,
		Library: librarySettings(cmd)}
	if f.schedule != "" {
		if cmd.Flags().Changed("scenario") {
			return bench.Spec{}, fmt.Errorf("%w: --scenario %s and --schedule %s: a run plays one or the other; drop one", errs.ErrUsage, f.scenario, f.schedule)
		}
		sch, err := schedule.Read(f.schedule)
		if err != nil {
			return bench.Spec{}, err
		}
		s.Schedule, s.Scenario = &sch, sch.Scenario()
	}
	if s.Fencing, s.Policy, err = f.overrides(); err != nil {
		return bench.Spec{}, err
	}
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	o, note, err := f.be.options(ctx)
	if err != nil {
		return bench.Spec{}, err
	}
	f.backendNote = note
	s.Cluster, s.Workload.KeyPrefix = o, f.be.keyPrefix
	if s.ClockSkew, err = clockSkew(f.clockSkew, o.Backend); err != nil {
		return bench.Spec{}, err
	}
	if err := chaos.CheckServers(o, s.Strategy, s.Scenario, "a --strategy that needs fewer"); err != nil {
		return bench.Spec{}, err
	}
	if _, _, _, _, err := s.Resolved(); err != nil {
		return bench.Spec{}, err
	}
	s.Command = commandLine(os.Args[1:])
	return s, nil
}

// maxClockSkew is the largest --clock-skew: NTP keeps real hosts within
// milliseconds, and a skew beyond the run's own length tests nothing more.
const maxClockSkew = time.Hour

// clockSkew checks --clock-skew d for a run on backend: only on the
// external backend (the only one whose histories carry a clock measured
// against the server, which a cross-host check needs), not negative (a
// host behind is the other host ahead: skew that one), at most
// maxClockSkew. Errors wrap errs.ErrUsage.
func clockSkew(d time.Duration, backend string) (time.Duration, error) {
	switch {
	case d == 0:
		return 0, nil
	case d < 0:
		return 0, fmt.Errorf("%w: --clock-skew %v is negative: a host whose clock runs behind is the other host's running ahead; give the other lockbench --clock-skew %v", errs.ErrUsage, d, -d)
	case d > maxClockSkew:
		return 0, fmt.Errorf("%w: --clock-skew %v: want at most %v", errs.ErrUsage, d, maxClockSkew)
	case backend != cluster.BackendExternal:
		return 0, fmt.Errorf("%w: --clock-skew goes with --backend external: only there does a history carry its clock measured against the server, which a cross-host check (lockbench check H1 H2) needs", errs.ErrUsage)
	}
	return d, nil
}

// checkValues refuses flag values that are impossible on their own or
// together: a missing --strategy, an unknown --cs, critical-section bounds
// that cross, values that must be positive, seeds that overflow, and
// durations outside their documented bounds. Errors wrap errs.ErrUsage.
func (f *runFlags) checkValues() error {
	if f.strategy == "" {
		return fmt.Errorf("%w: --strategy is required (valid: %s)", errs.ErrUsage, strings.Join(strategies.Names(), ", "))
	}
	if f.tailShare < 0 || f.tailShare > 1 {
		return fmt.Errorf("%w: --cs-tail %g: want a share between 0 and 1", errs.ErrUsage, f.tailShare)
	}
	kind, err := workload.ParseCSKind(f.csKind)
	if err != nil {
		return fmt.Errorf("%w: --cs %q (valid: fixed, uniform, exponential)", errs.ErrUsage, f.csKind)
	}
	if f.csMax != 0 && f.csMin != 0 && f.csMax < f.csMin {
		return fmt.Errorf("%w: --cs-max %v is below --cs-min %v", errs.ErrUsage, f.csMax, f.csMin)
	}
	if kind != workload.CSFixed && f.csMax != 0 && f.csMin == 0 && f.csMax < f.ttl/20 {
		// --cs-min defaults to TTL/20: the bound would sit below it.
		return fmt.Errorf("%w: --cs-max %v is below the default --cs-min %v (TTL/20): give a --cs-min of at most %v, or a larger --cs-max", errs.ErrUsage, f.csMax, f.ttl/20, f.csMax)
	}
	for _, x := range []struct {
		name string
		bad  bool
	}{
		{"--duration", f.duration <= 0}, {"--ttl", f.ttl <= 0}, {"--clients", f.clients <= 0}, {"--keys", f.keys <= 0},
		{"--reentrancy", f.reentrancy <= 0}, {"--op-timeout", f.opTimeout <= 0}, {"--check-timeout", f.checkLimit <= 0},
		{"--repeat", f.repeat <= 0},
	} {
		if x.bad {
			return fmt.Errorf("%w: %s must be positive (see lockbench run --help for defaults)", errs.ErrUsage, x.name)
		}
	}
	if err := bench.CheckSeeds(f.seed, f.repeat); err != nil {
		return err
	}
	if f.duration > maxDuration {
		return fmt.Errorf("%w: --duration %v: want at most %v (a history grows by tens of MB a minute; for a longer soak use --repeat)", errs.ErrUsage, f.duration, maxDuration)
	}
	if f.ttl > maxTTL {
		return fmt.Errorf("%w: --ttl %v: want at most %v (a run's critical section defaults to TTL/20 and must fit in --duration)", errs.ErrUsage, f.ttl, maxTTL)
	}
	if err := checkTimeoutError("--check-timeout", f.checkLimit); err != nil {
		return err
	}
	if f.opTimeout < minOpTimeout {
		return fmt.Errorf("%w: --op-timeout %v: want at least %v (shorter, every lock call times out before Redis can answer; default 500ms)", errs.ErrUsage, f.opTimeout, minOpTimeout)
	}
	for _, x := range []struct {
		name string
		d    time.Duration
	}{{"--think", f.think}, {"--cs-min", f.csMin}, {"--cs-max", f.csMax}} {
		if x.d < 0 {
			return fmt.Errorf("%w: %s %v is negative", errs.ErrUsage, x.name, x.d)
		}
	}
	return nil
}

// workload is the workload the flags describe (checked by checkValues):
// clients, keys, TTL, duration, think time, nesting, call timeout, the
// critical-section distribution when a --cs flag is given (else the
// default, TTL/20) and the retry policy when --retry is given.
func (f *runFlags) workload() (workload.Config, error) {
	w := workload.Config{
		Clients: f.clients, Keys: f.keys, Zipf: f.zipf, OwnKeys: f.ownKeys, TTL: f.ttl, Duration: f.duration,
		Think: f.think, Reentrancy: f.reentrancy, OpTimeout: f.opTimeout,
	}
	kind := workload.CSKind(f.csKind) // a valid kind: checkValues parsed it
	if f.csMin > 0 || kind != workload.CSFixed || f.tailShare > 0 {
		min := f.csMin
		if min == 0 {
			min = f.ttl / 20
		}
		w.CS = workload.CSDist{Kind: kind, Min: min, Max: f.csMax, TailShare: f.tailShare, Tail: 2 * f.ttl}
	}
	if f.retry != "" {
		r, err := workload.ParseRetry(f.retry)
		if err != nil {
			return w, fmt.Errorf("%w: --retry: %v", errs.ErrUsage, err)
		}
		w.Retry = r
	}
	return w, nil
}

// overrides are the flags that override the strategy's defaults: the
// resource's fencing mode ("" keeps the strategy's) and the usage policy
// (nil keeps the strategy's). Errors wrap errs.ErrUsage.
func (f *runFlags) overrides() (resource.Fencing, *impl.Policy, error) {
	var fencing resource.Fencing
	if f.fencing != "" {
		fm, err := resource.ParseFencing(f.fencing)
		if err != nil {
			return "", nil, fmt.Errorf("%w: --fencing: %v", errs.ErrUsage, err)
		}
		fencing = fm
	}
	switch f.policy {
	case "", "default":
		return fencing, nil, nil
	case "none":
		return fencing, &impl.Policy{}, nil
	case "check-validity":
		return fencing, &impl.Policy{CheckValidity: true}, nil
	case "honour-lost":
		return fencing, &impl.Policy{HonourLost: true}, nil
	case "both":
		return fencing, &impl.Policy{CheckValidity: true, HonourLost: true}, nil
	}
	return "", nil, fmt.Errorf("%w: --policy %q (valid: default, none, check-validity, honour-lost, both)", errs.ErrUsage, f.policy)
}

// notices tells, one line each on stderr, where the run will not do what
// the flags say: every setting the scenario or the lock's servers change
// (bench.Spec.Adjustments: a longer TTL with the critical sections, think
// time and retry policy scaled with it, a longer duration, a fixed client
// count or think time), or nesting asked of a strategy that cannot nest.
func notices(cmd *cobra.Command, spec bench.Spec, f *runFlags) {
	st, sc, _, _, err := spec.Resolved()
	if err != nil {
		return
	}
	e := cmd.ErrOrStderr()
	if f.backendNote != "" && st.Info().Server == impl.ServerRedis {
		// The note names redis-server; etcd and ZooKeeper run as processes
		// whatever it says.
		fmt.Fprintf(e, "note: %s\n", f.backendNote)
	}
	if adj, _ := spec.Adjustments(); len(adj) > 0 {
		fmt.Fprintf(e, "note: %s under %s does not run as asked (results.json's config records what ran): %s\n", st.Name(), sc.Name, adjustmentsText(adj))
	}
	if f.reentrancy > 1 && !st.Info().Claims.Reentrant {
		fmt.Fprintf(e, "note: --reentrancy %d ignored: %s is not reentrant (only reentrant strategies nest)\n", f.reentrancy, st.Name())
	}
}

// adjustmentsText joins adjustments for a note: "--ttl 100ms → 200ms
// (why); --cs ...".
func adjustmentsText(adj []bench.Adjustment) string {
	s := make([]string, len(adj))
	for i, a := range adj {
		s[i] = a.String()
	}
	return strings.Join(s, "; ")
}

// singleSeedCommand is the command line (args without the program name)
// that reproduces the run of one seed of a run --repeat into the results
// folder dir: --repeat, --seed and --out (either spelling) left out,
// --seed seed and --out dir/seed-SEED appended, so that pasting it writes
// beside the repeat's results instead of replacing them.
func singleSeedCommand(args []string, dir string, seed int64) string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--repeat" || a == "--seed" || a == "--out":
			i++ // and its value
			continue
		case strings.HasPrefix(a, "--repeat=") || strings.HasPrefix(a, "--seed=") || strings.HasPrefix(a, "--out="):
			continue
		}
		out = append(out, a)
	}
	return commandLine(append(out, "--seed", strconv.FormatInt(seed, 10), "--out", seedFolder(dir, seed)))
}

// seedFolder is the results folder of one seed's reproduce command of a
// run --repeat into dir: dir/seed-SEED.
func seedFolder(dir string, seed int64) string {
	return filepath.Join(dir, fmt.Sprintf("seed-%d", seed))
}

// printRun prints one run's verdict beside its expectation, then what
// evidence each inconclusive check lacked and the liveness finding; out is
// the results folder the run's paths are relative to.
func printRun(cmd *cobra.Command, out string, r results.Run) {
	w := cmd.OutOrStdout()
	mark := "as expected"
	switch r.Outcome() {
	case results.OutcomeUnexpected:
		mark = "UNEXPECTED: " + strings.Join(r.Unexpected, "; ")
	case results.OutcomeInconclusive:
		mark = "INCONCLUSIVE (too little evidence, see below)"
	}
	fmt.Fprintf(w, "%s/%s seed %d: expected %s; exclusion %s, resource %s, liveness %s; %d violations (overlapping pairs of holds + lost updates), %d grants, %.0f grants/s, acquire p99 %.2f ms: %s\n",
		r.Strategy, r.Scenario, r.Seed, r.Expected, r.Verdict.Exclusion, r.Verdict.Resource, r.Verdict.Liveness,
		r.Violations, r.Grants, r.ThroughputPerS, r.AcquireLatencyMs.P99, mark)
	for _, name := range slices.Sorted(maps.Keys(r.Missing)) {
		fmt.Fprintf(w, "  inconclusive %s: %s\n", name, r.Missing[name])
	}
	if r.LivenessFinding != "" {
		fmt.Fprintf(w, "  liveness finding: %s\n", r.LivenessFinding)
	}
	if wait := time.Duration(r.Config.ScheduleWaitMs * float64(time.Millisecond)); wait >= bench.ScheduleWaitNoted {
		fmt.Fprintf(w, "  note: the fault schedule waited %v for every client's first call (a client slow to start); the clients ran the duration after that\n", wait.Round(time.Millisecond))
	}
	if r.Visualization != "" {
		fmt.Fprintf(w, "  porcupine visualisation: %s\n", filepath.Join(out, r.Visualization))
	}
	if r.Expected == "at-risk" {
		fmt.Fprintf(w, "  not gated: %s\n", r.Reason)
	}
	if r.Error != "" {
		fmt.Fprintf(w, "  %s\n", r.Error)
	}
	if r.Busy() {
		fmt.Fprintf(cmd.OutOrStdout(), "  busy machine: %s: the cost figures are not comparable with a quiet run's\n", r.Noise.Why)
	}
	if r.NotComparable() {
		fmt.Fprintf(cmd.OutOrStdout(), "  not comparable: %s\n", r.Envelope.Why)
	}
}
