package bench

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/lockbench/lockbench/checker"
	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/plots"
	"github.com/lockbench/lockbench/results"
)

// Report draws the plots of a results file from its runs and their saved
// histories and writes report.md, details.md and index.html into dir
// (results.WriteReport; the pages link the PNGs in dir/plots). It runs
// offline on saved files, so `lockbench report DIR` re-renders a finished
// bench. Throughput and commands per grant are drawn for every scenario, latency percentiles and CDF for the baseline, the
// throughput-vs-clients plot from f.Sweep when it has runs, and timelines
// of holders (plots.TimelineKeys, plots.RunTimeline) for one run of each
// pair with a witness or a fault (see timelineRuns), whose violation marks
// are the run's stored witnesses.
func Report(dir string, f *results.File) error {
	sweep := f.Sweep
	pd := filepath.Join(dir, results.PlotsFolder)
	if err := os.MkdirAll(pd, 0o755); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	var refs []results.PlotRef
	addRef := func(title, name string, ref results.PlotRef, err error) error {
		if errors.Is(err, plots.ErrNoData) {
			return nil // nothing to draw: leave the plot out
		}
		if err != nil {
			return fmt.Errorf("report: plot %s: %w", name, err)
		}
		ref.Title, ref.PNG, ref.SVG = title, filepath.Join(results.PlotsFolder, name+".png"), filepath.Join(results.PlotsFolder, name+".svg")
		refs = append(refs, ref)
		return nil
	}
	add := func(title, name string, err error) error { return addRef(title, name, results.PlotRef{}, err) }
	if err := add("Throughput per strategy and scenario (grants/s, with 95% intervals)", "throughput", plots.Throughput(f.Runs, filepath.Join(pd, "throughput"))); err != nil {
		return err
	}
	base := runsOf(f.Runs, "baseline")
	if len(base) > 0 {
		if err := add("Acquire latency percentiles p50, p90, p99, p99.9 and max (baseline, ms, log scale; p50 and p99 with 95% intervals)", "latency-percentiles", plots.LatencyPercentiles(base, filepath.Join(pd, "latency-percentiles"))); err != nil {
			return err
		}
		cdf := map[string][]float64{}
		for _, r := range base {
			_, ops, err := history.Load(filepath.Join(dir, r.History))
			if err != nil {
				continue // a missing history only thins the CDF
			}
			cdf[r.Strategy] = append(cdf[r.Strategy], checker.AcquireLatencies(ops)...)
		}
		if err := add("Acquire latency CDF (baseline, ms, log scale)", "latency-cdf", plots.LatencyCDF(cdf, filepath.Join(pd, "latency-cdf"))); err != nil {
			return err
		}
	}
	if len(sweep) > 0 {
		if err := add("Throughput vs number of clients (baseline, grants/s)", "throughput-vs-clients", plots.ThroughputVsClients(sweepPoints(sweep), filepath.Join(pd, "throughput-vs-clients"))); err != nil {
			return err
		}
	}
	if err := add("Commands per grant: sent by the clients (bars, with 95% intervals) and executed by the servers (crosses)", "commands-per-grant", plots.CommandsPerGrant(f.Runs, filepath.Join(pd, "commands-per-grant"))); err != nil {
		return err
	}
	// Timelines: for each pair, its first run with a witness, else its
	// first faulted run; one per key with a witness, or a few keys.
	// Violations are marked from the run's stored witnesses alone.
	for _, r := range timelineRuns(f.Runs) {
		pair := fileSafe(r.Strategy) + "-" + r.Scenario
		_, ops, err := history.Load(filepath.Join(dir, r.History))
		if err != nil {
			continue
		}
		keys := plots.TimelineKeys(ops, r.Witnesses)
		for _, key := range keys {
			name := "timeline-" + pair
			title := fmt.Sprintf("Holders over time: %s under %s (seed %d)", r.Strategy, r.Scenario, r.Seed)
			ref := results.PlotRef{Strategy: r.Strategy, Scenario: r.Scenario}
			if len(keys) > 1 {
				name += "-" + fileSafe(key)
				title += ", key " + key
				ref.Key = key
			}
			_, err := plots.RunTimeline(ops, r, key, filepath.Join(pd, name))
			if err := addRef(title, name, ref, err); err != nil {
				return err
			}
		}
	}
	return results.WriteReport(dir, f, refs)
}

