package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/hunt"
	"github.com/lockbench/lockbench/impl/strategies"
	"github.com/lockbench/lockbench/internal/errs"
	"github.com/lockbench/lockbench/workload"
)

// huntFlags are the flags of `lockbench hunt`: a run's workload and
// backend flags, the budget.
type huntFlags struct {
	runFlags
	budget     time.Duration
	primitives []string
	stopAfter  int
	schedules  int
	o          output
}

// Defaults of a hunt's runs: shorter and lighter than run's, since a hunt
// makes hundreds of them on a shared machine.
const (
	huntTTL      = 200 * time.Millisecond
	huntClients  = 8
	huntDuration = 2 * time.Second
)

func newHuntCmd() *cobra.Command {
	f := &huntFlags{}
	c := &cobra.Command{
		Use:   "hunt --strategy NAME [--budget 10m] [--seed N] [--out DIR]",
		Short: "Search fault schedules for surprises and shrink each to a minimal reproduction",
		Long: `Draw fault schedules from every fault primitive that applies to the strategy
(lockbench list shows them under "primitives"), combined and timed by lock
events, run each against the strategy as lockbench run does, and look for a
surprise: a violation of a check the strategy's verdict rows (or, for an
exec: adapter, its claims) say must hold under every fault of the schedule.
A violation they predict (gc-pause breaks every unfenced lock) is counted
by class, not reported. Each surprise is shrunk to a minimal schedule and
workload (fewer faults, shorter windows, earlier, fewer clients and keys, a
shorter run) that still fails the same check in 3 of 5 seeds, written as a
schedule file that lockbench run --schedule replays, with its witness and
timeline. The same --seed draws the same schedules.

Output in --out: hunt.json, report.md, report.html, surprise-N.schedule.json
and surprise-N/ (the reproduction's runs, report and timeline) per surprise,
the runs' histories. Progress on stderr: a status line on a terminal
(schedules run, surprises, time left), only the surprises otherwise.

A surprise that does not reproduce in 3 of 5 seeds is reported as a
one-off (not shrunk) and does not make the exit code 1.

Exit codes: 0 no surprise that reproduces within the budget, 1 a surprise
that reproduced in 3 of 5 seeds (the report says in how many its minimal
schedule did), 2 usage error, 3
environment error, 130 interrupted (the report of what finished is
written).`,
		Example: `  lockbench hunt --strategy token-lua --budget 10m --seed 1 --out hunt-out
  lockbench hunt --strategy exec:'bin/lockbench-mutant --lock reentrant --bug reentrant-retry-counts-twice' --op-timeout 1s --budget 5m`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return strayArgument(cmd, os.Args[1:], args[0])
			}
			return nil
		},
		RunE: f.run,
	}
	fl := c.Flags()
	fl.StringVar(&f.strategy, "strategy", "", "lock strategy (required; see lockbench list)")
	fl.Int64Var(&f.seed, "seed", 1, "seed of the draw and of the runs (schedule i runs with seed+i-1)")
	fl.StringVar(&f.out, "out", "lockbench-out/hunt", "the hunt's folder")
	fl.DurationVar(&f.budget, "budget", hunt.DefaultBudget, "wall-clock budget of the whole hunt, shrinking included")
	fl.IntVar(&f.stopAfter, "stop-after", 0, "end the hunt once this many surprises are shrunk and reproduce (0: search the whole budget)")
	fl.IntVar(&f.schedules, "schedules", 0, "end the hunt after this many schedules (0: search the whole budget)")
	fl.StringSliceVar(&f.primitives, "primitives", nil, "draw only these fault primitives (comma-separated; default: every one that applies to the strategy; see docs/hunt.md)")
	addWorkloadFlags(fl, &f.runFlags)
	for name, v := range map[string]string{"ttl": huntTTL.String(), "clients": fmt.Sprint(huntClients), "duration": huntDuration.String()} {
		fl.Lookup(name).DefValue = v
	}
	f.ttl, f.clients, f.duration = huntTTL, huntClients, huntDuration
	f.be.add(fl)
	libraryFlags(c)
	f.o.addFlags(c, true)
	return c
}

// run is `lockbench hunt`.
func (f *huntFlags) run(cmd *cobra.Command, _ []string) error {
	if err := f.o.resolve(cmd); err != nil {
		return err
	}
	if err := nonEmptyOut(f.out, "lockbench-out/hunt"); err != nil {
		return err
	}
	if f.budget < time.Second {
		return fmt.Errorf("%w: --budget %v: want at least 1s (a hunt needs room for a run)", errs.ErrUsage, f.budget)
	}
	if f.stopAfter < 0 {
		return fmt.Errorf("%w: --stop-after %d: want 0 (search the whole budget) or more", errs.ErrUsage, f.stopAfter)
	}
	if f.schedules < 0 {
		return fmt.Errorf("%w: --schedules %d: want 0 (search the whole budget) or more", errs.ErrUsage, f.schedules)
	}
	if err := bench.CheckSeeds(f.seed, 1); err != nil {
		return err
	}
	f.scenario, f.repeat = "baseline", 1
	spec, err := f.spec(cmd)
	if err != nil {
		return err
	}
	if err := cleanHuntFolder(f.out); err != nil {
		return err
	}
	if err := bench.CheckBackend(cmd.Context(), spec.Cluster, spec.Workload.KeyPrefix, []bench.Spec{spec}); err != nil {
		return err
	}
	progress, done := f.progress(cmd)
	rep, err := hunt.Hunt(cmd.Context(), hunt.Options{Spec: spec, Budget: f.budget, Seed: f.seed, OutDir: f.out,
		Command: commandLine(os.Args[1:]), RunCommand: scheduleCommand, Progress: progress, Primitives: f.primitives, StopAfter: f.stopAfter, MaxSchedules: f.schedules})
	done()
	if rep == nil {
		return err
	}
	switch {
	case f.o.json:
		if perr := printJSON(cmd.OutOrStdout(), rep); perr != nil && err == nil {
			err = perr
		}
	case f.o.quiet:
		fmt.Fprintf(cmd.OutOrStdout(), "hunt: %d surprises in %d schedules\n", len(rep.Surprises), rep.Schedules)
	default:
		hunt.Text(cmd.OutOrStdout(), rep, f.out)
	}
	if err != nil {
		return err
	}
	for _, s := range rep.Surprises {
		if s.Reproduces {
			return fmt.Errorf("%w: hunt %s: %d surprise(s); the first that reproduces: %s must hold but was violated, reproduced in %s seeds by %s", errUnexpected,
				rep.Strategy, len(rep.Surprises), s.Check, s.Tally, filepath.Join(f.out, s.ScheduleFile))
		}
	}
	return nil
}

