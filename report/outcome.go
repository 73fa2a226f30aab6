package report

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/lockbench/lockbench/figures"
	"github.com/lockbench/lockbench/results"
)

// Outcome is the summary of a finished bench or run that `lockbench bench
// --json` and `lockbench run --json` print on stdout: the verdict counts,
// one cell per (strategy, scenario) pair, the unexpected runs with what
// contradicted the verdict table and how to reproduce them, the
// inconclusive runs with what evidence they lacked, and the paths of the
// results. Paths are the results folder joined with the file names.
type Outcome struct {
	// OK is true when every run's verdicts were as expected (nothing
	// unexpected, nothing inconclusive).
	OK bool `json:"ok"`
	// Command reproduces the bench or run; Profile is its profile ("run" for one run).
	Command string `json:"command"`
	Profile string `json:"profile"`
	// Runs, AsExpected, Unexpected and Inconclusive count the matrix's
	// runs by Run.Outcome (the client sweep is not gated and not
	// counted).
	Runs         int `json:"runs"`
	AsExpected   int `json:"as_expected"`
	Unexpected   int `json:"unexpected"`
	Inconclusive int `json:"inconclusive"`
	// Busy counts the runs measured on a busy machine (Run.Noise.Busy):
	// their cost figures are not comparable with a quiet run's.
	Busy int `json:"busy"`
	// Cells are the (strategy, scenario) pairs in the order they ran.
	Cells []OutcomeCell `json:"cells"`
	// UnexpectedRuns are the runs whose verdicts contradict the verdict table.
	UnexpectedRuns []UnexpectedRun `json:"unexpected_runs"`
	// InconclusiveRuns are the runs with a gated check that lacked
	// evidence and nothing unexpected; Why says what is missing and the
	// flag that supplies it.
	InconclusiveRuns []UnexpectedRun `json:"inconclusive_runs"`
	// Paths are where the results were written.
	Paths OutcomePaths `json:"paths"`
}

// OutcomeCell is one (strategy, scenario) pair of an Outcome.
type OutcomeCell struct {
	Strategy string `json:"strategy"`
	Scenario string `json:"scenario"`
	// Expected is "must-hold", "must-break" or "at-risk".
	Expected string `json:"expected"`
	// Observed counts the pair's runs by outcome: "held", "violated",
	// "inconclusive", "error" (Observed).
	Observed map[string]int `json:"observed"`
	// Seeds is how many runs the pair had, AsExpected how many were as
	// expected, Inconclusive how many lacked evidence.
	Seeds        int `json:"seeds"`
	AsExpected   int `json:"as_expected"`
	Inconclusive int `json:"inconclusive,omitempty"`
	// Verdict is "unexpected" when some run of the pair was, else
	// "inconclusive" when some run was, else "as-expected".
	Verdict string `json:"verdict"`
	// ObservedSafety says in plain words what the checkers observed
	// (ObservedSafety, the chooser table's cell), e.g. "resource
	// safe: exclusion broken; fencing rejected 3 stale writes, no update
	// lost", where Observed only counts a run with any violated check as
	// "violated".
	ObservedSafety string `json:"observed_safety"`
}

// UnexpectedRun is one run of an Outcome whose verdicts contradict the
// verdict table, or (in InconclusiveRuns) that lacked evidence.
type UnexpectedRun struct {
	Strategy string `json:"strategy"`
	Scenario string `json:"scenario"`
	Seed     int64  `json:"seed"`
	// Why lists what contradicted the expectation (or, for an
	// inconclusive run, what evidence is missing and the flag that
	// supplies it, then its liveness finding and reruns), one line each
	// (and the run's error, if it could not complete).
	Why []string `json:"why"`
	// History and Visualization are file paths (Visualization empty if none).
	History       string `json:"history"`
	Visualization string `json:"visualization,omitempty"`
	// Command reproduces the run alone.
	Command string `json:"command"`
}

// OutcomePaths are the files of a results folder.
type OutcomePaths struct {
	Dir      string `json:"dir"`
	Results  string `json:"results"`
	Markdown string `json:"markdown"`
	HTML     string `json:"html"`
}

