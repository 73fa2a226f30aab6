package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/chaos"
	"github.com/lockbench/lockbench/hunt"
	"github.com/lockbench/lockbench/impl/adapterclient"
	"github.com/lockbench/lockbench/internal/errs"
	"github.com/lockbench/lockbench/outdir"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/shard"
	"github.com/lockbench/lockbench/verdicts"
)

// benchFlags are the flags of `lockbench bench`.
type benchFlags struct {
	profile, out          string
	strategies, scenarios []string
	o                     output
	be                    backendFlags
	seed                  int64
	repeat                int
	shard                 string
}

func newBenchCmd() *cobra.Command {
	var f benchFlags
	c := &cobra.Command{
		Use:   "bench [--profile ci|full|cost|adapters|consensus-seeds|verdicts-sweep] [--seed N] [--repeat N] [--out DIR]",
		Short: "Run a profile's matrix of strategies × scenarios and write the report",
		Long: `Run every (strategy, scenario) pair of a profile against Redis servers that
lockbench starts and stops itself (--backend process: redis-server processes;
--backend docker: containers) or an existing deployment (--backend external
--redis-addrs), check each history, and write results.json, report.md,
index.html, the plots and the histories to --out.

Profiles: ci (every pair once, short runs: the CI gate; etcd-mutex and zk-lock
under baseline, gc-pause and leader-kill), full (three seeds, longer runs, a
client sweep), cost (what a lock costs, like for like: overhead, handoff and
capacity of six locks), consensus-seeds (the etcd and ZooKeeper key results, 20 seeds).
--strategies and --scenarios narrow a profile.
--repeat N runs each cell N times with seeds --seed, --seed+1, ...; the
report shows medians with min–max; the same seed and repeat run the same
cells.
Pairs whose faults the backend cannot inject (--backend docker or external)
are skipped, one "n/a" line each on stderr; so are the pairs the verdict
table marks not applicable and, on the external backend, the strategies that
need more servers than --redis-addrs gives, unless named in --strategies
(then the bench is refused before it starts). A scenario named in
--scenarios none of whose pairs can run is refused too.

Output: progress on stderr (a bar on a terminal, one line per run when
stderr is not a terminal or with -v), then the verdict line and the
unexpected runs on stdout; --quiet prints only errors and the verdict line;
--json prints the summary as JSON on stdout and nothing else there.

A cell whose run is inconclusive (a gated check lacked evidence) is rerun
with the next seed and twice the duration, at most 2 times, when that can
supply what is missing (holds, chances to overlap, a fault that lands; not
a share of unknown outcomes); the report shows the last attempt and says
it was rerun and why, and results.json keeps every attempt.

Exit codes: 0 every verdict as expected, 1 an unexpected verdict, 2 usage
error, 3 environment error (also a harness too overloaded to trust: a
client stalled inside a hold by more than TTL/2 with no fault to explain
it), 4 inconclusive (nothing unexpected, but a gated check still lacked
evidence after its reruns; 1 wins over 4), 130 interrupted (the runs
already finished are written).`,
		Example: "  lockbench bench --profile ci --out lockbench-out/bench",
		Args:    cobra.NoArgs,
		RunE:    f.run,
	}
	c.Flags().StringVar(&f.profile, "profile", "ci", "bench profile: ci, full or adapters (redis-py through its adapter beside token-lua and watchdog)")
	c.Flags().StringVar(&f.out, "out", "lockbench-out/bench", "results folder")
	c.Flags().Int64Var(&f.seed, "seed", 1, "base seed: repeat i (from 0) of each cell runs seed+i")
	c.Flags().IntVar(&f.repeat, "repeat", 0, "runs per (strategy, scenario) cell; the report shows the median and min–max (default: the profile's, ci 1, full 3)")
	c.Flags().StringSliceVar(&f.strategies, "strategies", nil, "run only these strategies of the profile (comma-separated; see lockbench list), plus any exec:COMMAND or exec:NAME adapter (docs/protocol.md)")
	c.Flags().StringVar(&f.shard, "shard", "", "run only part I of N of the bench (I/N, e.g. 2/4): every repeat of a cell in one part, parts balanced by expected duration; join the parts' folders with lockbench merge (docs/ci.md)")
	c.Flags().StringSliceVar(&f.scenarios, "scenarios", nil, "run only these scenarios of the profile (comma-separated; see lockbench list)")
	f.o.addFlags(c, true)
	f.be.add(c.Flags())
	return c
}

