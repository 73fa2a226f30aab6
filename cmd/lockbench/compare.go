package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/lockbench/lockbench/compare"
	"github.com/lockbench/lockbench/internal/errs"
	"github.com/lockbench/lockbench/results"
)

func newCompareCmd() *cobra.Command {
	var maxReg string
	var asJSON bool
	c := &cobra.Command{
		Use:   "compare OLD NEW [--max-regression 10%] [--json]",
		Short: "Compare two benches cell by cell and fail on a regression (CI gate on a saved baseline)",
		Long: `Set the (strategy, scenario) cells of NEW beside those of OLD (each a
results folder or its results.json) and flag:
  new-violation  a check ok in every OLD run is violated in a NEW run
                 (not gated when both expect the check at risk)
  lost-canary    a must-break check violated in every OLD run is not in a NEW run
  new-unexpected a cell as expected in every OLD run is not in a NEW run for
                 another reason (a must-hold check inconclusive or unchecked)
  missing        a cell of OLD has no completed run in NEW
  throughput     the median grants/s fell by more than --max-regression
  p99            the median acquire p99 rose by more than --max-regression
Performance is compared as benchstat compares benchmarks: the samples of a
cell are the 6 equal windows of each of its runs (every repeat's pooled),
each figure is a median with its 95% interval, and the Mann-Whitney U test
(golang.org/x/perf/benchmath, alpha 0.05) says whether OLD and NEW differ:
"~" when they do not. A change beyond --max-regression is gated only when it
is significant, and not when a run of the cell was measured on a busy
machine or outside its strategy's working envelope (the note says why).
Throughput from two machines means nothing: when the hosts differ compare
warns and does not gate performance. For figures of every window side by
side, run benchstat OLD/bench.txt NEW/bench.txt.
It also warns (a warning: line; "warnings" in --json) when OLD and NEW differ
in profile, backend, Redis image, library settings (config.library) or a
--policy/--fencing override: such a comparison is not like-for-like.

Exit codes: 0 no gated finding, 1 a gated finding, 2 an unreadable or
corrupt input (older or newer schema, truncated file) or a bad flag.`,
		Example: `  lockbench compare baseline/ lockbench-out/bench
  lockbench compare old/results.json new/results.json --max-regression 20% --json`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) != 2 {
				return fmt.Errorf("%w: want two arguments, OLD and NEW (usage: lockbench compare OLD NEW)", errs.ErrUsage)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			thr, err := compare.ParseRegression(maxReg)
			if err != nil {
				return fmt.Errorf("%w: %v", errs.ErrUsage, err)
			}
			oldF, oldPath, err := results.LoadPath(args[0])
			if err != nil {
				return fmt.Errorf("%w: OLD: %w", errs.ErrUsage, err)
			}
			newF, newPath, err := results.LoadPath(args[1])
			if err != nil {
				return fmt.Errorf("%w: NEW: %w", errs.ErrUsage, err)
			}
			for _, x := range []struct {
				name string
				f    *results.File
			}{{oldPath, oldF}, {newPath, newF}} {
				if len(x.f.Runs) == 0 {
					why := ""
					if x.f.Incomplete != "" {
						why = " (" + x.f.Incomplete + ")"
					}
					return fmt.Errorf("%w: %s holds no runs%s: nothing to compare; rerun the bench that wrote it", errs.ErrUsage, x.name, why)
				}
			}
			cmp := compare.Compare(oldF, newF, oldPath, newPath, thr)
			w := cmd.OutOrStdout()
			if asJSON {
				b, err := json.MarshalIndent(cmp, "", "  ")
				if err != nil {
					return err
				}
				fmt.Fprintln(w, string(b))
			} else if err := cmp.WriteText(w); err != nil {
				return err
			}
			if cmp.Failed() {
				return fmt.Errorf("%w: compare: %d gated finding(s) between %s and %s", errUnexpected, cmp.Gated, oldPath, newPath)
			}
			return nil
		},
	}
	c.Flags().StringVar(&maxReg, "max-regression", "10%", "largest throughput drop or p99 rise not flagged: a percentage (10%, within 0-100%) or a fraction (0.1)")
	c.Flags().BoolVar(&asJSON, "json", false, "print the comparison as JSON")
	return c
}
