package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/results"
)

func newReportCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "report DIR",
		Short: "Re-render report.md, index.html and the plots from DIR/results.json and its histories",
		Long: `Re-render report.md, index.html and the plots of a results folder from
its results.json and histories. DIR is the folder; its results.json (a file
path) is taken as its folder.`,
		Args: oneArg("DIR"),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := args[0]
			if st, err := os.Stat(dir); err == nil && !st.IsDir() {
				if filepath.Base(dir) != results.FileName {
					return fmt.Errorf("%w: %s is a file: report takes the directory holding results.json (did you mean %s?)", bench.ErrUsage, dir, filepath.Dir(dir))
				}
				dir = filepath.Dir(dir) // DIR/results.json: its folder
			}
			f, err := results.Load(filepath.Join(dir, results.FileName))
			if err != nil {
				return fmt.Errorf("%w: %v", bench.ErrUsage, err)
			}
			if err := bench.Report(dir, f); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "report: %s\n", filepath.Join(dir, "report.md"))
			return nil
		},
	}
}
