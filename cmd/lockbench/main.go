// Command lockbench runs Redis lock strategies under concurrent workloads and
// faults, checks the recorded histories with porcupine and writes a report.
//
// Exit codes: 0 every verdict as expected; 1 an unexpected verdict (a
// must-hold check violated or inconclusive, or a must-break canary not
// found); 2 usage error (unknown name, impossible flag, corrupt input file);
// 3 environment error (no redis-server, port in use, clock shim missing);
// 130 interrupted (Ctrl-C). Every redis-server lockbench started is stopped
// before it exits.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/cluster"
	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/internal/redislog"
	"github.com/lockbench/lockbench/results"
)

// Exit codes.
const (
	exitOK          = 0
	exitUnexpected  = 1
	exitUsage       = 2
	exitEnvironment = 3
	exitInterrupted = 130
)

// errUnexpected marks a finished command whose verdicts contradict the verdict table.
var errUnexpected = errors.New("unexpected verdict")

func main() {
	redislog.Quiet()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root := newRoot()
	err := root.ExecuteContext(ctx)
	if err != nil && ctx.Err() != nil && !errors.Is(err, context.Canceled) {
		// Interrupted while a library reported its own error (e.g. a Docker
		// call cut short): the cause is the interrupt, exit 130.
		err = fmt.Errorf("%w (%v)", context.Canceled, err)
	}
	stop()
	os.Exit(exitCode(err))
}

func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:   "lockbench",
		Short: "Benchmark and correctness harness for Redis distributed locks",
		Long: `lockbench runs Redis lock strategies under concurrent workloads against real
redis-server processes, injects faults, records every operation to a history,
checks it with porcupine for mutual-exclusion violations and lost updates, and
writes a report with plots.

Exit codes: 0 all verdicts as expected, 1 an unexpected verdict, 2 usage error,
3 environment error (no redis-server, port in use), 130 interrupted.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return fmt.Errorf("%w: %v (see %s --help)", bench.ErrUsage, err, c.CommandPath())
	})
	root.AddCommand(newRunCmd(), newBenchCmd(), newCheckCmd(), newListCmd(), newReportCmd(), newCompareCmd(), newPerfCmd())
	return root
}

// exitCode maps an error to the documented exit code and prints it.
func exitCode(err error) int {
	if err == nil {
		return exitOK
	}
	code := exitUsage
	switch {
	case errors.Is(err, errUnexpected):
		code = exitUnexpected
	case errors.Is(err, context.Canceled):
		code = exitInterrupted
		err = errors.New("interrupted: every redis-server (and container) lockbench started was stopped")
	case errors.Is(err, cluster.ErrEnvironment):
		code = exitEnvironment
	case errors.Is(err, bench.ErrUsage), errors.Is(err, history.ErrCorrupt), errors.Is(err, results.ErrCorrupt):
		code = exitUsage
	}
	fmt.Fprintln(os.Stderr, "lockbench:", err)
	return code
}
