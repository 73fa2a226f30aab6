package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/lockbench/lockbench/checker"
	"github.com/lockbench/lockbench/checker/crosshost"
	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/internal/errs"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/validate"
	"github.com/lockbench/lockbench/verdicts"
)

// oneArg requires exactly one positional argument, named in the error.
func oneArg(name string) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) != 1 {
			return fmt.Errorf("%w: want one argument, %s (usage: lockbench %s %s)", errs.ErrUsage, name, c.Name(), name)
		}
		if args[0] == "" {
			return fmt.Errorf("%w: %s must not be empty (usage: lockbench %s %s)", errs.ErrUsage, name, c.Name(), name)
		}
		return nil
	}
}

func newCheckCmd() *cobra.Command {
	var timeout time.Duration
	var asJSON bool
	c := &cobra.Command{
		Use:   "check HISTORY.jsonl [HISTORY.jsonl...]",
		Short: "Check a saved history offline and print its verdict",
		Long: `Check a saved history file (JSON Lines: a header line, then one operation
per line; the format is in docs/history-format.md) with the same checkers as a run, and
print the verdict of each check beside the verdict table's expectation for the
history's (strategy, scenario). On a violation porcupine's HTML visualisation
is written next to the file.

A check that found no violation on too little evidence (too few holds or
chances to overlap, most acquire outcomes unknown, no fault landed) is
inconclusive, with what is missing and the flag of lockbench run that
supplies it; a strategy that granted (almost) nothing gets a liveness
finding with its cause.

Exit codes: 0 as expected, 1 unexpected, 2 unreadable or corrupt file (the
error names the line), 4 inconclusive (nothing unexpected, but a gated
check lacked evidence; 1 wins over 4).

Several histories: the histories one run's client hosts wrote against one
deployment (--backend external --shared-keys), each with its clock measured
against the server before and after the run. They are checked for overlaps
across hosts: each host's operations on the server's timeline, each hold
shrunk by its host's clock uncertainty, so that only an overlap the clocks
prove is reported; the uncertainty is named against the TTL (too wide:
inconclusive). An overlap where exclusion must hold from hosts one of
which stalled a client inside a hold by more than TTL/2 (its machine ran
the harness late) is inconclusive too, as a run judges its own. Each
host's wall clock against the server's is printed. docs/design.md
(several client hosts) and docs/history-format.md#several-client-hosts
have the rules.`,
		Example: "  lockbench check lockbench-out/bench/histories/token-lua-gc-pause-1.jsonl",
		Args: func(c *cobra.Command, args []string) error {
			if len(args) > 1 {
				return nil // several hosts' histories: crossHost
			}
			return oneArg("HISTORY.jsonl")(c, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return crossHost(cmd, args, asJSON)
			}
			path := args[0]
			h, ops, err := loadHistory(path)
			if err != nil {
				return err
			}
			vis := strings.TrimSuffix(path, filepath.Ext(path)) + ".html"
			r, rep, exp, err := validate.CheckHistory(path, h, ops, checker.Options{Timeout: timeout, VisualizationPath: vis})
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if h.Interrupted && !asJSON {
				fmt.Fprintf(cmd.ErrOrStderr(), "note: %s is the history of a run interrupted (Ctrl-C or SIGTERM) before its planned end: it is whole up to then, so the verdict covers a shorter run than the one asked for (no liveness probe after the workload)\n", path)
			}
			if asJSON {
				b, _ := json.MarshalIndent(r, "", "  ")
				fmt.Fprintln(w, string(b))
			} else {
				fmt.Fprintf(w, "%s: %s/%s seed %d, %d operations; expected %s (%s)\n", path, h.Strategy, h.Scenario, h.Seed, len(ops), exp.Summary(), exp.Reason)
				for _, x := range []struct {
					name   string
					status checker.Status
					r      checker.Result
				}{{"exclusion", r.Verdict.Exclusion, rep.Exclusion}, {"resource", r.Verdict.Resource, rep.Resource},
					{"fencing", r.Verdict.Fencing, rep.Fencing}, {"reentrancy", r.Verdict.Reentrancy, rep.Reentrancy}, {"liveness", r.Verdict.Liveness, rep.Liveness},
					{"orphans", r.Verdict.Orphans, rep.Orphans}, {"lost", r.Verdict.Lost, rep.Lost}, {"extends", r.Verdict.Extends, rep.Extends}, {"reasons", r.Verdict.Reasons, rep.Reasons}} {
					fmt.Fprintf(w, "  %-10s %-12s %s\n", x.name, x.status, x.r.Message)
					if m, ok := r.Missing[x.name]; ok {
						fmt.Fprintf(w, "               inconclusive: %s\n", m)
					}
					for _, d := range x.r.Details {
						fmt.Fprintf(w, "               %s\n", d)
					}
				}
				if m, ok := r.Missing["availability"]; ok {
					fmt.Fprintf(w, "  %-10s %-12s %s\n", "availability", "inconclusive", m)
				}
				fmt.Fprintf(w, "  evidence   %s\n", rep.Evidence)
				if r.LivenessFinding != "" {
					fmt.Fprintf(w, "  liveness finding: %s\n", r.LivenessFinding)
				}
				if rep.Visualization != "" {
					fmt.Fprintf(w, "  porcupine visualisation: %s\n", rep.Visualization)
				}
			}
			return verdictError([]results.Run{r})
		},
	}
	c.Flags().DurationVar(&timeout, "timeout", 10*time.Second, "porcupine time limit per check (then inconclusive)")
	c.PreRunE = func(*cobra.Command, []string) error {
		if err := checkTimeoutError("--timeout", timeout); err != nil {
			return err
		}
		return nil
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print the verdict in the shape of a results.json run object, with what the history holds (verdicts, checks, counts, latencies, liveness, faults); what only the run knew (the command, critical-section and retry settings, topology, Redis command counts) is left empty")
	return c
}

// loadHistory loads the history at path; errors wrap errs.ErrUsage and
// say whether the file is missing, cut short or damaged, with the fix.
func loadHistory(path string) (history.Header, []history.Operation, error) {
	h, ops, err := history.Load(path)
	if err != nil {
		if errors.Is(err, history.ErrCorrupt) && !strings.Contains(err.Error(), "results.json") {
			return h, nil, fmt.Errorf("%w: %s: %v: not a whole history (cut short or damaged?): if lockbench wrote it, rerun the run that wrote it (its command is in the results.json of its results folder); if another tool did, docs/history-format.md has the format", errs.ErrUsage, path, err)
		}
		if errors.Is(err, history.ErrCorrupt) {
			return h, nil, fmt.Errorf("%w: %s: %v", errs.ErrUsage, path, err)
		}
		if errors.Is(err, fs.ErrNotExist) {
			// The path once, not also in the open error's text.
			return h, nil, errs.New(fmt.Sprintf("%v: %s does not exist: give a history file (a results folder's histories/STRATEGY-SCENARIO-SEED.jsonl)", errs.ErrUsage, path), errs.ErrUsage, err)
		}
		return h, nil, fmt.Errorf("%w: %v", errs.ErrUsage, err)
	}
	return h, ops, nil
}

// crossHost is lockbench check with several histories: those of one run's
// client hosts against one deployment (--backend external --shared-keys),
// each with its clock measured against the server. It prints the
// cross-host exclusion check (crosshost.Check: each host's operations on
// the server's timeline, widened by its clock uncertainty, so an overlap is
// reported only when the clocks prove it) and returns the gate: errUnexpected when it
// contradicts the run's expected exclusion (must hold: an overlap; must
// break: none found), errInconclusive when it lacked evidence for a gated
// expectation or when an overlap where exclusion must hold came from a
// run whose harness stalled a client inside a hold by more than TTL/2
// (CrossHostResult.Stalled: as a run judges its own). Each host's own
// checks are lockbench check of its file.
func crossHost(cmd *cobra.Command, paths []string, asJSON bool) error {
	var hosts []crosshost.History
	for _, p := range paths {
		h, ops, err := loadHistory(p)
		if err != nil {
			return err
		}
		hosts = append(hosts, crosshost.History{Name: p, Header: h, Ops: ops})
	}
	res, err := crosshost.Check(hosts)
	if err != nil {
		return fmt.Errorf("%w: %v", errs.ErrUsage, err)
	}
	h := hosts[0].Header
	exp := verdicts.ForHeader(h)
	w := cmd.OutOrStdout()
	if asJSON {
		b, _ := json.MarshalIndent(res, "", "  ")
		fmt.Fprintln(w, string(b))
	} else {
		fmt.Fprintf(w, "%d hosts: %s/%s; exclusion across hosts expected %s (%s)\n", len(hosts), h.Strategy, h.Scenario, exp.Exclusion, exp.Reason)
		for _, c := range res.Hosts {
			drift := fmt.Sprintf("drift %v", time.Duration(c.DriftNs))
			if c.NoAfter {
				drift = "drift not measured (no clock in the end line)"
			}
			fmt.Fprintf(w, "  host %s: offset %d ns, uncertainty ±%v, %s%s\n", c.Name, c.OffsetNs, time.Duration(c.UncertaintyNs), drift, wallNote(c))
		}
		fmt.Fprintf(w, "  cross-host %-12s %s\n", res.Status, res.Message)
		if res.Stalled != "" && res.Total > 0 {
			fmt.Fprintf(w, "  note: %s\n", res.Stalled)
		}
		for _, o := range res.Overlaps[:min(len(res.Overlaps), 5)] {
			fmt.Fprintf(w, "    key %s: %s client %d hold %d and %s client %d hold %d, %v on the server's clock\n", o.Key, o.HostA, o.ClientA, o.HoldA, o.HostB, o.ClientB, o.HoldB, time.Duration(o.OverlapLenNs))
		}
	}
	switch {
	case exp.Exclusion == verdicts.Hold && res.Status == checker.Violated && res.Stalled != "":
		return fmt.Errorf("%w: exclusion must hold across hosts, and %d overlaps were proven, but %s", errInconclusive, res.Total, res.Stalled)
	case exp.Exclusion == verdicts.Hold && res.Status == checker.Violated:
		return fmt.Errorf("%w: exclusion must hold across hosts: %s", errUnexpected, res.Message)
	case exp.Exclusion == verdicts.Break && res.Status == checker.OK:
		return fmt.Errorf("%w: exclusion must break across hosts (a canary), none found: %s", errUnexpected, res.Message)
	case exp.Exclusion != verdicts.AtRisk && res.Status == checker.Inconclusive:
		return fmt.Errorf("%w: %s", errInconclusive, res.Why)
	}
	return nil
}

// wallNote says how far a host's wall clock ran ahead of the server's
// (crosshost.Clock.WallAheadNs) and the skew injected for testing, e.g.
// "; wall clock 50.1ms ahead of the server's (injected --clock-skew
// 50ms)"; "" when its history has no wall-clock start.
func wallNote(c crosshost.Clock) string {
	if !c.WallKnown {
		return ""
	}
	d, how := time.Duration(c.WallAheadNs), "ahead of"
	if d < 0 {
		d, how = -d, "behind"
	}
	note := fmt.Sprintf("; wall clock %v %s the server's", d.Round(10*time.Microsecond), how)
	if c.InjectedSkewNs != 0 {
		note += fmt.Sprintf(" (injected --clock-skew %v)", time.Duration(c.InjectedSkewNs))
	}
	return note
}
