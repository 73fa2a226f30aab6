package main

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/chaos"
	"github.com/lockbench/lockbench/chaos/schedule"
	"github.com/lockbench/lockbench/cluster"
	"github.com/lockbench/lockbench/impl/strategies"
	"github.com/lockbench/lockbench/internal/errs"
	"github.com/lockbench/lockbench/verdicts"
)

func newListCmd() *cobra.Command {
	var matrix, markdown bool
	c := &cobra.Command{
		Use:   "list [--matrix]",
		Short: "List strategies, scenarios, profiles and fault primitives (or the verdict matrix)",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return fmt.Errorf("%w: lockbench list takes no argument, got %q (usage: lockbench list [--matrix | --markdown])", errs.ErrUsage, args[0])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			if matrix && markdown {
				return fmt.Errorf("%w: --matrix and --markdown both print the verdict matrix: choose one (--markdown for a Markdown table)", errs.ErrUsage)
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 2, 4, 2, ' ', 0)
			defer w.Flush()
			if markdown {
				fmt.Fprint(cmd.OutOrStdout(), verdicts.MatrixMarkdown())
				return nil
			}
			if matrix {
				fmt.Fprintln(w, "SCENARIO\tSTRATEGY\tEXPECTED\tEXCLUSION\tRESOURCE\tLIVENESS\tFENCING\tDURING FAULTS\tWHY")
				dash := func(s string) string {
					if s == "" {
						return "-"
					}
					return s
				}
				for _, p := range verdicts.Matrix() {
					fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", p.Scenario, p.Strategy, p.Summary(), p.Exclusion, p.Resource, p.Liveness,
						dash(string(p.Fencing)), dash(string(p.DuringFaults)), p.Reason)
				}
				return nil
			}
			fmt.Fprintln(w, "STRATEGY\tNODES\tCLAIMS\tDEFAULT POLICY\tHOW")
			for _, st := range strategies.All() {
				in := bench.StrategyInfo(st)
				pol := strings.Join(in.Policy, ",")
				if pol == "" {
					pol = "checks nothing"
				}
				nodes := fmt.Sprint(st.Info().Nodes)
				if st.Info().Cluster {
					nodes = cluster.Topology{Kind: cluster.RedisCluster}.String() // a Redis Cluster's slots on 3 primaries
				} else if r := st.Info().Replicas; r > 0 {
					nodes += fmt.Sprintf("+%d replica", r) // a primary with replicas: replicated:R
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", st.Name(), nodes, strings.Join(in.Claims, ","), pol, in.Summary)
			}
			fmt.Fprintln(w, "\nSCENARIO\tKIND\tWHAT")
			for _, s := range chaos.All() {
				fmt.Fprintf(w, "%s\t%s\t%s\n", s.Name, s.Kind, s.Summary)
			}
			fmt.Fprintln(w, "\nPROFILE\tWHAT")
			for _, p := range bench.Profiles() {
				fmt.Fprintf(w, "%s\t%s\n", p.Name, p.Summary)
			}
			// Last: the Makefile's verdicts-sweep reads the scenarios up
			// to the PROFILE section.
			fmt.Fprintln(w, "\nPRIMITIVE\tTARGETS\tWHAT (fault schedules, lockbench hunt: docs/hunt.md)")
			for _, p := range schedule.Primitives() {
				fmt.Fprintf(w, "%s\t%s\t%s\n", p.Name, strings.Join(p.Targets, ","), p.Summary)
			}
			return nil
		},
	}
	c.Flags().BoolVar(&matrix, "matrix", false, "print the verdict matrix: what each (strategy, scenario) pair must show, and why")
	c.Flags().BoolVar(&markdown, "markdown", false, "print the verdict matrix as a Markdown table (as in docs/verdicts.md)")
	return c
}