// run is the bench command: the flags become a bench's options (options),
// the pairs the backend cannot run are named (printSkipped), the bench
// runs, and its outcome is printed (printOutcome).
func (f *benchFlags) run(cmd *cobra.Command, _ []string) error {
	opts, err := f.options(cmd)
	if err != nil {
		return err
	}
	skipped := bench.SkippedPairs(opts.Profile, opts.Cluster)
	if !f.o.json && !f.o.quiet {
		printSkipped(cmd.ErrOrStderr(), skipped)
	}
	if err := bench.CheckScenarios(opts.Profile, opts.Cluster, f.scenarios, skipped); err != nil {
		return err
	}
	var done func()
	opts.Progress, done = f.o.progress(cmd.ErrOrStderr())
	file, err := bench.Bench(cmd.Context(), opts)
	done()
	err = f.printOutcome(cmd, file, err)
	if h := opts.Profile.Hunt; opts.Hunt > 0 && (file == nil || file.Shard == nil || file.Shard.Hunt) && (err == nil || errors.Is(err, errUnexpected) || errors.Is(err, errInconclusive)) {
		if herr := f.profileHunt(cmd, opts, *h); herr != nil && (err == nil || errors.Is(herr, errUnexpected) && !errors.Is(err, errUnexpected)) {
			err = herr
		}
	}
	return err
}

// profileHunt runs the profile's short hunt (bench.HuntPlan) into
// OUT/hunt after its matrix (when --strategies, if given, names its
// strategy and --scenarios is not given) and prints its summary: errUnexpected when a
// surprise reproduced, the hunt's error when it could not run.
func (f *benchFlags) profileHunt(cmd *cobra.Command, opts bench.Options, h bench.HuntPlan) error {
	out := filepath.Join(f.out, "hunt")
	if err := cleanHuntFolder(out); err != nil {
		return err
	}
	spec := bench.Spec{Strategy: h.Strategy, Workload: h.Workload, Cluster: opts.Cluster}
	spec.Workload.KeyPrefix = opts.KeyPrefix
	command := fmt.Sprintf("lockbench hunt --strategy %s --schedules %d --budget %v --seed %d --out %s", h.Strategy, h.Schedules, h.Budget, opts.Seed, out)
	if !f.o.quiet && !f.o.json {
		fmt.Fprintf(cmd.ErrOrStderr(), "profile %s: hunt on %s (%d schedules, at most %v): %s\n", opts.Profile.Name, h.Strategy, h.Schedules, h.Budget, command)
	}
	rep, err := hunt.Hunt(cmd.Context(), hunt.Options{Spec: spec, Budget: h.Budget, Seed: max(opts.Seed, 1), OutDir: out, MaxSchedules: h.Schedules,
		Command: command, RunCommand: scheduleCommand})
	if rep == nil {
		return err
	}
	if !f.o.quiet && !f.o.json {
		hunt.Text(cmd.OutOrStdout(), rep, out)
	}
	if err != nil {
		return err
	}
	if rep.Reproduced() {
		return fmt.Errorf("%w: the profile's hunt on %s: a surprise reproduced (%s)", errUnexpected, h.Strategy, filepath.Join(out, hunt.ReportMarkdown))
	}
	return nil
}

