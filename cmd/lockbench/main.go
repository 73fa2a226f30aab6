// Command lockbench runs Redis lock strategies under concurrent workloads and
// faults, checks the recorded histories with porcupine and writes a report.
//
// Exit codes: 0 every verdict as expected; 1 an unexpected verdict (a
// must-hold check violated, or a must-break canary not found on enough
// evidence); 2 usage error (unknown name, impossible flag, corrupt input
// file); 3 environment error (no redis-server, port in use, clock shim
// missing); 4 inconclusive (no verdict unexpected, but a check the verdict
// table gates lacked the evidence to confirm it: too few holds or chances
// to overlap, most outcomes unknown, no fault landed; 1 wins over 4);
// 130 interrupted (Ctrl-C or SIGTERM). Every redis-server lockbench started is stopped
// before it exits.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/cluster"
	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/internal/errs"
	"github.com/lockbench/lockbench/internal/redislog"
	"github.com/lockbench/lockbench/outdir"
	"github.com/lockbench/lockbench/perf"
	"github.com/lockbench/lockbench/results"
)

// Exit codes.
const (
	exitOK          = 0
	exitUnexpected  = 1
	exitUsage       = 2
	exitEnvironment = 3
	// exitInconclusive: nothing contradicted the verdict table, but a
	// gated check lacked evidence (results.Run.Outcome "inconclusive").
	// An unexpected verdict in the same command wins (exit 1).
	exitInconclusive = 4
	exitInterrupted  = 130
)

// errLate marks an interrupt that arrived after the command's work: its
// results were computed and may have been written.
var errLate = errors.New("the signal came after the workload had ended, so its checks finished and the results were written as usual (run, bench: to --out)")

// afterSignal is the outcome of a command that returned err once ctx (the
// signal context) may have been cancelled: unchanged without a signal;
// else it wraps context.Canceled (exit 130), whether the command failed
// for it, failed with another error (a library's own error for a call cut
// short) or finished anyway (a signal during the checks or the report,
// which do not stop for it: errLate).
func afterSignal(ctx context.Context, err error) error {
	switch {
	case ctx.Err() == nil || errors.Is(err, context.Canceled):
		return err
	case err == nil || errors.Is(err, errUnexpected) || errors.Is(err, errInconclusive):
		return fmt.Errorf("%w: %w", context.Canceled, errLate)
	}
	return fmt.Errorf("%w (%w)", context.Canceled, err)
}

// errUnexpected marks a finished command whose verdicts contradict the verdict table.
var errUnexpected = errors.New("unexpected verdict")

// errInconclusive marks a finished command none of whose verdicts
// contradict the verdict table but some gated check lacked evidence.
var errInconclusive = errors.New("inconclusive")

// verdictError is the error of a finished command over runs: errUnexpected
// naming the first unexpected run and what contradicted it when there is
// one, else errInconclusive naming the first inconclusive run and its
// first gated check that lacked evidence, else nil.
func verdictError(runs []results.Run) error {
	for _, r := range runs {
		if r.Outcome() == results.OutcomeUnexpected {
			return fmt.Errorf("%w: %s/%s seed %d: %s", errUnexpected, r.Strategy, r.Scenario, r.Seed, strings.Join(r.Unexpected, "; "))
		}
	}
	for _, r := range runs {
		if r.Outcome() == results.OutcomeInconclusive {
			more := ""
			if n := len(r.Inconclusive) - 1; n > 0 {
				more = fmt.Sprintf(" (and %d more)", n)
			}
			return fmt.Errorf("%w: %s/%s seed %d: %s%s", errInconclusive, r.Strategy, r.Scenario, r.Seed, r.Inconclusive[0], more)
		}
	}
	return nil
}