// OutcomeOf summarises f, written to the folder dir, as an Outcome.
func OutcomeOf(f *results.File, dir string) Outcome {
	o := Outcome{Command: f.Command, Profile: f.Profile, Runs: len(f.Runs),
		Cells: []OutcomeCell{}, UnexpectedRuns: []UnexpectedRun{},
		Paths: OutcomePaths{Dir: dir, Results: filepath.Join(dir, results.FileName),
			Markdown: filepath.Join(dir, results.ReportMarkdown), HTML: filepath.Join(dir, results.ReportHTML)}}
	pairs := map[[2]string][]results.Run{}
	for _, r := range f.Runs {
		k := [2]string{r.Strategy, r.Scenario}
		pairs[k] = append(pairs[k], r)
	}
	for _, s := range figures.Summarize(f.Runs) {
		v := results.OutcomeAsExpected
		switch {
		case s.AsExpected+s.Inconclusive != s.Seeds:
			v = results.OutcomeUnexpected
		case s.Inconclusive > 0:
			v = results.OutcomeInconclusive
		}
		o.Cells = append(o.Cells, OutcomeCell{Strategy: s.Strategy, Scenario: s.Scenario, Expected: s.Expected,
			Observed: s.Observed, Seeds: s.Seeds, AsExpected: s.AsExpected, Inconclusive: s.Inconclusive, Verdict: v,
			ObservedSafety: ObservedSafety(pairs[[2]string{s.Strategy, s.Scenario}])})
	}
	o.InconclusiveRuns = []UnexpectedRun{}
	for _, r := range f.Runs {
		if r.Noise != nil && r.Noise.Busy {
			o.Busy++
		}
		outcome := r.Outcome()
		if outcome == results.OutcomeAsExpected {
			o.AsExpected++
			continue
		}
		why := slices.Clone(r.Unexpected)
		if outcome == results.OutcomeInconclusive {
			why = slices.Clone(r.Inconclusive)
			if r.LivenessFinding != "" {
				why = append(why, "liveness finding: "+r.LivenessFinding)
			}
			if n := RerunNote(r); n != "" {
				why = append(why, n)
			}
		}
		if r.Error != "" {
			why = append([]string{"error: " + r.Error}, why...)
		}
		u := UnexpectedRun{Strategy: r.Strategy, Scenario: r.Scenario, Seed: r.Seed, Why: why,
			History: filepath.Join(dir, r.History), Command: r.Command}
		if r.Visualization != "" {
			u.Visualization = filepath.Join(dir, r.Visualization)
		}
		if outcome == results.OutcomeInconclusive {
			o.InconclusiveRuns = append(o.InconclusiveRuns, u)
		} else {
			o.UnexpectedRuns = append(o.UnexpectedRuns, u)
		}
	}
	o.Unexpected, o.Inconclusive = len(o.UnexpectedRuns), len(o.InconclusiveRuns)
	o.OK = o.Unexpected == 0 && o.Inconclusive == 0
	return o
}

// VerdictLine is the one-line verdict of an Outcome, e.g. "9 runs, 7 as
// expected, 1 unexpected (redlock/gc-pause seed 1), 1 inconclusive
// (redsync/baseline seed 3); report: out/report.md (also index.html)".
func (o Outcome) VerdictLine() string {
	return fmt.Sprintf("%s; report: %s (also %s)", o.CountsLine(), o.Paths.Markdown, filepath.Base(o.Paths.HTML))
}

// CountsLine is VerdictLine without the report's path, e.g. "9 runs, 8
// as expected, 1 unexpected (redlock/gc-pause seed 1)": what is printed
// when the report could not be written. The inconclusive runs are named
// only when there are some.
func (o Outcome) CountsLine() string {
	line := fmt.Sprintf("%s, %d as expected, %d unexpected%s", plural(o.Runs, "run"), o.AsExpected, o.Unexpected, runNames(o.UnexpectedRuns))
	if o.Inconclusive > 0 {
		line += fmt.Sprintf(", %d inconclusive%s", o.Inconclusive, runNames(o.InconclusiveRuns))
	}
	if o.Busy > 0 {
		line += fmt.Sprintf("; %d of %d measured on a busy machine (their costs are not comparable)", o.Busy, o.Runs)
	}
	return line
}

// runNames writes " (a/b seed 1, c/d seed 2)" for runs, at most five
// named; "" for none.
func runNames(runs []UnexpectedRun) string {
	var names []string
	for _, u := range runs {
		names = append(names, fmt.Sprintf("%s/%s seed %d", u.Strategy, u.Scenario, u.Seed))
	}
	if len(names) == 0 {
		return ""
	}
	const most = 5
	if len(names) > most {
		names = append(names[:most], fmt.Sprintf("%d more", len(names)-most))
	}
	return " (" + strings.Join(names, ", ") + ")"
}

// Unexpected returns the runs whose verdicts contradict their expectation
// (Run.Outcome "unexpected"; inconclusive runs are not).
func Unexpected(f *results.File) []results.Run {
	var out []results.Run
	for _, r := range f.Runs {
		if r.Outcome() == results.OutcomeUnexpected {
			out = append(out, r)
		}
	}
	return out
}
