package main

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/chaos"
	"github.com/lockbench/lockbench/compare"
	"github.com/lockbench/lockbench/diff"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/strategies"
	"github.com/lockbench/lockbench/internal/errs"
	"github.com/lockbench/lockbench/outdir"
)

// diffFlags are the flags of `lockbench diff`: the workload flags of run
// (runFlags) and diff's own.
type diffFlags struct {
	run       runFlags
	scenarios []string
	profile   string
	maxReg    string
	o         output
}

func newDiffCmd() *cobra.Command {
	var f diffFlags
	c := &cobra.Command{
		Use:   "diff A B [--scenario NAME]... [--profile ci|full] [--repeat N] [--seed N] [--out DIR] [--max-regression P]",
		Short: "Run two locks under the same seeds and faults and fail when B is significantly worse than A (the upgrade check)",
		Long: `Run strategies A and B (built-in names or exec: adapters, e.g. the release of a
lock library you run and the candidate, each pinned in its own adapter)
cell by cell under the same scenarios, seeds and fault schedules,
interleaved (A seed 1, B seed 1, A seed 2, ...) so that machine noise falls
on both, and report every difference, worst first, with the witnesses
from both sides:
  per check      the runs with a violation (every check that gates a
                 run: exclusion, resource, fencing, reentrancy, renewal
                 liveness, liveness, availability during faults, the
                 contract checks orphans, lost, extends and reasons;
                 lost leases with no fault; the gate): Fisher's exact
                 test, one-sided, on runs
  per figure     violations per run, commands per grant and per attempt
                 counted on the servers, grants and grant-call latency
                 per fault window, grants/s and acquire p99 per window:
                 the Mann-Whitney U test (benchmath), as compare runs it
A difference counts only when significant (p < 0.05); otherwise the
report says "no difference shown at N runs" and how many runs a side
would show one of the size seen (a violation in every run of B against
none of A needs 4 runs a side; in half of them about 10; in one run of
ten about 66).

Scenarios: --scenario NAME (repeatable), else those of --profile (default
ci) that apply to both locks. The workload flags are run's (--ttl,
--clients, --duration, --cs-min, --op-timeout, --policy, ...); with
--profile, the profile's TTL, duration and clients unless given.

Results: --out holds results.json (both sides' runs, A's histories under
A/, B's under B/) and the report with the differences first.

Use compare for two saved benches of the same strategies (a baseline
against today's build); use diff for two locks (two releases of a
library, a mutant and its twin) under the same schedules.

Exit codes: 0 B is not significantly worse than A on any figure, 1 B is
significantly worse on a safety, liveness or contract figure, or on a cost figure
beyond --max-regression, 2 usage error, 3 environment error, 130
interrupted.`,
		Example: `  lockbench diff exec:redsync-v4.11 exec:redsync-v4.12 --scenario baseline --scenario node-pause --repeat 6
  lockbench diff token-lua watchdog --profile ci --repeat 4 --out lockbench-out/diff`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) != 2 {
				return fmt.Errorf("%w: want two arguments, A and B (usage: lockbench diff A B [--scenario NAME]...; names: lockbench list, or exec:COMMAND)", errs.ErrUsage)
			}
			return nil
		},
		RunE: f.exec,
	}
	fl := c.Flags()
	addWorkloadFlags(fl, &f.run)
	fl.StringArrayVar(&f.scenarios, "scenario", nil, "scenario to run both locks under (repeatable; default: the --profile's that apply to both)")
	fl.StringVar(&f.profile, "profile", "", "profile whose scenarios and base workload to use when no --scenario is given (ci, full; default ci)")
	fl.Int64Var(&f.run.seed, "seed", 1, "first seed: run i of each scenario uses seed+i on both sides")
	fl.IntVar(&f.run.repeat, "repeat", diff.DefaultRepeat, "runs a side per scenario (4 is the fewest with which a violation in every run of B against none of A is significant)")
	fl.StringVar(&f.run.out, "out", "lockbench-out/diff", "results folder (A's histories in A/, B's in B/)")
	fl.StringVar(&f.maxReg, "max-regression", "10%", "largest significant rise of a cost figure (commands per grant, latency) or drop of grants/s not gated: a percentage or a fraction")
	f.run.be.add(fl)
	libraryFlags(c)
	f.o.addFlags(c, false)
	return c
}

// exec is lockbench diff: the flags become diff.Options, the runs run,
// the report is printed (text or --json) and B's regression is the exit
// code.
func (f *diffFlags) exec(cmd *cobra.Command, args []string) error {
	o, err := f.options(cmd, args)
	if err != nil {
		return err
	}
	var done func()
	o.Progress, done = f.o.progress(cmd.ErrOrStderr())
	res, err := diff.Run(cmd.Context(), o)
	done()
	if res == nil {
		return err
	}
	w := cmd.OutOrStdout()
	switch {
	case f.o.json:
		b, jerr := json.MarshalIndent(res.Report, "", "  ")
		if jerr != nil {
			return jerr
		}
		fmt.Fprintln(w, string(b))
	case f.o.quiet:
		fmt.Fprintln(w, res.Report.Headline())
	default:
		if werr := res.Report.WriteText(w); werr != nil {
			return werr
		}
		fmt.Fprintf(w, "report: %s/report.md\n", o.OutDir)
	}
	if err != nil {
		return err
	}
	if res.Report.Failed() {
		return fmt.Errorf("%w: diff: B is significantly worse than A (%d gated difference(s)); report: %s/report.md", errUnexpected, res.Report.Gated, o.OutDir)
	}
	return nil
}