// options checks the flags and turns them into a bench's options: the
// output mode, --out, the profile narrowed to --strategies and
// --scenarios, the backend (a note on stderr when --backend auto chose),
// the named strategies' server needs, --repeat and --seed, and that --out
// may be written. Errors wrap errs.ErrUsage, or cluster.ErrEnvironment for
// the machine.
func (f *benchFlags) options(cmd *cobra.Command) (bench.Options, error) {
	if err := f.o.resolve(cmd); err != nil {
		return bench.Options{}, err
	}
	if err := nonEmptyOut(f.out, "lockbench-out/bench"); err != nil {
		return bench.Options{}, err
	}
	for _, x := range []struct {
		name  string
		empty bool
	}{{"strategies", len(f.strategies) == 0}, {"scenarios", len(f.scenarios) == 0}} {
		if x.empty && cmd.Flags().Changed(x.name) {
			return bench.Options{}, fmt.Errorf("%w: --%s is empty: name at least one (see lockbench list), or leave the flag out to run all of the profile's", errs.ErrUsage, x.name)
		}
	}
	p, err := bench.LookupProfile(f.profile)
	if err != nil {
		return bench.Options{}, err
	}
	if p, err = onlySome(p, f.strategies, f.scenarios); err != nil {
		return bench.Options{}, err
	}
	co, note, err := f.be.options(cmd.Context())
	if err != nil {
		return bench.Options{}, err
	}
	if note != "" && !f.o.quiet {
		fmt.Fprintf(cmd.ErrOrStderr(), "note: %s\n", note)
	}
	if len(f.strategies) > 0 {
		// Named strategies must run; the default set marks the
		// ones that cannot n/a (bench.Unsupported).
		for _, st := range p.Strategies {
			if err := chaos.CheckServers(co, st, "", "--strategies that need fewer"); err != nil {
				return bench.Options{}, err
			}
		}
	}
	repeat := f.repeat
	if repeat < 0 {
		return bench.Options{}, fmt.Errorf("%w: --repeat %d: want a repeat ≥ 1 (0: the profile's)", errs.ErrUsage, repeat)
	}
	if repeat == 0 {
		repeat = max(p.Seeds, 1)
	}
	if err := bench.CheckSeeds(f.seed, repeat); err != nil {
		return bench.Options{}, err
	}
	if err := checkOutFolder(f.out, "", "bench"); err != nil {
		return bench.Options{}, err
	}
	if err := outdir.CheckWritable(f.out); err != nil {
		return bench.Options{}, outdir.OutDirError(f.out, err)
	}
	var part shard.Shard
	if cmd.Flags().Changed("shard") {
		if part, err = shard.Parse(f.shard); err != nil {
			return bench.Options{}, err
		}
	}
	var hunt time.Duration
	if h := p.Hunt; h != nil && (len(f.strategies) == 0 || slices.Contains(f.strategies, h.Strategy)) && len(f.scenarios) == 0 {
		hunt = h.Budget
	}
	return bench.Options{Profile: p, OutDir: f.out, Seed: f.seed, Repeat: repeat, RunCommand: runCommand,
		Command: benchCommand(p, f.seed, repeat, f.out, part) + backendArgs(co, f.be.keyPrefix),
		Cluster: co, KeyPrefix: f.be.keyPrefix, Notef: f.o.notef(cmd), Shard: part, Hunt: hunt}, nil
}

// printSkipped writes one line per scenario and reason to w: with one
// strategy "n/a STRATEGY/SCENARIO: why", with several "n/a SCENARIO for
// A, B, C: why".
func printSkipped(w io.Writer, skipped []verdicts.Pair) {
	type group struct{ scenario, why string }
	var order []group
	strategies := map[group][]string{}
	for _, na := range skipped {
		g := group{na.Scenario, firstClause(na.Reason)}
		if _, ok := strategies[g]; !ok {
			order = append(order, g)
		}
		strategies[g] = append(strategies[g], na.Strategy)
	}
	for _, g := range order {
		if ss := strategies[g]; len(ss) == 1 {
			fmt.Fprintf(w, "n/a %s/%s: %s\n", ss[0], g.scenario, g.why)
		} else {
			fmt.Fprintf(w, "n/a %s for %s: %s\n", g.scenario, strings.Join(ss, ", "), g.why)
		}
	}
}

// printOutcome prints a finished (or stopped) bench's outcome and returns
// the command's error: err (the bench's) when the bench could not finish,
// then the verdict line, the unexpected and the inconclusive runs on
// stdout (--quiet: the verdict line; --json: the summary), and
// errUnexpected when a verdict contradicts the verdict table, else
// errInconclusive when a gated check lacked evidence.
func (f *benchFlags) printOutcome(cmd *cobra.Command, file *results.File, err error) error {
	if err != nil && file != nil && len(file.Runs) > 0 && file.Incomplete == "" && errors.Is(err, outdir.ErrNotWritten) && !f.o.json {
		// Every run finished and was checked: say the verdict
		// before the error.
		fmt.Fprintf(cmd.OutOrStdout(), "%s; not written (see the error)\n", report.OutcomeOf(file, f.out).CountsLine())
	}
	if md := filepath.Join(f.out, results.ReportMarkdown); err != nil && file != nil && file.Incomplete != "" && fileExists(md) {
		// Interrupted or stopped by an error: the runs that
		// finished (maybe none) were written, marked INCOMPLETE.
		if !f.o.quiet {
			fmt.Fprintf(cmd.ErrOrStderr(), "partial results (%s): %s (also index.html)\n", file.Incomplete, md)
		}
		err = &partialError{err: err, report: md}
	}
	if err != nil && (file == nil || !errors.Is(err, bench.ErrOverloaded)) {
		return err
	}
	if err == nil && len(file.Runs) == 0 && file.Shard == nil {
		return fmt.Errorf("%w: nothing ran: every selected pair is n/a here (see the n/a lines above); choose other --strategies, --scenarios or --backend", errs.ErrUsage)
	}
	// An overloaded machine still finished every run: print the
	// summary, then exit 3 with the error.
	w := cmd.OutOrStdout()
	sum := report.OutcomeOf(file, f.out)
	switch {
	case f.o.json:
		if err := printJSON(w, sum); err != nil {
			return err
		}
	case f.o.quiet:
		fmt.Fprintln(w, sum.VerdictLine())
	default:
		fmt.Fprintln(w, sum.VerdictLine())
		for _, u := range sum.UnexpectedRuns {
			fmt.Fprintf(w, "  UNEXPECTED %s/%s seed %d: %s\n    history: %s\n    rerun:   %s\n",
				u.Strategy, u.Scenario, u.Seed, strings.Join(u.Why, "; "), u.History, u.Command)
		}
		for _, u := range sum.InconclusiveRuns {
			fmt.Fprintf(w, "  INCONCLUSIVE %s/%s seed %d: %s\n    history: %s\n    rerun:   %s\n",
				u.Strategy, u.Scenario, u.Seed, strings.Join(u.Why, "; "), u.History, u.Command)
		}
	}
	switch {
	case err != nil:
		return err
	case sum.Unexpected > 0:
		return fmt.Errorf("%w: %d of %d runs", errUnexpected, sum.Unexpected, sum.Runs)
	case sum.Inconclusive > 0:
		return fmt.Errorf("%w: %d of %d runs lacked evidence (see INCONCLUSIVE above)", errInconclusive, sum.Inconclusive, sum.Runs)
	}
	return nil
}