func main() {
	redislog.Quiet()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root := newRoot()
	stdout := &countingWriter{w: os.Stdout}
	root.SetOut(stdout)
	cmd, err := root.ExecuteContextC(ctx)
	err = afterSignal(ctx, err)
	stop()
	code, msg := exitCode(err, onExternal(cmd))
	if code == exitInterrupted && startsNoServer(cmd) {
		msg = offlineInterrupt(errors.Is(err, errLate))
	}
	if msg != "" {
		fmt.Fprintln(os.Stderr, "lockbench:", msg)
		if stdout.n == 0 && wantsJSON(cmd, os.Args[1:]) {
			// --json promises a JSON object on stdout: a failure before the
			// summary was printed gets one with the error.
			je := jsonError{Error: msg, ExitCode: code}
			if pe := (*partialError)(nil); errors.As(err, &pe) {
				je.PartialReport = pe.report
			}
			printJSON(os.Stdout, je)
		}
	}
	os.Exit(code)
}

// jsonError is what a command run with --json prints on stdout when it
// fails before printing its own JSON.
type jsonError struct {
	// Error is the message also printed on stderr.
	Error string `json:"error"`
	// ExitCode is the process's exit code (see the package doc).
	ExitCode int `json:"exit_code"`
	// PartialReport is the INCOMPLETE report.md a bench stopped by the
	// error (or an interrupt) wrote for the runs that finished; omitted
	// when none was written.
	PartialReport string `json:"partial_report,omitempty"`
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += n
	return n, err
}

// wantsJSON reports whether the command that ran asked for --json: its
// parsed flag, or, when parsing stopped before it (a bad flag earlier on
// the line), --json among args before a "--".
func wantsJSON(cmd *cobra.Command, args []string) bool {
	if cmd != nil {
		if fl := cmd.Flags().Lookup("json"); fl != nil && fl.Changed {
			return fl.Value.String() == "true"
		}
		if cmd.Flags().Lookup("json") == nil {
			return false
		}
	}
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "--json" || a == "--json=true" {
			return true
		}
	}
	return false
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
3 environment error (no redis-server, port in use), 4 inconclusive (nothing
unexpected, but a gated check lacked evidence: too few holds, most outcomes
unknown, no fault landed; 1 wins over 4), 130 interrupted.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		if !c.HasParent() && strings.Contains(err.Error(), "'v' in -v") {
			return fmt.Errorf("%w: lockbench has no -v flag: --version prints the version (-v is --verbose under lockbench bench)", errs.ErrUsage)
		}
		return fmt.Errorf("%w: %v (see %s --help)", errs.ErrUsage, err, c.CommandPath())
	})
	root.Version = bench.Version
	root.SetVersionTemplate("lockbench {{.Version}}\n")
	// --version without cobra's -v shorthand: under bench, -v is --verbose,
	// and one letter must not mean two things.
	root.Flags().Bool("version", false, "print lockbench's version and exit")
	// An unknown command is a usage error naming the closest command and
	// listing them all (cobra's own error has no list and several lines).
	root.SuggestionsMinimumDistance = 2
	root.Args = cobra.ArbitraryArgs
	root.RunE = func(c *cobra.Command, args []string) error {
		if len(args) == 0 {
			return c.Help()
		}
		return unknownCommand(c, args[0])
	}
	root.AddCommand(newRunCmd(), newBenchCmd(), newHuntCmd(), newCheckCmd(), newListCmd(), newReportCmd(), newCompareCmd(), newDiffCmd(), newPerfCmd(), newMergeCmd())
	return root
}

// unknownCommand is the usage error for `lockbench NAME` with no command
// NAME: it suggests the closest command, if any, and lists them all.
func unknownCommand(root *cobra.Command, name string) error {
	var names []string
	for _, c := range root.Commands() {
		if c.IsAvailableCommand() {
			names = append(names, c.Name())
		}
	}
	hint := ""
	if s := root.SuggestionsFor(name); len(s) > 0 {
		hint = fmt.Sprintf(" (did you mean %s?)", strings.Join(s, " or "))
	}
	return fmt.Errorf("%w: unknown command %q%s; commands: %s (see lockbench --help)", errs.ErrUsage, name, hint, strings.Join(names, ", "))
}

