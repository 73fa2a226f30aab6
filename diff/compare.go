package diff

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/lockbench/lockbench/checker"
	"github.com/lockbench/lockbench/figures"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/stats"
)

// Classes of a figure: what a worse B means.
const (
	// ClassSafety: exclusion, the resource, fencing tokens, reentrancy
	// counts. A significant regression is gated.
	ClassSafety = "safety"
	// ClassLiveness: the liveness probe, renewal liveness (leases lost
	// with no fault), availability during fault windows. A significant
	// regression is gated.
	ClassLiveness = "liveness"
	// ClassContract: the contract checks, a lock's promises about its own
	// calls (verdicts.ContractChecks): no failed acquire leaves its token
	// (orphans), lost is signalled in time and never for a released lease
	// (lost), no extend after release (extends), no stated reason the
	// server state rules out (reasons). A significant regression is gated.
	ClassContract = "contract"
	// ClassCost: commands per grant, grants/s, latency. A significant
	// regression beyond --max-regression is gated; time figures (ms,
	// grants/s) only when no run of the cell was measured on a busy
	// machine.
	ClassCost = "cost"
)

// Tests named in findings.
const (
	TestFisher       = "Fisher's exact test, one-sided"
	TestMannWhitney  = "Mann-Whitney U (benchmath)"
	fisherNeedsAlpha = stats.Alpha
)

// Finding is one figure of one scenario compared between A and B.
type Finding struct {
	Scenario string `json:"scenario"`
	// Figure names what is compared, e.g. "exclusion violated (runs)",
	// "commands per grant, counted on the servers".
	Figure string `json:"figure"`
	// Class is ClassSafety, ClassLiveness or ClassCost.
	Class string `json:"class"`
	// A and B give the figure on each side in words ("violated in 0 of 5
	// runs", "median 3.1 [2.9, 3.4] (n=5)").
	A string `json:"a"`
	B string `json:"b"`
	// Test names the test; P is its p-value (for Fisher's test: that B is
	// worse, or that B is better when Better).
	Test string  `json:"test"`
	P    float64 `json:"p"`
	// Significant is P below stats.Alpha; Worse and Better give the
	// direction of a significant difference (B against A).
	Significant bool `json:"significant"`
	Worse       bool `json:"worse,omitempty"`
	Better      bool `json:"better,omitempty"`
	// Relative is B's median against A's ((B−A)/A) for figures with
	// medians; 0 otherwise.
	Relative float64 `json:"relative,omitempty"`
	// Gated is true when the finding fails the diff (exit 1).
	Gated bool `json:"gated"`
	// Verdict says what the finding comes to in one line: "B worse",
	// "B better", or "no difference shown at N runs" with how many runs
	// would show one.
	Verdict string `json:"verdict"`
	// WitnessesA and WitnessesB are the checker's witnesses of the
	// violations behind the figure, a few from each side (text).
	WitnessesA []string `json:"witnesses_a,omitempty"`
	WitnessesB []string `json:"witnesses_b,omitempty"`
	// Note says what weakens the finding (busy machine, too few samples).
	Note string `json:"note,omitempty"`
}

// Report is a diff's comparison of B against A.
type Report struct {
	// A and B are the locks as the report names them (Names).
	A string `json:"a"`
	B string `json:"b"`
	// Scenarios are the scenarios compared; Runs the runs planned a side
	// per scenario, RunsA and RunsB those that completed.
	Scenarios []string `json:"scenarios"`
	Runs      int      `json:"runs"`
	RunsA     int      `json:"runs_a"`
	RunsB     int      `json:"runs_b"`
	// Alpha is the significance level; MaxRegression the cost threshold.
	Alpha         float64 `json:"alpha"`
	MaxRegression float64 `json:"max_regression"`
	// Findings are every compared figure, worst first: gated (safety,
	// then liveness, then contract, then cost), then other significant
	// differences, then those with none shown.
	Findings []Finding `json:"findings"`
	// Gated counts the gated findings: the diff fails (exit 1) when > 0.
	Gated int `json:"gated"`
	// Notes say what weakens the whole comparison (busy runs, runs that
	// did not complete).
	Notes []string `json:"notes,omitempty"`
}

