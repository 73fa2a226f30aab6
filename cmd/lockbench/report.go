package main

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/results"
)

func newReportCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "report DIR",
		Short: "Re-render report.md, index.html and the plots from DIR/results.json and its histories",
		Args:  oneArg("DIR"),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := results.Load(filepath.Join(args[0], "results.json"))
			if err != nil {
				return fmt.Errorf("%w: %v", bench.ErrUsage, err)
			}
			if err := bench.Report(args[0], f); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "report: %s\n", filepath.Join(args[0], "report.md"))
			return nil
		},
	}
}