// nonEmptyOut refuses an --out that is empty or only spaces ("" would
// name no folder: the results would fail to be written only after the
// run; " " would make a folder named by spaces); def is the command's
// default, suggested in the message.
func nonEmptyOut(out, def string) error {
	if strings.TrimSpace(out) == "" {
		return fmt.Errorf("%w: --out must not be empty or only spaces (got %q): give a results folder (e.g. --out %s) or leave the flag out for the default", errs.ErrUsage, out, def)
	}
	return nil
}

// checkOutFolder refuses (exit 2) an --out folder that a command writing
// results of profile want ("run", "perf" or "" for bench, which may
// replace anything lockbench wrote) must not reuse: one holding a file
// lockbench did not write (outdir.CheckOut), a perf measurement
// (perf.json) for another command, or, for run and perf, the
// results of another profile. what is the command, for the message.
func checkOutFolder(out, want, what string) error {
	if err := outdir.CheckOut(out); err != nil {
		return err
	}
	if want != "perf" && perf.In(out) {
		return fmt.Errorf("%w: --out %s holds the results of profile perf (%s); %s would mix its files with them: choose another --out", errs.ErrUsage, out, perf.FileName, what)
	}
	if want == "" {
		return nil
	}
	if old, err := results.Load(filepath.Join(out, results.FileName)); err == nil && old.Profile != want {
		return fmt.Errorf("%w: --out %s holds the results of %s; %s would replace them: choose another --out", errs.ErrUsage, out, outdir.Described(old.Profile), what)
	}
	return nil
}

// onExternal reports whether cmd ran with --backend external (auto never
// picks it): there lockbench starts no server, which its interrupt message
// says.
func onExternal(cmd *cobra.Command) bool {
	if cmd == nil {
		return false
	}
	fl := cmd.Flags().Lookup("backend")
	return fl != nil && fl.Value.String() == cluster.BackendExternal
}

// startsNoServer reports whether cmd is one of the commands that work on
// saved files only (check, report, compare, list): their interrupt
// message names no server and no --out.
func startsNoServer(cmd *cobra.Command) bool {
	if cmd == nil {
		return false
	}
	switch cmd.Name() {
	case "check", "report", "compare", "list":
		return true
	}
	return false
}

// offlineInterrupt is the interrupt message of a command that starts no
// server; late says the signal came after its work was done.
func offlineInterrupt(late bool) string {
	if late {
		return "interrupted after the command had finished its work: its output above is complete"
	}
	return "interrupted before the command finished; start it again for a complete result"
}

// exitCode maps an error to the documented exit code and the one-line
// message to print ("" for none); external says the command ran on the
// external backend (for the interrupt message).
func exitCode(err error, external bool) (int, string) {
	if err == nil {
		return exitOK, ""
	}
	code := exitUsage
	switch {
	case errors.Is(err, errUnexpected):
		code = exitUnexpected
	case errors.Is(err, errInconclusive):
		code = exitInconclusive
	case errors.Is(err, context.Canceled):
		code = exitInterrupted
		late := errors.Is(err, errLate)
		err = errors.New("interrupted: every server lockbench started (redis-server, redis-sentinel, etcd, ZooKeeper; containers on the docker backend) was stopped")
		if external {
			err = errors.New("interrupted: on the external backend lockbench started no server, so none was stopped; the run's keys under --key-prefix were deleted (unless --shared-keys)")
		}
		if late {
			err = fmt.Errorf("%v; %v", err, errLate)
		}
	case errors.Is(err, cluster.ErrEnvironment):
		code = exitEnvironment
	case errors.Is(err, errs.ErrUsage), errors.Is(err, history.ErrCorrupt), errors.Is(err, results.ErrCorrupt):
		code = exitUsage
	}
	return code, err.Error()
}