// Failed reports whether B is significantly worse than A somewhere
// (lockbench diff exits 1).
func (r Report) Failed() bool { return r.Gated > 0 }

// Compare sets B's runs beside A's, scenario by scenario, and tests every
// figure (see Finding): per check that gates a run (exclusion, resource,
// fencing, reentrancy, renewal, liveness, availability, the contract
// checks orphans, lost, extends and reasons) and for the gate itself, the
// runs with a violation (Fisher's exact test, one-sided each way); the
// violations per run, commands per
// grant and per attempt counted on the servers, availability and grant
// latency in the fault windows, grants/s and acquire p99 per window
// (Mann-Whitney U). Runs that could not complete (Error set) are left
// out.
func Compare(o Options, a, b []results.Run) Report {
	na, nb := Names(o)
	rep := Report{A: na, B: nb, Scenarios: o.Scenarios, Runs: max(o.Repeat, 1), Alpha: stats.Alpha, MaxRegression: o.MaxRegression}
	a, b = completed(a), completed(b)
	rep.RunsA, rep.RunsB = len(a), len(b)
	busy := 0
	for _, r := range append(slices.Clone(a), b...) {
		if r.Busy() {
			busy++
		}
	}
	if busy > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%d of %d runs were measured on a busy machine (other processes' CPU or steal above the thresholds): figures in time (grants/s, latency) are reported but not gated; counts (violations, commands per grant) are gated, since machine load does not change them", busy, len(a)+len(b)))
	}
	for _, sc := range o.Scenarios {
		ra, rb := ofScenario(a, sc), ofScenario(b, sc)
		if len(ra) == 0 || len(rb) == 0 {
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s: %d runs of A and %d of B completed: not compared", sc, len(ra), len(rb)))
			continue
		}
		rep.Findings = append(rep.Findings, compareScenario(sc, ra, rb, o.MaxRegression)...)
	}
	sort.SliceStable(rep.Findings, func(i, j int) bool { return rank(rep.Findings[i]) < rank(rep.Findings[j]) })
	for _, f := range rep.Findings {
		if f.Gated {
			rep.Gated++
		}
	}
	return rep
}

// rank orders findings worst first.
func rank(f Finding) float64 {
	class := map[string]float64{ClassSafety: 0, ClassLiveness: 1, ClassContract: 1.25, ClassCost: 2}[f.Class]
	if f.Figure == gateFigure {
		class = 1.5 // the gate sums up the checks above: after them
	}
	switch {
	case f.Gated:
		return class + f.P
	case f.Significant && f.Worse:
		return 10 + class + f.P
	case f.Significant:
		return 20 + class + f.P
	}
	return 30 + class + f.P
}

func completed(rs []results.Run) []results.Run {
	var out []results.Run
	for _, r := range rs {
		if r.Error == "" {
			out = append(out, r)
		}
	}
	return out
}

func ofScenario(rs []results.Run, sc string) []results.Run {
	var out []results.Run
	for _, r := range rs {
		if r.Scenario == sc {
			out = append(out, r)
		}
	}
	return out
}

// check is a per-check event counted in runs: its name, class, the
// results.Verdict field it reads ("" for an event no single verdict
// field holds), whether a run shows it, and the run's witnesses of it.
type check struct {
	name  string
	class string
	field string
	shows func(results.Run) bool
	wit   func(results.Run) []string
}

