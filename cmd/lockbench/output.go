package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/lockbench/lockbench/internal/errs"
)

// output holds the output-mode flags shared by bench and run: progress on
// stderr (a bar on a terminal, one line per run otherwise or with
// --verbose), --quiet (only errors and the final verdict line) and --json
// (the summary as JSON on stdout, nothing else there).
type output struct {
	quiet, json, verbose bool
	// tty reports whether stderr is a terminal; set by resolve.
	tty bool
}

// notef returns a function printing notes (such as an earlier run in
// --out being replaced) on cmd's stderr, or nil when quiet.
func (o *output) notef(cmd *cobra.Command) func(format string, args ...any) {
	if o.quiet {
		return nil
	}
	return func(format string, args ...any) { fmt.Fprintf(cmd.ErrOrStderr(), format+"\n", args...) }
}

// addFlags registers --quiet and --json (and --verbose when verbose is true).
func (o *output) addFlags(c *cobra.Command, verbose bool) {
	c.Flags().BoolVarP(&o.quiet, "quiet", "q", false, "print only errors and the final verdict line (with --json: only the JSON)")
	c.Flags().BoolVar(&o.json, "json", false, "print the summary (cells, verdicts, unexpected runs, paths) as JSON on stdout and nothing else there; progress stays on stderr")
	if verbose {
		c.Flags().BoolVarP(&o.verbose, "verbose", "v", false, "print one line per run on stderr (instead of a progress bar on a terminal)")
	}
}

// resolve checks the flags (errors wrap errs.ErrUsage) and notes whether
// stderr is a terminal.
func (o *output) resolve(cmd *cobra.Command) error {
	if o.quiet && o.verbose {
		return fmt.Errorf("%w: --quiet and --verbose contradict each other: choose one", errs.ErrUsage)
	}
	if f, ok := cmd.ErrOrStderr().(*os.File); ok {
		o.tty = term.IsTerminal(int(f.Fd()))
	}
	return nil
}

// progress returns the progress callback of a matrix of runs (nil when
// quiet) and a function to call when it is done: a progress bar on a
// terminal, else one line per run ("[3/12] token-lua/gc-pause seed 1").
func (o *output) progress(w io.Writer) (func(i, total int, label string), func()) {
	if o.quiet {
		return nil, func() {}
	}
	if o.verbose || !o.tty {
		return func(i, total int, label string) {
			fmt.Fprintf(w, "[%d/%d] %s\n", i+1, total, label)
		}, func() {}
	}
	var bar *progressbar.ProgressBar
	return func(i, total int, label string) {
			if bar == nil {
				bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(w),
					progressbar.OptionSetWidth(30), progressbar.OptionShowCount(), progressbar.OptionClearOnFinish())
			}
			bar.Describe(fmt.Sprintf("%-32s", label))
			bar.Set(i)
		}, func() {
			if bar != nil {
				bar.Finish()
			}
		}
}

// spinner shows that one run is going on: a spinner with the elapsed time
// on a terminal, one line otherwise, nothing when quiet. Call the returned
// function when the run ends.
func (o *output) spinner(w io.Writer, label string, expected time.Duration) func() {
	if o.quiet {
		return func() {}
	}
	if o.verbose || !o.tty {
		fmt.Fprintf(w, "running %s (about %v of workload, then the checks)\n", label, expected)
		return func() {}
	}
	bar := progressbar.NewOptions(-1, progressbar.OptionSetWriter(w), progressbar.OptionSetDescription(label),
		progressbar.OptionSpinnerType(14), progressbar.OptionShowElapsedTimeOnFinish(), progressbar.OptionClearOnFinish())
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				bar.Add(1)
			}
		}
	}()
	return func() {
		close(done)
		<-stopped
		bar.Finish()
	}
}

// printJSON writes v as indented JSON and a newline to w.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