// timelineRuns picks, in order of first appearance, one run per (strategy,
// scenario) pair that completed: its first run with an exclusion or
// resource witness, else its first run with a fault window; pairs with
// neither get no timeline.
func timelineRuns(rs []results.Run) []results.Run {
	var order []string
	pick := map[string]results.Run{}
	witnessed := func(r results.Run) bool { return len(r.Witnesses.Exclusion)+len(r.Witnesses.Resource) > 0 }
	for _, r := range rs {
		if r.Error != "" || !witnessed(r) && len(r.Faults) == 0 {
			continue
		}
		pair := r.Strategy + "-" + r.Scenario
		old, ok := pick[pair]
		if !ok {
			order = append(order, pair)
		}
		if !ok || witnessed(r) && !witnessed(old) {
			pick[pair] = r
		}
	}
	out := make([]results.Run, len(order))
	for i, p := range order {
		out[i] = pick[p]
	}
	return out
}

func runsOf(rs []results.Run, scenario string) []results.Run {
	var out []results.Run
	for _, r := range rs {
		if r.Scenario == scenario {
			out = append(out, r)
		}
	}
	return out
}

// fileSafe turns a key into a file-name part: letters, digits, '-' and '_'
// kept, anything else '_'.
func fileSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return r
		}
		return '_'
	}, s)
}

// sweepPoints are the client-sweep runs as (clients, grants/s) points per
// strategy: the median over the time windows of the runs with the same
// client count, with its 95% interval when there are enough windows (runs
// without windows: the median of their whole-run throughput).
func sweepPoints(sweep []results.Run) map[string][]plots.XY {
	type k struct {
		strategy string
		clients  int
	}
	runs := map[k][]results.Run{}
	for _, r := range sweep {
		if r.Error == "" {
			runs[k{r.Strategy, r.Config.Clients}] = append(runs[k{r.Strategy, r.Config.Clients}], r)
		}
	}
	pts := map[string][]plots.XY{}
	for key, rs := range runs {
		pt := plots.XY{X: float64(key.clients)}
		if e := results.EstimateOf(results.SamplesOf(rs, results.FigureGrantsPerS)); e.N > 0 {
			pt.Y = e.Median
			if e.Bounded() {
				pt.Low, pt.High = e.Low, e.High
			}
		} else {
			var vs []float64
			for _, r := range rs {
				vs = append(vs, r.ThroughputPerS)
			}
			pt.Y = results.SpreadOf(vs).Median
		}
		pts[key.strategy] = append(pts[key.strategy], pt)
	}
	for _, v := range pts {
		sort.Slice(v, func(i, j int) bool { return v[i].X < v[j].X })
	}
	return pts
}

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
	// runs by results.Run.Outcome (the client sweep is not gated and not
	// counted).
	Runs         int `json:"runs"`
	AsExpected   int `json:"as_expected"`
	Unexpected   int `json:"unexpected"`
	Inconclusive int `json:"inconclusive"`
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
	// "inconclusive", "error" (results.Observed).
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
	// (results.ObservedSafety, the chooser table's cell), e.g. "resource
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
	for _, s := range results.Summarize(f.Runs) {
		v := results.OutcomeAsExpected
		switch {
		case s.AsExpected+s.Inconclusive != s.Seeds:
			v = results.OutcomeUnexpected
		case s.Inconclusive > 0:
			v = results.OutcomeInconclusive
		}
		o.Cells = append(o.Cells, OutcomeCell{Strategy: s.Strategy, Scenario: s.Scenario, Expected: s.Expected,
			Observed: s.Observed, Seeds: s.Seeds, AsExpected: s.AsExpected, Inconclusive: s.Inconclusive, Verdict: v,
			ObservedSafety: results.ObservedSafety(pairs[[2]string{s.Strategy, s.Scenario}])})
	}
	o.InconclusiveRuns = []UnexpectedRun{}
	for _, r := range f.Runs {
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
			if n := results.RerunNote(r); n != "" {
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

// plural writes n and word, with an s unless n is 1: "1 run", "3 runs".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