// checks are the events Compare counts in runs: one for every check that
// gates a run (each checker.Status field of results.Verdict, availability
// during faults), leases lost with no fault, and the gate itself.
var checks = []check{
	{"exclusion violated", ClassSafety, "Exclusion", func(r results.Run) bool { return r.Verdict.Exclusion == checker.Violated }, func(r results.Run) []string { return strs(r.Witnesses.Exclusion) }},
	{"resource violated (lost updates, stale writes)", ClassSafety, "Resource", func(r results.Run) bool { return r.Verdict.Resource == checker.Violated }, func(r results.Run) []string { return strs(r.Witnesses.Resource) }},
	{"fencing tokens violated", ClassSafety, "Fencing", func(r results.Run) bool { return r.Verdict.Fencing == checker.Violated }, func(r results.Run) []string { return strs(r.Witnesses.Fencing) }},
	{"reentrancy counts violated", ClassSafety, "Reentrancy", func(r results.Run) bool { return r.Verdict.Reentrancy == checker.Violated }, func(r results.Run) []string { return strs(r.Witnesses.Reentrancy) }},
	{"renewal liveness violated (a lease lost with no fault)", ClassLiveness, "Renewal", func(r results.Run) bool { return r.Verdict.Renewal == checker.Violated }, func(r results.Run) []string { return strs(r.Witnesses.Renewal) }},
	{"liveness violated (deadlocked or unacquirable keys)", ClassLiveness, "Liveness", func(r results.Run) bool { return r.Verdict.Liveness == checker.Violated }, func(r results.Run) []string { return strs(r.Witnesses.Liveness) }},
	{"availability during faults violated", ClassLiveness, "", func(r results.Run) bool { return len(linesWith(r.Unexpected, "availability")) > 0 }, func(r results.Run) []string { return linesWith(r.Unexpected, "availability") }},
	{"lost leases with no fault (lost events in a fault-free run)", ClassLiveness, "", func(r results.Run) bool { return r.ScenarioKind == "none" && r.Errors.Lost > 0 }, func(r results.Run) []string {
		if r.ScenarioKind == "none" && r.Errors.Lost > 0 {
			return []string{fmt.Sprintf("%d of %d holds lost with no fault", r.Errors.Lost, r.Grants)}
		}
		return nil
	}},
	{"orphans violated (a failed acquire left its token on the servers)", ClassContract, "Orphans", func(r results.Run) bool { return r.Verdict.Orphans == checker.Violated }, func(r results.Run) []string { return strs(r.Witnesses.Orphans) }},
	{"lost signals violated (late, missing, or for a released lease)", ClassContract, "Lost", func(r results.Run) bool { return r.Verdict.Lost == checker.Violated }, func(r results.Run) []string { return strs(r.Witnesses.Lost) }},
	{"extends violated (a lease extended after its release)", ClassContract, "Extends", func(r results.Run) bool { return r.Verdict.Extends == checker.Violated }, func(r results.Run) []string { return strs(r.Witnesses.Extends) }},
	{"reasons violated (a failed release or extend stated a reason the servers rule out)", ClassContract, "Reasons", func(r results.Run) bool { return r.Verdict.Reasons == checker.Violated }, func(r results.Run) []string { return strs(r.Witnesses.Reasons) }},
	{gateFigure, ClassSafety, "", func(r results.Run) bool { return r.Outcome() == results.OutcomeUnexpected }, func(r results.Run) []string { return r.Unexpected }},
}

// gateFigure is the check that sums the others up: the run's gate failed.
const gateFigure = "gate failed (an unexpected verdict)"

// strs is the String of each witness.
func strs[T fmt.Stringer](ws []T) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.String()
	}
	return out
}

