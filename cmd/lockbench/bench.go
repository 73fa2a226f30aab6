package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/lockbench/lockbench/bench"
)

func newBenchCmd() *cobra.Command {
	var profile, out string
	var verbose bool
	var be backendFlags
	c := &cobra.Command{
		Use:   "bench [--profile ci|full] [--out DIR]",
		Short: "Run a profile's matrix of strategies × scenarios and write the report",
		Long: `Run every (strategy, scenario) pair of a profile against redis-server
processes lockbench starts itself, check each history, and write results.json,
report.md, index.html, the plots and the histories to --out.

Profiles: ci (every pair once, short runs: the CI gate), full (three seeds,
longer runs, a client sweep). Pairs whose faults the backend cannot inject
(--backend docker or external) are skipped and shown n/a. Exit codes: 0 every verdict as expected, 1 an
unexpected verdict, 2 usage error, 3 environment error.`,
		Example: "  lockbench bench --profile ci --out lockbench-out/bench",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, err := bench.LookupProfile(profile)
			if err != nil {
				return err
			}
			co, err := be.options(cmd.Context())
			if err != nil {
				return err
			}
			o := bench.Options{Profile: p, OutDir: out, Command: "lockbench " + strings.Join(os.Args[1:], " "), Cluster: co, KeyPrefix: be.keyPrefix}
			var bar *progressbar.ProgressBar
			if verbose {
				o.Progress = func(i, total int, label string) {
					fmt.Fprintf(cmd.ErrOrStderr(), "[%d/%d] %s\n", i+1, total, label)
				}
			} else if term.IsTerminal(int(os.Stderr.Fd())) {
				o.Progress = func(i, total int, label string) {
					if bar == nil {
						bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(os.Stderr),
							progressbar.OptionSetWidth(30), progressbar.OptionShowCount(), progressbar.OptionClearOnFinish())
					}
					bar.Describe(fmt.Sprintf("%-32s", label))
					bar.Set(i)
				}
			}
			f, err := bench.Bench(cmd.Context(), o)
			if bar != nil {
				bar.Finish()
			}
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			bad := bench.Unexpected(f)
			fmt.Fprintf(w, "%d runs, %d as expected, %d unexpected; report: %s/report.md (also index.html)\n",
				len(f.Runs), len(f.Runs)-len(bad), len(bad), out)
			for _, r := range bad {
				fmt.Fprintf(w, "  UNEXPECTED %s/%s seed %d: %s\n    history: %s/%s\n    rerun:   %s\n",
					r.Strategy, r.Scenario, r.Seed, strings.Join(r.Unexpected, "; "), out, r.History, r.Command)
			}
			if len(bad) > 0 {
				return fmt.Errorf("%w: %d of %d runs", errUnexpected, len(bad), len(f.Runs))
			}
			return nil
		},
	}
	c.Flags().StringVar(&profile, "profile", "ci", "bench profile: ci or full")
	c.Flags().StringVar(&out, "out", "lockbench-out/bench", "results folder")
	c.Flags().BoolVarP(&verbose, "verbose", "v", false, "print one line per run (instead of a progress bar on a terminal)")
	be.add(c.Flags())
	return c
}