// onlySome narrows a profile to the named strategies and scenarios (none
// named: all of the profile's; scenarios without the cost scenario drop the
// client sweep and the cost runs); a name the profile does not have is a usage
// error naming the valid ones.
func onlySome(p bench.Profile, strategies, scenarios []string) (bench.Profile, error) {
	pick := func(flag string, all, want []string) ([]string, error) {
		if len(want) == 0 {
			return all, nil
		}
		var extra []string // exec: strategies run beside the profile's
		for _, w := range want {
			if flag == "strategies" && adapterclient.IsExec(w) {
				extra = append(extra, w)
			} else if !slices.Contains(all, w) {
				return nil, notInProfile(p.Name, flag, w, all)
			}
		}
		var out []string
		for _, a := range all {
			if slices.Contains(want, a) {
				out = append(out, a)
			}
		}
		return append(out, extra...), nil
	}
	var err error
	if p.Strategies, err = pick("strategies", p.Strategies, strategies); err != nil {
		return p, err
	}
	if p.Scenarios, err = pick("scenarios", p.Scenarios, scenarios); err != nil {
		return p, err
	}
	var sweep []string
	for _, s := range p.SweepStrategies {
		if slices.Contains(p.Strategies, s) {
			sweep = append(sweep, s)
		}
	}
	p.SweepStrategies = sweep
	if len(scenarios) > 0 && !slices.Contains(p.Scenarios, bench.CostScenario) {
		// The client sweep and the cost runs run on the cost scenario: a
		// bench narrowed to other scenarios makes neither.
		p.ClientSweep, p.SweepStrategies, p.CostClients = nil, nil, nil
	}
	return p, nil
}

// notInProfile is the usage error for --strategies or --scenarios (flag)
// naming name, which profile lacks (its names: valid): it names the
// profiles that have it and the flag that selects one, or says that no
// profile does.
func notInProfile(profile, flag, name string, valid []string) error {
	var have []string
	for _, q := range bench.Profiles() {
		names := q.Scenarios
		if flag == "strategies" {
			names = q.Strategies
		}
		if q.Name != profile && slices.Contains(names, name) {
			have = append(have, q.Name)
		}
	}
	if len(have) == 0 {
		return fmt.Errorf("%w: --%s %s: not in profile %s nor in any other (see lockbench list); profile %s has: %s", errs.ErrUsage, flag, name, profile, profile, strings.Join(valid, ", "))
	}
	who := "profile " + have[0] + " has it"
	if len(have) > 1 {
		who = "profiles " + strings.Join(have, " and ") + " have it"
	}
	return fmt.Errorf("%w: --%s %s: not in profile %s; %s: add --profile %s; profile %s has: %s",
		errs.ErrUsage, flag, name, profile, who, have[0], profile, strings.Join(valid, ", "))
}

// firstClause shortens an Unsupported reason to what is missing (the list
// of scenarios that work follows a "; ").
func firstClause(why string) string {
	head, _, _ := strings.Cut(why, "; scenarios that work there")
	return head
}

// partialError is a bench's error after it wrote a partial (INCOMPLETE)
// report; main adds the report's path to the --json error object.
type partialError struct {
	err    error
	report string
}

func (e *partialError) Error() string { return e.err.Error() }
func (e *partialError) Unwrap() error { return e.err }

// fileExists reports whether path is a regular file.
func fileExists(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}
