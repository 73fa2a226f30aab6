package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/lockbench/lockbench/cluster"
	"github.com/lockbench/lockbench/figures"
	"github.com/lockbench/lockbench/internal/errs"
	"github.com/lockbench/lockbench/outdir"
	"github.com/lockbench/lockbench/perf"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/results"
)

func newReportCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "report DIR",
		Short: "Re-render report.md, index.html, bench.txt and the plots from DIR/results.json and its histories",
		Long: `Re-render report.md, index.html, bench.txt (the cost samples in Go's
benchmark format, for benchstat) and the plots of a results folder from its
results.json and histories; each run's cost windows are cut again from its
history. DIR is the folder; its results.json (a file path) is taken as its
folder.`,
		Args: oneArg("DIR"),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := args[0]
			if st, err := os.Stat(dir); err == nil && !st.IsDir() {
				if filepath.Base(dir) != results.FileName {
					folder := filepath.Dir(dir)
					if filepath.Base(folder) == "histories" {
						folder = filepath.Dir(folder) // a history: its results folder
					}
					hint := ""
					if filepath.Ext(dir) == ".jsonl" {
						hint = fmt.Sprintf("; to check a history, lockbench check %s", dir)
					}
					return fmt.Errorf("%w: %s is a file: report takes the directory holding results.json (did you mean %s?)%s", errs.ErrUsage, dir, folder, hint)
				}
				dir = filepath.Dir(dir) // DIR/results.json: its folder
			}
			if perf.In(dir) {
				return fmt.Errorf("%w: %s holds the results of lockbench perf (%s), which are measurements of lockbench itself, not lock verdicts: report renders run and bench results; lockbench perf prints its own tables (rerun it to see them)", errs.ErrUsage, dir, perf.FileName)
			}
			f, err := results.Load(filepath.Join(dir, results.FileName))
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					if _, serr := os.Stat(dir); serr != nil {
						return errs.New(fmt.Sprintf("%v: %s does not exist: give a results folder (the --out of lockbench run or bench) or its results.json", errs.ErrUsage, dir), errs.ErrUsage, err)
					}
					return errs.New(fmt.Sprintf("%v: %s holds no results.json: give a results folder (the --out of lockbench run or bench) or its results.json", errs.ErrUsage, dir), errs.ErrUsage, err)
				}
				return fmt.Errorf("%w: %v", errs.ErrUsage, err)
			}
			if f.Profile == "perf" {
				return fmt.Errorf("%w: %s holds the results of lockbench perf, which are measurements of lockbench itself, not lock verdicts: report renders run and bench results; lockbench perf prints its own tables (rerun it to see them)", errs.ErrUsage, dir)
			}
			if err := outdir.CheckWritable(dir); err != nil {
				return fmt.Errorf("cannot write results folder %s: %v: choose a writable folder (copy it, histories included, and run lockbench report on the copy) (%w)", dir, err, cluster.ErrEnvironment)
			}
			rf, missing, listed := withoutMissingHistories(dir, f)
			if missing > 0 {
				fmt.Fprintf(cmd.ErrOrStderr(), "warning: %d of %d histories listed in %s are missing: their timelines and links are left out of the report (copy the histories folder along with results.json)\n",
					missing, listed, filepath.Join(dir, results.FileName))
			}
			rf, _ = figures.RecomputeWindows(dir, rf) // cost figures from the histories themselves
			if err := figures.WriteBenchText(dir, rf); err != nil {
				return outdir.OutputError(dir, err, "make the folder writable, or copy it (histories included) and run lockbench report on the copy")
			}
			rf, edited := distrustContradictions(rf)
			for _, line := range edited {
				fmt.Fprintf(cmd.ErrOrStderr(), "warning: %s\n", line)
			}
			if err := report.Render(dir, rf); err != nil {
				return outdir.OutputError(dir, err, "move away what is in the way there (such as a file named plots) or make the folder and its plots folder writable, or copy the folder (histories included) and run lockbench report on the copy")
			}
			fmt.Fprintf(cmd.OutOrStdout(), "report: %s\n", filepath.Join(dir, "report.md"))
			return nil
		},
	}
}

// withoutMissingHistories returns f, or, when some of its runs name a
// history that is not in dir, a copy whose runs name none there (the
// report then links no missing file); with how many histories were missing
// and how many f lists.
func withoutMissingHistories(dir string, f *results.File) (rf *results.File, missing, listed int) {
	runs := make([]results.Run, len(f.Runs))
	for i, r := range f.Runs {
		if r.History != "" {
			listed++
			if _, err := os.Stat(filepath.Join(dir, r.History)); err != nil {
				r.History = ""
				missing++
			}
		}
		runs[i] = r
	}
	if missing == 0 {
		return f, 0, listed
	}
	c := *f
	c.Runs = runs
	return &c, missing, listed
}

// distrustContradictions returns f, or, when some run's stored verdicts
// cannot be what lockbench wrote (an edited file or another tool's), a copy
// with those runs corrected and one warning line per such run: a verdict
// value that is none of ok, violated, inconclusive, skipped
// (results.Run.UnknownVerdicts) and a run marked as expected although its
// verdicts contradict its expectations (results.Run.Contradictions) make
// the run unexpected; a run marked unexpected with no unexpected lines, no
// inconclusive lines and nothing contradicting keeps its mark, with a line
// saying the file gives no reason.
func distrustContradictions(f *results.File) (*results.File, []string) {
	var warnings []string
	runs := make([]results.Run, len(f.Runs))
	for i, r := range f.Runs {
		name := fmt.Sprintf("%s/%s seed %d", r.Strategy, r.Scenario, r.Seed)
		unknown, c := r.UnknownVerdicts(), r.Contradictions()
		switch {
		case len(unknown) > 0:
			warnings = append(warnings, fmt.Sprintf("%s has %s in results.json: the file was edited or written by another tool; the report shows the run as unexpected",
				name, strings.Join(unknown, "; ")))
			r.AsExpected = false
			r.Unexpected = append(append([]string(nil), r.Unexpected...), unknown...)
		case r.AsExpected && len(c) > 0:
			warnings = append(warnings, fmt.Sprintf("%s is marked as expected in results.json, but %s: the file was edited or written by another tool; the report shows the run as unexpected",
				name, strings.Join(c, "; ")))
			r.AsExpected = false
			r.Unexpected = append(append([]string(nil), r.Unexpected...), c...)
		case !r.AsExpected && len(r.Unexpected) == 0 && len(r.Inconclusive) == 0 && len(c) == 0:
			warnings = append(warnings, fmt.Sprintf("%s is marked unexpected in results.json without saying why (no unexpected lines, and its verdicts agree with its expectations): the file was edited or written by another tool; the report shows it as unexpected, with no reason",
				name))
			r.Unexpected = []string{"marked unexpected in results.json without a reason (as_expected false, no unexpected lines)"}
		}
		runs[i] = r
	}
	if len(warnings) == 0 {
		return f, nil
	}
	c := *f
	c.Runs = runs
	return &c, warnings
}