// progress returns the hunt's progress callback and a function to call
// when it is done: on a terminal a status line rewritten in place
// (schedules run, surprises, time left, what runs now) and each event on
// a line of its own; otherwise the events only, or one line per run with
// --verbose; nothing with --quiet or --json.
func (f *huntFlags) progress(cmd *cobra.Command) (func(hunt.Progress), func()) {
	w := cmd.ErrOrStderr()
	if f.o.quiet || f.o.json {
		return nil, func() {}
	}
	tty := false
	if file, ok := w.(*os.File); ok {
		tty = term.IsTerminal(int(file.Fd()))
	}
	width := 100
	status := func(p hunt.Progress) string {
		s := fmt.Sprintf("hunt: %d schedules, %d runs, %d surprises, %v left: %s", p.Schedules, p.Runs, p.Surprises, p.Left.Round(time.Second), p.Doing)
		if len([]rune(s)) > width {
			s = string([]rune(s)[:width-1]) + "…"
		}
		return s
	}
	shown, last := false, ""
	return func(p hunt.Progress) {
			switch {
			case tty && p.Event != "":
				fmt.Fprintf(w, "\r\033[K%s\n", p.Event)
				fmt.Fprint(w, status(p))
				shown = true
			case tty:
				fmt.Fprintf(w, "\r\033[K%s", status(p))
				shown = true
			case p.Event != "":
				fmt.Fprintln(w, "hunt: "+p.Event)
			case f.o.verbose && p.Doing != last:
				last = p.Doing
				fmt.Fprintln(w, status(p))
			}
		}, func() {
			if shown {
				fmt.Fprint(w, "\r\033[K")
			}
		}
}

// isHuntName reports whether name is one lockbench hunt writes into its folder.
func isHuntName(name string) bool {
	switch name {
	case hunt.ReportJSON, hunt.ReportMarkdown, hunt.ReportHTML, "runs":
		return true
	}
	return strings.HasPrefix(name, "shrink-") || strings.HasPrefix(name, "surprise-")
}

// cleanHuntFolder prepares --out for a hunt: a missing or empty folder is
// fine; one holding an earlier hunt (hunt.json and only what a hunt
// writes) is emptied; anything else is refused (exit 2).
func cleanHuntFolder(out string) error {
	entries, err := os.ReadDir(out)
	if errors.Is(err, os.ErrNotExist) || err == nil && len(entries) == 0 {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%w: --out %s: %v", errs.ErrUsage, out, err)
	}
	var foreign []string
	earlier := false
	for _, e := range entries {
		if e.Name() == hunt.ReportJSON {
			earlier = true
		}
		if !isHuntName(e.Name()) {
			foreign = append(foreign, e.Name())
		}
	}
	if !earlier || len(foreign) > 0 {
		sort.Strings(foreign)
		what := "no earlier hunt (hunt.json)"
		if len(foreign) > 0 {
			what = "files a hunt does not write (" + strings.Join(foreign, ", ") + ")"
		}
		return fmt.Errorf("%w: --out %s holds %s: a hunt would mix its files with them; choose another --out", errs.ErrUsage, out, what)
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(out, e.Name())); err != nil {
			return fmt.Errorf("%w: --out %s: remove the earlier hunt: %v", errs.ErrUsage, out, err)
		}
	}
	return nil
}

// scheduleCommand is the lockbench run command line that replays a run of
// s (its strategy, workload and seed) with the schedule in file instead of
// a scenario.
func scheduleCommand(s bench.Spec, file string) string {
	w := s.Workload
	cmd := fmt.Sprintf("lockbench run --strategy %s --schedule %s --clients %d --keys %d --ttl %v --duration %v --seed %d",
		quote(s.Strategy), quote(file), w.Clients, w.Keys, w.TTL, w.Duration, s.Seed)
	if w.OpTimeout > 0 {
		cmd += fmt.Sprintf(" --op-timeout %v", w.OpTimeout)
	}
	if w.CS.Kind == workload.CSFixed && w.CS.Max == 0 && w.CS.TailShare == 0 && w.CS.Min > 0 {
		cmd += fmt.Sprintf(" --cs-min %v", w.CS.Min)
	}
	if w.Think > 0 {
		cmd += fmt.Sprintf(" --think %v", w.Think)
	}
	if st, err := strategies.Lookup(s.Strategy); err == nil && st.Info().Claims.Reentrant && w.Reentrancy > 1 {
		cmd += fmt.Sprintf(" --reentrancy %d", w.Reentrancy)
	}
	var names []string
	for n := range s.Library {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		cmd += fmt.Sprintf(" --%s=%s", n, quote(s.Library[n]))
	}
	return cmd + backendArgs(s.Cluster, w.KeyPrefix)
}