// options checks the flags into diff.Options. Errors wrap errs.ErrUsage
// (or cluster.ErrEnvironment for the backend).
func (f *diffFlags) options(cmd *cobra.Command, args []string) (diff.Options, error) {
	if err := f.o.resolve(cmd); err != nil {
		return diff.Options{}, err
	}
	if err := nonEmptyOut(f.run.out, "lockbench-out/diff"); err != nil {
		return diff.Options{}, err
	}
	thr, err := compare.ParseRegression(f.maxReg)
	if err != nil {
		return diff.Options{}, fmt.Errorf("%w: %v", errs.ErrUsage, err)
	}
	a, b := args[0], args[1]
	for i, name := range []string{a, b} {
		if strings.TrimSpace(name) == "" {
			return diff.Options{}, fmt.Errorf("%w: %s is empty: name a strategy (lockbench list) or an exec: adapter", errs.ErrUsage, []string{"A", "B"}[i])
		}
	}
	f.run.strategy = a // checkValues wants one
	if err := f.run.checkValues(); err != nil {
		return diff.Options{}, err
	}
	w, err := f.run.workload()
	if err != nil {
		return diff.Options{}, err
	}
	changed := func(n string) bool { return cmd.Flags().Changed(n) }
	if !changed("op-timeout") {
		w.OpTimeout = 0 // each lock's default (bench.Spec.Resolved)
	}
	scenarios := f.scenarios
	profile := ""
	if len(scenarios) == 0 || changed("profile") {
		name := f.profile
		if name == "" {
			name = "ci"
		}
		p, err := bench.LookupProfile(name)
		if err != nil {
			return diff.Options{}, err
		}
		profile = p.Name
		if len(scenarios) == 0 {
			scenarios = bothApply(p.Scenarios, a, b)
		}
		pw := p.Workload
		if !changed("ttl") && pw.TTL > 0 {
			w.TTL = pw.TTL
		}
		if !changed("duration") && pw.Duration > 0 {
			w.Duration = pw.Duration
		}
		if !changed("clients") && pw.Clients > 0 {
			w.Clients = pw.Clients
		}
	}
	for _, sc := range scenarios {
		if _, err := chaos.Lookup(sc); err != nil {
			return diff.Options{}, fmt.Errorf("%w: --scenario: %v", errs.ErrUsage, err)
		}
	}
	fencing, policy, err := f.run.overrides()
	if err != nil {
		return diff.Options{}, err
	}
	co, note, err := f.run.be.options(cmd.Context())
	if err != nil {
		return diff.Options{}, err
	}
	if note != "" && !f.o.quiet {
		fmt.Fprintf(cmd.ErrOrStderr(), "note: %s\n", note)
	}
	for _, st := range []string{a, b} {
		for _, sc := range scenarios {
			if err := chaos.CheckServers(co, st, sc, "A and B that need fewer"); err != nil {
				return diff.Options{}, err
			}
		}
	}
	w.KeyPrefix = f.run.be.keyPrefix
	if err := checkOutFolder(f.run.out, "diff", "a diff"); err != nil {
		return diff.Options{}, err
	}
	if err := outdir.CheckWritable(f.run.out); err != nil {
		return diff.Options{}, outdir.OutDirError(f.run.out, err)
	}
	o := diff.Options{A: a, B: b, Scenarios: scenarios, Workload: w, Policy: policy, Fencing: fencing, Library: librarySettings(cmd),
		Seed: f.run.seed, Repeat: f.run.repeat, OutDir: f.run.out, Cluster: co, CheckTimeout: f.run.checkLimit, MaxRegression: thr,
		Command: commandLine(os.Args[1:]), Profile: profile}
	passed := passThrough(cmd.Flags())
	o.RunCommand = func(s bench.Spec) string {
		return commandLine(append([]string{"run", "--strategy", s.Strategy, "--scenario", s.Scenario, "--seed", strconv.FormatInt(s.Seed, 10)}, passed...))
	}
	if _, err := diff.Plan(o); err != nil {
		return diff.Options{}, err
	}
	return o, nil
}

// diffOnly are diff's flags that a run's reproduce command leaves out.
var diffOnly = []string{"scenario", "profile", "seed", "repeat", "out", "max-regression", "json", "quiet"}

// passThrough are the flags given on the command line that `lockbench
// run` takes too (workload, backend, library), as arguments.
func passThrough(fs *pflag.FlagSet) []string {
	var out []string
	fs.Visit(func(fl *pflag.Flag) {
		if slices.Contains(diffOnly, fl.Name) {
			return
		}
		out = append(out, "--"+fl.Name+"="+fl.Value.String())
	})
	return out
}

// bothApply returns the scenarios of names that apply to both locks (a
// lock that cannot be looked up leaves them all: Plan names it).
func bothApply(names []string, a, b string) []string {
	var infos []impl.Info
	for _, n := range []string{a, b} {
		st, err := strategies.Lookup(n)
		if err != nil {
			return names
		}
		infos = append(infos, st.Info())
	}
	var out []string
	for _, n := range names {
		sc, err := chaos.Lookup(n)
		if err != nil {
			continue
		}
		ok := true
		for _, in := range infos {
			if applies, _ := sc.AppliesTo(in); !applies {
				ok = false
			}
		}
		if ok {
			out = append(out, n)
		}
	}
	return out
}
