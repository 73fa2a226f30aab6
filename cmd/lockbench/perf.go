package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"time"

	"github.com/spf13/cobra"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/internal/errs"
	"github.com/lockbench/lockbench/outdir"
	"github.com/lockbench/lockbench/perf"
	"github.com/lockbench/lockbench/results"
)

func newPerfCmd() *cobra.Command {
	var (
		o       perf.Options
		out     string
		clients []int
		profile string
	)
	c := &cobra.Command{
		Use:   "perf [flags]",
		Short: "Measure lockbench's own cost against redis-benchmark on the same redis-server",
		Long: `Start one redis-server and, for each client count, run redis-benchmark
(SET key value NX PX 30000 on random keys) and lockbench's set-nx-px strategy
(a key per client, no critical-section wait) with and without recording the
history, back to back, --repeat times. Prints both command rates (redis-benchmark:
requests/s it reports; lockbench: Redis commands/s the server served, from INFO
commandstats), their ratio and the recording's cost against the targets in docs/performance.md,
and writes perf.json (every measure, with a loader in package perf) to --out. --sweep adds throughput vs
clients (1..1024) on one key and on a key per client, with the server's CPU
(INFO cpu) beside lockbench's (getrusage).

Exit codes: 0 measured (a missed target is reported, not an error), 2 usage
error, 3 environment error (no redis-server or redis-benchmark), 130 interrupted.`,
		Example: `  lockbench perf
  lockbench perf --sweep --repeat 9
  lockbench perf --clients 50 --requests 500000`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := nonEmptyOut(out, "lockbench-out/perf"); err != nil {
				return err
			}
			if o.Repeat < 1 || o.Requests < 0 {
				return fmt.Errorf("%w: --repeat must be at least 1 and --requests not negative", errs.ErrUsage)
			}
			for _, n := range clients {
				if n < 1 || n > 10000 {
					return fmt.Errorf("%w: --clients %d: want 1..10000", errs.ErrUsage, n)
				}
			}
			if err := checkOutFolder(out, "perf", "perf"); err != nil {
				return err
			}
			// Options and binaries are checked before CheckWritable and
			// ReplaceEarlier, so bad input leaves an earlier run in place.
			o.Clients, o.OutDir = clients, out
			o.Logf = func(f string, a ...any) { fmt.Fprintf(cmd.ErrOrStderr(), f+"\n", a...) }
			if err := o.Validate(); err != nil {
				if errors.Is(err, perf.ErrOptions) {
					return fmt.Errorf("%w: %w", errs.ErrUsage, err)
				}
				return err
			}
			if err := outdir.CheckWritable(out); err != nil {
				return outdir.OutDirError(out, err)
			}
			if profile != "" {
				f, err := os.Create(profile)
				if err != nil {
					return fmt.Errorf("%w: --cpuprofile: %v", errs.ErrUsage, err)
				}
				defer f.Close()
				if err := pprof.StartCPUProfile(f); err != nil {
					return fmt.Errorf("--cpuprofile: %w", err)
				}
				defer pprof.StopCPUProfile()
			}
			if err := outdir.ReplaceEarlier(out, o.Logf); err != nil { // a perf results.json of an earlier lockbench, stale histories
				return err
			}
			if old, err := perf.RemoveEarlier(out); err != nil {
				return outdir.OutDirError(out, err)
			} else if old != nil {
				o.Logf("note: %s held an earlier perf measurement (started %s): its %s and histories were removed", out, old.Started, perf.FileName)
			}
			started := time.Now().UTC().Format(time.RFC3339)
			rep, runErr := perf.Run(cmd.Context(), o)
			if len(rep.Comparisons) == 0 && runErr != nil {
				return runErr
			}
			file := &perf.File{
				Tool: "lockbench " + bench.Version, Command: commandLine(os.Args[1:]), Started: started,
				Finished: time.Now().UTC().Format(time.RFC3339), Host: results.ThisHost(), Redis: rep.Redis,
				Strategy: perf.Strategy, TTLMs: float64(perf.TTL.Milliseconds()), Report: rep,
			}
			if err := perf.Write(out, file); err != nil {
				return outdir.OutputError(out, err, outdir.OutputFix)
			}
			rep.Print(cmd.OutOrStdout())
			fmt.Fprintf(cmd.OutOrStdout(), "results: %s\n", filepath.Join(out, perf.FileName))
			return runErr
		},
	}
	fl := c.Flags()
	fl.IntSliceVar(&clients, "clients", []int{50, 1}, "client counts compared with redis-benchmark")
	fl.IntVar(&o.Requests, "requests", 0, "redis-benchmark -n per client count (default 2000 per client, 20000..200000)")
	fl.IntVar(&o.Repeat, "repeat", 6, "rounds per client count (figures are medians; their 95% intervals need 6 or more)")
	fl.IntVar(&o.CheckerOps, "checker-ops", perf.DefaultCheckerOps, "operations of the generated history lockbench check is timed on (-1: the checker is not measured)")
	fl.IntVar(&o.CheckerRounds, "checker-rounds", 6, "times the generated history is checked")
	fl.BoolVar(&o.Sweep, "sweep", false, "add throughput vs clients 1..1024 on one key and on a key per client")
	fl.DurationVar(&o.SweepDuration, "sweep-duration", time.Second, "length of each sweep point")
	fl.BoolVar(&o.ConnCheck, "conn-check", false, "keep go-redis's per-command connection health check (a recvfrom syscall per command), as bench's runs do")
	fl.BoolVar(&o.Check, "check", true, "check the recorded histories (exclusion, resource) and time the check")
	fl.StringVar(&out, "out", "lockbench-out/perf", "results folder")
	fl.StringVar(&profile, "cpuprofile", "", "write lockbench's CPU profile (go tool pprof) to this file")
	return c
}
