package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/internal/errs"
	"github.com/lockbench/lockbench/results"
)

func newBenchCmd() *cobra.Command {
	var profile, out string
	var strategies, scenarios []string
	var o output
	var be backendFlags
	var seed int64
	var repeat int
	c := &cobra.Command{
		Use:   "bench [--profile ci|full] [--seed N] [--repeat N] [--out DIR]",
		Short: "Run a profile's matrix of strategies × scenarios and write the report",
		Long: `Run every (strategy, scenario) pair of a profile against Redis servers that
lockbench starts and stops itself (--backend process: redis-server processes;
--backend docker: containers) or an existing deployment (--backend external
--redis-addrs), check each history, and write results.json, report.md,
index.html, the plots and the histories to --out.

Profiles: ci (every pair once, short runs: the CI gate), full (three seeds,
longer runs, a client sweep). --strategies and --scenarios narrow a profile.
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

Exit codes: 0 every verdict as expected, 1 an unexpected verdict, 2 usage
error, 3 environment error (also a harness too overloaded to trust: a
client stalled inside a hold by more than TTL/2 with no fault to explain
it), 130 interrupted (the runs already finished are written).`,
		Example: "  lockbench bench --profile ci --out lockbench-out/bench",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.resolve(cmd); err != nil {
				return err
			}
			if err := nonEmptyOut(out, "lockbench-out/bench"); err != nil {
				return err
			}
			for _, x := range []struct {
				name  string
				empty bool
			}{{"strategies", len(strategies) == 0}, {"scenarios", len(scenarios) == 0}} {
				if x.empty && cmd.Flags().Changed(x.name) {
					return fmt.Errorf("%w: --%s is empty: name at least one (see lockbench list), or leave the flag out to run all of the profile's", errs.ErrUsage, x.name)
				}
			}
			p, err := bench.LookupProfile(profile)
			if err != nil {
				return err
			}
			if p, err = onlySome(p, strategies, scenarios); err != nil {
				return err
			}
			co, note, err := be.options(cmd.Context())
			if err != nil {
				return err
			}
			if note != "" && !o.quiet {
				fmt.Fprintf(cmd.ErrOrStderr(), "note: %s\n", note)
			}
			if len(strategies) > 0 {
				// Named strategies must run; the default set marks the
				// ones that cannot n/a (bench.Unsupported).
				for _, st := range p.Strategies {
					if err := bench.CheckServers(co, st, "", "--strategies that need fewer"); err != nil {
						return err
					}
				}
			}
			if repeat < 0 {
				return fmt.Errorf("%w: --repeat %d: want a repeat ≥ 1 (0: the profile's)", errs.ErrUsage, repeat)
			}
			if repeat == 0 {
				repeat = max(p.Seeds, 1)
			}
			if err := bench.CheckSeeds(seed, repeat); err != nil {
				return err
			}
			if err := checkOutFolder(out, "", "bench"); err != nil {
				return err
			}
			if err := bench.CheckWritable(out); err != nil {
				return bench.OutDirError(out, err)
			}
			opts := bench.Options{Profile: p, OutDir: out, Seed: seed, Repeat: repeat, Command: bench.BenchCommand(p, seed, repeat, out) + bench.BackendArgs(co, be.keyPrefix),
				Cluster: co, KeyPrefix: be.keyPrefix, Notef: o.notef(cmd)}
			skipped := bench.SkippedPairs(p, co)
			if !o.json && !o.quiet {
				// One line per scenario and reason: with one strategy
				// "n/a STRATEGY/SCENARIO: why", with several "n/a SCENARIO
				// for A, B, C: why".
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
						fmt.Fprintf(cmd.ErrOrStderr(), "n/a %s/%s: %s\n", ss[0], g.scenario, g.why)
					} else {
						fmt.Fprintf(cmd.ErrOrStderr(), "n/a %s for %s: %s\n", g.scenario, strings.Join(ss, ", "), g.why)
					}
				}
			}
			if err := bench.CheckScenarios(p, co, scenarios, skipped); err != nil {
				return err
			}
			var done func()
			opts.Progress, done = o.progress(cmd.ErrOrStderr())
			f, err := bench.Bench(cmd.Context(), opts)
			done()
			if err != nil && f != nil && len(f.Runs) > 0 && f.Incomplete == "" && errors.Is(err, bench.ErrNotWritten) && !o.json {
				// Every run finished and was checked: say the verdict
				// before the error.
				fmt.Fprintf(cmd.OutOrStdout(), "%s; not written (see the error)\n", bench.OutcomeOf(f, out).CountsLine())
			}
			if md := filepath.Join(out, results.ReportMarkdown); err != nil && f != nil && f.Incomplete != "" && fileExists(md) {
				// Interrupted or stopped by an error: the runs that
				// finished (maybe none) were written, marked INCOMPLETE.
				if !o.quiet {
					fmt.Fprintf(cmd.ErrOrStderr(), "partial results (%s): %s (also index.html)\n", f.Incomplete, md)
				}
				err = &partialError{err: err, report: md}
			}
			if err != nil && (f == nil || !errors.Is(err, bench.ErrOverloaded)) {
				return err
			}
			if err == nil && len(f.Runs) == 0 {
				return fmt.Errorf("%w: nothing ran: every selected pair is n/a here (see the n/a lines above); choose other --strategies, --scenarios or --backend", errs.ErrUsage)
			}
			// An overloaded machine still finished every run: print the
			// summary, then exit 3 with the error.
			w := cmd.OutOrStdout()
			sum := bench.OutcomeOf(f, out)
			switch {
			case o.json:
				if err := printJSON(w, sum); err != nil {
					return err
				}
			case o.quiet:
				fmt.Fprintln(w, sum.VerdictLine())
			default:
				fmt.Fprintln(w, sum.VerdictLine())
				for _, u := range sum.UnexpectedRuns {
					fmt.Fprintf(w, "  UNEXPECTED %s/%s seed %d: %s\n    history: %s\n    rerun:   %s\n",
						u.Strategy, u.Scenario, u.Seed, strings.Join(u.Why, "; "), u.History, u.Command)
				}
				for _, warn := range sum.Warnings {
					fmt.Fprintf(w, "  warning %s\n", warn)
				}
			}
			if err != nil {
				return err
			}
			if !sum.OK {
				return fmt.Errorf("%w: %d of %d runs", errUnexpected, sum.Unexpected, sum.Runs)
			}
			return nil
		},
	}
	c.Flags().StringVar(&profile, "profile", "ci", "bench profile: ci or full")
	c.Flags().StringVar(&out, "out", "lockbench-out/bench", "results folder")
	c.Flags().Int64Var(&seed, "seed", 1, "base seed: repeat i (from 0) of each cell runs seed+i")
	c.Flags().IntVar(&repeat, "repeat", 0, "runs per (strategy, scenario) cell; the report shows the median and min–max (default: the profile's, ci 1, full 3)")
	c.Flags().StringSliceVar(&strategies, "strategies", nil, "run only these strategies of the profile (comma-separated; see lockbench list)")
	c.Flags().StringSliceVar(&scenarios, "scenarios", nil, "run only these scenarios of the profile (comma-separated; see lockbench list)")
	o.addFlags(c, true)
	be.add(c.Flags())
	return c
}

// onlySome narrows a profile to the named strategies and scenarios (none
// named: all of the profile's); a name the profile does not have is a usage
// error naming the valid ones.
func onlySome(p bench.Profile, strategies, scenarios []string) (bench.Profile, error) {
	pick := func(flag string, all, want []string) ([]string, error) {
		if len(want) == 0 {
			return all, nil
		}
		for _, w := range want {
			if !slices.Contains(all, w) {
				return nil, fmt.Errorf("%w: --%s %s: not in profile %s (valid: %s)", errs.ErrUsage, flag, w, p.Name, strings.Join(all, ", "))
			}
		}
		var out []string
		for _, a := range all {
			if slices.Contains(want, a) {
				out = append(out, a)
			}
		}
		return out, nil
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
	return p, nil
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
