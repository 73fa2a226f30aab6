package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/hunt"
	"github.com/lockbench/lockbench/internal/errs"
	"github.com/lockbench/lockbench/merge"
	"github.com/lockbench/lockbench/outdir"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/shard"
)

func newMergeCmd() *cobra.Command {
	f := benchFlags{}
	c := &cobra.Command{
		Use:   "merge DIR... [--out DIR]",
		Short: "Join the results folders of a sharded bench (bench --shard I/N) into one results folder, report and gate",
		Long: `Join the results folders of every part of one bench split with
lockbench bench --shard I/N (each part run by its own CI job) into one
results folder: results.json with the runs in the order one unsharded bench
runs them, bench.txt, the plots, report.md and index.html, the histories of
every part and the hunt of the part that ran it. The report reads as one
bench's, with each part's host and times under "About this run"; it warns
when parts ran on different kinds of machine.

Refused (exit 2, naming the folder and the field): a folder that is not a
part of a sharded bench, a part of another profile, seed, repeat, commit,
config or shard count, a part given twice, a missing part, an incomplete
(interrupted) part.

Exit codes as lockbench bench: 0 every verdict as expected, 1 an
unexpected verdict (or the profile's hunt reproduced a surprise), 2 usage
error, 3 environment error (a run's verdict taken on an overloaded
machine; results not writable), 4 inconclusive.`,
		Example: "  lockbench merge shard-1 shard-2 shard-3 shard-4 --out lockbench-out/bench",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return fmt.Errorf("%w: merge needs the results folders of the parts (lockbench merge DIR... --out DIR)", errs.ErrUsage)
			}
			return nil
		},
		RunE: f.merge,
	}
	c.Flags().StringVar(&f.out, "out", "lockbench-out/bench", "results folder of the merged bench")
	f.o.addFlags(c, false)
	return c
}

// merge is the merge command: it loads every part (results.Load), joins
// them (results.MergeShards), writes the merged folder (merge.WriteMerged
// and the hunt folder of the part that ran the hunt) and prints the
// outcome as bench does (printOutcome), with the hunt's gate.
func (f *benchFlags) merge(cmd *cobra.Command, dirs []string) error {
	if err := f.o.resolve(cmd); err != nil {
		return err
	}
	if err := nonEmptyOut(f.out, "lockbench-out/bench"); err != nil {
		return err
	}
	out, err := filepath.Abs(f.out)
	if err != nil {
		return fmt.Errorf("%w: --out %s: %v", errs.ErrUsage, f.out, err)
	}
	parts := make([]*results.File, len(dirs))
	for i, dir := range dirs {
		if abs, err := filepath.Abs(dir); err == nil && abs == out {
			return fmt.Errorf("%w: --out %s is also a part given to merge: choose another --out", errs.ErrUsage, f.out)
		}
		p, err := results.Load(filepath.Join(dir, results.FileName))
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%w: merge: %s holds no results.json: give the --out folder of each lockbench bench --shard I/N", errs.ErrUsage, dir)
		}
		if err != nil {
			return fmt.Errorf("%w: merge: %v", errs.ErrUsage, err)
		}
		parts[i] = p
	}
	var first *results.File
	for _, p := range parts {
		if p.Shard != nil && (first == nil || p.Shard.Index < first.Shard.Index) {
			first = p
		}
	}
	command := ""
	if first != nil {
		command = mergedCommand(first.Command, shard.Shard{Index: first.Shard.Index, Count: first.Shard.Count}, f.out)
	}
	merged, err := results.MergeShards(parts, dirs, command)
	if err != nil {
		return err
	}
	if err := checkOutFolder(f.out, "", "merge"); err != nil {
		return err
	}
	if err := outdir.ReplaceEarlier(f.out, f.o.notef(cmd)); err != nil {
		return err
	}
	huntOut := filepath.Join(f.out, "hunt")
	if err := cleanHuntFolder(huntOut); err != nil {
		return err
	}
	if err := os.MkdirAll(f.out, 0o755); err != nil {
		return outdir.OutDirError(f.out, err)
	}
	var huntRep *hunt.Report
	for i, p := range parts {
		src := filepath.Join(dirs[i], "hunt")
		if !p.Shard.Hunt || !fileExists(filepath.Join(src, hunt.ReportJSON)) {
			continue
		}
		if err := merge.CopyTree(src, huntOut); err != nil {
			return outdir.OutputError(f.out, err, outdir.OutputFix)
		}
		if huntRep, err = hunt.LoadReport(filepath.Join(huntOut, hunt.ReportJSON)); err != nil {
			return fmt.Errorf("%w: merge: %s: %v", errs.ErrUsage, src, err)
		}
	}
	werr := merge.WriteMerged(f.out, dirs, merged)
	if werr == nil {
		werr = overloadedError(merged)
	}
	err = f.printOutcome(cmd, merged, werr)
	if huntRep != nil && huntRep.Reproduced() && (err == nil || errors.Is(err, errInconclusive)) {
		err = fmt.Errorf("%w: the profile's hunt on %s: a surprise reproduced (%s)", errUnexpected, huntRep.Strategy, filepath.Join(huntOut, hunt.ReportMarkdown))
	}
	return err
}

// mergedCommand is the command line of the whole bench a part's command
// (with --shard sh and its own --out) stands for: without --shard, with
// --out out.
func mergedCommand(part string, sh shard.Shard, out string) string {
	c := strings.Replace(part, " --shard "+sh.String(), "", 1)
	if i := strings.Index(c, " --out "); i >= 0 {
		rest := c[i+len(" --out "):]
		end := strings.Index(rest, " --")
		if end < 0 {
			end = len(rest)
		}
		c = c[:i] + " --out " + quote(out) + rest[end:]
	}
	return c
}

// overloadedError is the error a bench returns when a run's unexpected
// verdict was taken on an overloaded machine (bench.ErrOverloaded, exit
// 3), found again in a merged file: a run not as expected with an Error.
func overloadedError(f *results.File) error {
	n, first := 0, ""
	for _, r := range f.Runs {
		if r.Error != "" && !r.AsExpected {
			if n == 0 {
				first = fmt.Sprintf("%s/%s seed %d: %s", r.Strategy, r.Scenario, r.Seed, r.Error)
			}
			n++
		}
	}
	if n == 0 {
		return nil
	}
	return fmt.Errorf("%d runs with an unexpected verdict on an overloaded machine (results and report written): %w: %s", n, bench.ErrOverloaded, first)
}