func linesWith(lines []string, prefix string) []string {
	var out []string
	for _, l := range lines {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return out
}

// maxWitnessLines is how many witness lines a finding keeps a side.
const maxWitnessLines = 3

// compareScenario compares every figure of one scenario.
func compareScenario(sc string, a, b []results.Run, maxReg float64) []Finding {
	var out []Finding
	for _, c := range checks {
		ka, kb := count(a, c.shows), count(b, c.shows)
		if ka == 0 && kb == 0 {
			continue
		}
		f := Finding{Scenario: sc, Figure: c.name, Class: c.class, Test: TestFisher,
			A: runsText(ka, len(a)), B: runsText(kb, len(b))}
		worse, better := FisherGreater(ka, len(a), kb, len(b)), FisherGreater(kb, len(b), ka, len(a))
		f.P = worse
		switch {
		case Below(worse, stats.Alpha):
			f.Significant, f.Worse, f.Gated = true, true, true
			f.Verdict = fmt.Sprintf("B worse: %s in %d of %d runs against %d of %d (p=%.4f)", c.name, kb, len(b), ka, len(a), worse)
		case Below(better, stats.Alpha):
			f.P, f.Significant, f.Better = better, true, true
			f.Verdict = fmt.Sprintf("B better: %d of %d runs against %d of %d (p=%.4f)", kb, len(b), ka, len(a), better)
		default:
			f.Verdict = noDifference(ka, len(a), kb, len(b), worse)
		}
		f.WitnessesA, f.WitnessesB = witnesses(a, c), witnesses(b, c)
		out = append(out, f)
	}
	busy := anyBusy(a) || anyBusy(b)
	for _, m := range metrics {
		sa, sb := m.samples(a), m.samples(b)
		if len(finite(sa)) == 0 && len(finite(sb)) == 0 {
			continue
		}
		f := compareMetric(sc, m, sa, sb, maxReg, busy)
		out = append(out, f)
	}
	return out
}

func anyBusy(rs []results.Run) bool {
	for _, r := range rs {
		if r.Busy() {
			return true
		}
	}
	return false
}

func count(rs []results.Run, shows func(results.Run) bool) int {
	n := 0
	for _, r := range rs {
		if shows(r) {
			n++
		}
	}
	return n
}

func runsText(k, n int) string {
	return fmt.Sprintf("%d of %d runs", k, n)
}

// witnesses are up to maxWitnessLines witness lines of a side's runs that
// show c, each prefixed with its seed.
func witnesses(rs []results.Run, c check) []string {
	var out []string
	for _, r := range rs {
		if !c.shows(r) {
			continue
		}
		for _, w := range c.wit(r) {
			if len(out) == maxWitnessLines {
				return out
			}
			out = append(out, fmt.Sprintf("seed %d: %s", r.Seed, w))
		}
	}
	return out
}

// noDifference is the verdict of a count with no significant difference:
// "no difference shown at N runs", and the runs a side that would show
// one of the size B showed (or of 50% against none when neither side
// showed it).
func noDifference(ka, na, kb, nb int, p float64) string {
	n := min(na, nb)
	rate := float64(kb) / float64(nb)
	if ka > 0 || rate == 0 {
		rate = 0.5
	}
	if ka == 0 && kb > 0 {
		rate = float64(kb) / float64(nb)
	}
	need := RunsToShow(rate, stats.Alpha, DefaultPower)
	return fmt.Sprintf("no difference shown at %d runs (p=%.3f); a rate of %.0f%% against none needs %d runs a side to show (80%% power)", n, p, 100*rate, need)
}

// metric is a figure compared by its samples (Mann-Whitney U).
type metric struct {
	name  string
	class string
	// higherWorse: a larger B is a regression (commands, latency); else a
	// smaller B is (grants).
	higherWorse bool
	// timed: measured in time, not gated on a busy machine.
	timed bool
	// thresholded: gated only beyond --max-regression (cost figures;
	// availability too, so that a machine's wobble is not a regression).
	samples func([]results.Run) []float64
	per     string // "run", "window", "fault window"
}

// metrics are the figures Compare tests by their samples.
var metrics = []metric{
	{name: "violations per run (overlapping pairs + lost updates; at-risk cells included)", class: ClassSafety, higherWorse: true, per: "run",
		samples: func(rs []results.Run) []float64 {
			return perRun(rs, func(r results.Run) float64 { return float64(r.Violations) })
		}},
	// Grants in a window of fixed length are a rate: a busy machine
	// lowers them for A and B alike, so the figure is timed (a lock that
	// grants nothing in a fault it tolerates fails the availability check
	// above, busy or not).
	{name: "grants per fault window (availability during faults)", class: ClassLiveness, timed: true, per: "fault window",
		samples: func(rs []results.Run) []float64 {
			return perFaultWindow(rs, func(w results.AvailabilityWindow) float64 { return float64(w.Grants) })
		}},
	{name: "grant call p50 in fault windows (ms)", class: ClassCost, higherWorse: true, timed: true, per: "fault window",
		samples: func(rs []results.Run) []float64 {
			return perFaultWindow(rs, func(w results.AvailabilityWindow) float64 { return ptr(w.GrantCallP50Ms) })
		}},
	{name: "grant call p99 in fault windows (ms)", class: ClassCost, higherWorse: true, timed: true, per: "fault window",
		samples: func(rs []results.Run) []float64 {
			return perFaultWindow(rs, func(w results.AvailabilityWindow) float64 { return ptr(w.GrantCallP99Ms) })
		}},
	{name: "commands per grant, counted on the servers", class: ClassCost, higherWorse: true, per: "run",
		samples: func(rs []results.Run) []float64 {
			return perRun(rs, func(r results.Run) float64 { return orNaN(r.RoundTripsPerGrant) })
		}},
	{name: "commands per acquire attempt, counted on the servers", class: ClassCost, higherWorse: true, per: "run",
		samples: func(rs []results.Run) []float64 {
			return perRun(rs, func(r results.Run) float64 { return orNaN(r.ServerCommandsPerAttempt) })
		}},
	{name: "grants/s per window", class: ClassCost, timed: true, per: "window",
		samples: func(rs []results.Run) []float64 { return figures.SamplesOf(rs, figures.FigureGrantsPerS) }},
	{name: "acquire p99 per window (ms)", class: ClassCost, higherWorse: true, timed: true, per: "window",
		samples: func(rs []results.Run) []float64 { return figures.SamplesOf(rs, figures.FigureAcquireP99Ms) }},
}

func perRun(rs []results.Run, f func(results.Run) float64) []float64 {
	out := make([]float64, len(rs))
	for i, r := range rs {
		out[i] = f(r)
	}
	return out
}

func perFaultWindow(rs []results.Run, f func(results.AvailabilityWindow) float64) []float64 {
	var out []float64
	for _, r := range rs {
		for _, w := range r.Availability {
			if w.Fault != results.QuietWindow && w.Acquires > 0 {
				out = append(out, f(w))
			}
		}
	}
	return out
}

func ptr(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

func orNaN(v float64) float64 {
	if v == 0 {
		return math.NaN()
	}
	return v
}

func finite(vs []float64) []float64 {
	var out []float64
	for _, v := range vs {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			out = append(out, v)
		}
	}
	return out
}

// compareMetric tests one figure's samples (Mann-Whitney U at
// stats.Alpha): a significant change in the worse direction is gated
// when it is beyond maxReg (relative to A's median; a safety figure whose
// A median is 0 at any size) and, for a figure in time, when no run was
// measured on a busy machine.
func compareMetric(sc string, m metric, sa, sb []float64, maxReg float64, busy bool) Finding {
	ea, eb := stats.EstimateOf(sa), stats.EstimateOf(sb)
	t := stats.CompareSamples(sa, sb)
	f := Finding{Scenario: sc, Figure: m.name + " (per " + m.per + ")", Class: m.class, Test: TestMannWhitney, P: t.P,
		A: ea.String(), B: eb.String(), Significant: t.Significant, Note: t.Note}
	if ea.N > 0 && eb.N > 0 && ea.Median != 0 {
		f.Relative = (eb.Median - ea.Median) / math.Abs(ea.Median)
	}
	if !t.Significant {
		f.Verdict = fmt.Sprintf("no difference shown at %d+%d samples (%s)", ea.N, eb.N, t)
		if t.Note != "" {
			f.Verdict += ": " + t.Note
		}
		return f
	}
	up := eb.Median > ea.Median
	f.Worse = up == m.higherWorse && eb.Median != ea.Median
	f.Better = !f.Worse && eb.Median != ea.Median
	change := fmt.Sprintf("%+.1f%%", 100*f.Relative)
	if ea.Median == 0 {
		change = fmt.Sprintf("from 0 to %s", stats.FormatNum(eb.Median))
	}
	switch {
	case f.Better:
		f.Verdict = fmt.Sprintf("B better: median %s (%s)", change, t)
	case m.timed && busy:
		f.Verdict = fmt.Sprintf("B worse: median %s (%s), not gated: runs were measured on a busy machine and this figure is in time", change, t)
	case m.class != ClassSafety && math.Abs(f.Relative) <= maxReg && ea.Median != 0:
		f.Verdict = fmt.Sprintf("B worse: median %s (%s), within --max-regression %.0f%%: not gated", change, t, 100*maxReg)
	default:
		f.Gated = true
		f.Verdict = fmt.Sprintf("B worse: median %s (%s)", change, t)
		if busy && !m.timed {
			f.Verdict += "; runs were measured on a busy machine, but a count does not change with machine load"
		}
	}
	return f
}
