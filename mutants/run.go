package mutants

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
)

// Exit codes of `lockbench run` (docs/cli.md).
const (
	ExitExpected     = 0 // every verdict as expected
	ExitUnexpected   = 1 // an unexpected verdict: a gated violation
	ExitUsage        = 2 // usage error (e.g. a scenario this lockbench does not have)
	ExitEnvironment  = 3 // environment error, or a harness too overloaded to trust
	ExitInconclusive = 4 // a gated check lacked evidence
)

// Programs are what a cell runs: lockbench and the zoo's adapter, both
// paths as lockbench's working folder sees them, and where results go.
type Programs struct {
	// Lockbench is the lockbench binary.
	Lockbench string
	// Adapter is the zoo's adapter binary (testdata/adapter).
	Adapter string
	// Python is the command that runs the zoo's Python adapter, for the
	// locks it serves (Lock.Python), e.g. "/usr/bin/python3
	// /src/lockbench/mutants/testdata/pyadapter/adapter.py" (the
	// interpreter Debian's python3-redis is for); "": those locks' cells
	// cannot run (exit 2).
	Python string
	// Dir is the folder lockbench runs in ("": the current one).
	Dir string
	// Out is the folder under which each run writes its results.
	Out string
	// Attempts is how many times a run that ends without a verdict (exit
	// 3: the machine too busy to trust; exit 4: too little evidence) is
	// made again with the same seed before it counts as no verdict.
	// Default 3.
	Attempts int
}

// Strategy is the exec: strategy that runs bug ("none": the correct
// lock) of lock through adapter.
func Strategy(adapter, lock, bug string) string {
	return "exec:" + adapter + " --lock " + lock + " --bug " + bug
}

// AdapterFor returns the adapter command that serves lock: p.Python for a
// lock of the Python adapter (Lock.Python), else p.Adapter.
func (p Programs) AdapterFor(lock string) string {
	if l, err := LookupLock(lock); err == nil && l.Python {
		return p.Python
	}
	return p.Adapter
}

// args are the `lockbench run` arguments of one run of cell with seed;
// for a Diff cell, the `lockbench diff` arguments of twin (A) against
// strategy (B).
func (c Cell) args(strategy, twin string, seed int64, out string) []string {
	if c.Diff {
		a := []string{"diff", twin, strategy, "--scenario", c.Scenario, "--seed", strconv.FormatInt(seed, 10), "--out", out, "--quiet"}
		return append(a, c.Args...)
	}
	a := []string{"run", "--strategy", strategy, "--scenario", c.Scenario, "--seed", strconv.FormatInt(seed, 10), "--out", out, "--quiet"}
	return append(a, c.Args...)
}

// Run is one run of lockbench: its exit code, the runs it took (more
// than one when a run ended without a verdict) and its last output line.
type Run struct {
	Exit     int
	Attempts int
	Line     string
	Out      string // its results folder
}

// RunOne runs bug of lock in cell with seed and returns its exit code. A
// run that ends without a verdict (exit 3 or 4) is made again, up to
// p.Attempts runs. The error is for runs that could not be made at all.
func RunOne(ctx context.Context, p Programs, lock, bug string, c Cell, seed int64) (Run, error) {
	attempts := p.Attempts
	if attempts <= 0 {
		attempts = 3
	}
	var r Run
	for r.Attempts < attempts {
		r.Attempts++
		r.Out = filepath.Join(p.Out, fmt.Sprintf("%s-%s-%s-%d", lock, bug, c.Scenario, seed))
		adapter := p.AdapterFor(lock)
		args := c.args(Strategy(adapter, lock, bug), Strategy(adapter, lock, "none"), seed, r.Out)
		cmd := exec.CommandContext(ctx, p.Lockbench, args...)
		cmd.Dir = p.Dir
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		r.Line = lastLine(out.String())
		var ee *exec.ExitError
		switch {
		case err == nil:
			r.Exit = ExitExpected
		case errors.As(err, &ee) && ee.ExitCode() > 0:
			r.Exit = ee.ExitCode()
		default:
			return r, fmt.Errorf("%s %s: %w", p.Lockbench, strings.Join(args, " "), err)
		}
		if (r.Exit != ExitEnvironment && r.Exit != ExitInconclusive) || ctx.Err() != nil {
			break
		}
	}
	return r, nil
}

// lastLine is s's last non-empty line.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// CellResult is a cell's runs, seed by seed, for a mutant and for its twin.
type CellResult struct {
	Cell   Cell
	Mutant []Run // one per seed
	Twin   []Run
}

// kills counts the seeds where the mutant's run exited 1 (killed) and
// the twin's 0 (passed).
func (c CellResult) kills() (mutant, twin int) {
	for _, r := range c.Mutant {
		if r.Exit == ExitUnexpected {
			mutant++
		}
	}
	for _, r := range c.Twin {
		if r.Exit == ExitExpected {
			twin++
		}
	}
	return mutant, twin
}

// Killed reports whether the cell killed the mutant: every seed's run of
// it exited 1, and every seed's run of the twin exited 0.
func (c CellResult) Killed() bool {
	m, t := c.kills()
	return len(c.Cell.Seeds) > 0 && m == len(c.Cell.Seeds) && t == len(c.Cell.Seeds)
}

// Result is a mutant's outcome: each of its cells.
type Result struct {
	Mutant Mutant
	Cells  []CellResult
}

// Killed reports whether every cell killed the mutant.
func (r Result) Killed() bool {
	for _, c := range r.Cells {
		if !c.Killed() {
			return false
		}
	}
	return len(r.Cells) > 0
}

// RunCell runs cell for m and for its twin, seed by seed (mutant, then
// twin, so machine noise falls on both alike).
func RunCell(ctx context.Context, p Programs, m Mutant, c Cell) (CellResult, error) {
	cr := CellResult{Cell: c}
	for _, seed := range c.Seeds {
		r, err := RunOne(ctx, p, m.Lock, m.Name, c, seed)
		if err != nil {
			return cr, err
		}
		cr.Mutant = append(cr.Mutant, r)
		if r, err = RunOne(ctx, p, m.Lock, "none", c, seed); err != nil {
			return cr, err
		}
		cr.Twin = append(cr.Twin, r)
	}
	return cr, nil
}

// Verdict is a cell's outcome in words: "killed", or why not, most
// telling first: a mutant that passed (survived), a twin that failed, a
// cell that cannot run (exit 2), runs without a verdict (exit 3 or 4
// after their retries).
func (c CellResult) Verdict() string {
	m, t := c.kills()
	n := len(c.Cell.Seeds)
	switch survived := count(c.Mutant, ExitExpected); {
	case c.Killed():
		return "killed"
	case survived > 0:
		return fmt.Sprintf("SURVIVED in %d of %d seeds", survived, n)
	case count(c.Twin, ExitUnexpected) > 0:
		return fmt.Sprintf("twin failed in %d of %d seeds", count(c.Twin, ExitUnexpected), n)
	case count(c.Mutant, ExitUsage)+count(c.Twin, ExitUsage) > 0:
		return "cannot run (exit 2)"
	}
	return fmt.Sprintf("no verdict (exit 3 or 4) in %d of %d seeds", n-min(m, t), n)
}

// Definite reports whether the cell reached a verdict in every seed: no
// run ended in exit 3 or 4 (the machine too busy, too little evidence).
func (c CellResult) Definite() bool {
	for _, rs := range [][]Run{c.Mutant, c.Twin} {
		if count(rs, ExitEnvironment)+count(rs, ExitInconclusive) > 0 {
			return false
		}
	}
	return true
}

// count is the number of runs that exited code.
func count(rs []Run, code int) int {
	n := 0
	for _, r := range rs {
		if r.Exit == code {
			n++
		}
	}
	return n
}

// exits lists the runs' exit codes, "1 1 1", with the runs it took where
// more than one ("4→1").
func exits(rs []Run) string {
	var s []string
	for _, r := range rs {
		e := strconv.Itoa(r.Exit)
		if r.Attempts > 1 {
			e = fmt.Sprintf("%d (run %d×)", r.Exit, r.Attempts)
		}
		s = append(s, e)
	}
	return strings.Join(s, " ")
}

// WriteTable writes the mutation table: one line per (mutant, cell) with
// the cell, what the kill needs, the exit codes of the mutant's and the
// twin's runs (seed by seed) and the verdict; then, for a cell that did
// not kill, the last output line of a run that did not do as it should;
// and last the line "mutants: K of N killed".
func WriteTable(w io.Writer, rs []Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "MUTANT\tLOCK\tKILLING CELL\tSEEDS\tMUTANT EXITS\tTWIN EXITS\tVERDICT\tTHE KILL NEEDS")
	killed := 0
	var notes []string
	for _, r := range rs {
		if r.Killed() {
			killed++
		}
		for i, c := range r.Cells {
			name, lock, needs := r.Mutant.Name, r.Mutant.Lock, r.Mutant.Needs
			if i > 0 {
				name, lock, needs = "", "", `"`
			}
			if c.Cell.Awaits != "" {
				needs += " [awaits: " + c.Cell.Awaits + "]"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", name, lock, c.Cell, seedList(c.Cell.Seeds),
				exits(c.Mutant), exits(c.Twin), c.Verdict(), needs)
			if !c.Killed() {
				notes = append(notes, note(r.Mutant, c))
			}
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, n := range notes {
		fmt.Fprintln(w, n)
	}
	_, err := fmt.Fprintf(w, "mutants: %d of %d killed\n", killed, len(rs))
	return err
}

// note says why a cell did not kill its mutant: the last line of the
// first run that did not do as it should.
func note(m Mutant, c CellResult) string {
	for i, r := range c.Mutant {
		if r.Exit != ExitUnexpected {
			return fmt.Sprintf("  %s, %s seed %d: the mutant exited %d: %s", m.Name, c.Cell, c.Cell.Seeds[i], r.Exit, r.Line)
		}
	}
	for i, r := range c.Twin {
		if r.Exit != ExitExpected {
			return fmt.Sprintf("  %s, %s seed %d: the twin (--bug none) exited %d: %s", m.Name, c.Cell, c.Cell.Seeds[i], r.Exit, r.Line)
		}
	}
	return ""
}

func seedList(seeds []int64) string {
	s := make([]string, len(seeds))
	for i, x := range seeds {
		s[i] = strconv.FormatInt(x, 10)
	}
	return strings.Join(s, ",")
}
