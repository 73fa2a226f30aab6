// Package compare sets two results files side by side, cell by cell:
// verdicts that changed, canaries lost, cells missing, and cost figures
// tested for significance (lockbench compare); a gated finding fails.
package compare

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/lockbench/lockbench/checker"
	"github.com/lockbench/lockbench/figures"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/stats"
)

// DefaultMaxRegression is the relative performance change Compare flags by
// default: 0.1, a throughput drop or a p99 rise of more than 10%.
const DefaultMaxRegression = 0.1

// Finding kinds, as Compare reports them.
const (
	// FindingNewViolation: a check ok in every OLD run of a cell is violated
	// in a NEW run. Gated unless both files expect the check at risk (or
	// the check was expected to break: a canary that only now broke).
	FindingNewViolation = "new-violation"
	// FindingLostCanary: a must-break check violated in every OLD run of a
	// cell is not violated in some NEW run. Always gated.
	FindingLostCanary = "lost-canary"
	// FindingNewUnexpected: every OLD run of a cell was as expected and a
	// NEW run is not, for a reason other than a new violation or a lost
	// canary (e.g. a must-hold check inconclusive or with nothing to check,
	// no grants during a fault that must keep granting). Always gated: the
	// bench gate itself failed on NEW.
	FindingNewUnexpected = "new-unexpected"
	// FindingMissing: a cell of OLD has no run in NEW, or none that
	// completed. Always gated.
	FindingMissing = "missing"
	// FindingThroughput: the median grants/s over the cell's windows fell
	// by more than the threshold. Gated only when the difference is
	// significant (Mann-Whitney U, p < Alpha) and both sides were measured
	// alike (same host, clients and TTL, a quiet machine, inside the
	// strategy's working envelope).
	FindingThroughput = "throughput"
	// FindingP99: the median acquire p99 over the cell's windows rose by
	// more than the threshold; gated as FindingThroughput.
	FindingP99 = "p99"
	// FindingOverhead: the median round trips per hold (rtts/hold) of a
	// cell rose by more than the threshold; gated as FindingThroughput.
	FindingOverhead = "overhead"
	// FindingHandoff: the median handoff p50 (ms) of a cell rose by more
	// than the threshold; gated as FindingThroughput.
	FindingHandoff = "handoff"
	// FindingNewCell: a cell of NEW has no run in OLD. Never gated.
	FindingNewCell = "new-cell"
)

// Finding is one difference Compare reports for a cell.
type Finding struct {
	// Kind is one of the Finding* constants.
	Kind string `json:"kind"`
	// Gated is true when the finding fails the comparison (exit 1).
	Gated bool `json:"gated"`
	// Message says what changed, in one line.
	Message string `json:"message"`
}

// Change is a cost figure of a cell in OLD and NEW: the Estimate over the
// windows of each side's completed runs, the relative change of the
// medians ((new−old)/old; 0 when either side has no sample or OLD's median
// is 0) and the significance test between the two samples.
type Change struct {
	Old      stats.Estimate     `json:"old"`
	New      stats.Estimate     `json:"new"`
	Relative float64            `json:"relative"`
	Test     stats.Significance `json:"test"`
}

// changeOf compares a figure's samples over two sets of runs of one cell.
func changeOf(oldRuns, newRuns []results.Run, figure string) Change {
	o, n := figures.SamplesOf(oldRuns, figure), figures.SamplesOf(newRuns, figure)
	c := Change{Old: stats.EstimateOf(o), New: stats.EstimateOf(n), Test: stats.CompareSamples(o, n)}
	if c.Old.N > 0 && c.New.N > 0 && c.Old.Median != 0 {
		c.Relative = (c.New.Median - c.Old.Median) / c.Old.Median
	}
	return c
}

// CellComparison is one (strategy, scenario) cell side by side.
type CellComparison struct {
	Strategy string `json:"strategy"`
	Scenario string `json:"scenario"`
	// Expected is the cell's summary expectation (NEW's, else OLD's).
	Expected string `json:"expected"`
	// OldObserved and NewObserved count runs by observed outcome, e.g.
	// "held" or "held 2, violated 1"; empty for a side without the cell.
	OldObserved string `json:"old_observed"`
	NewObserved string `json:"new_observed"`
	// ThroughputPerS is grants per second; P50Ms and P99Ms the acquire
	// latency p50 and p99 in ms; CommandsPerGrant the commands the
	// clients sent per grant. Each is over the windows of the cell's runs.
	ThroughputPerS   Change `json:"throughput_per_s"`
	P50Ms            Change `json:"p50_ms"`
	P99Ms            Change `json:"p99_ms"`
	CommandsPerGrant Change `json:"commands_per_grant"`
	// RTTsPerHold is a hold's lock calls (p50) in round trips and
	// HoldP50Ms the same in ms (the overhead: measured in the uncontended
	// cost cells); HandoffP50Ms the handoff p50 in ms (contended cells).
	RTTsPerHold  Change `json:"rtts_per_hold"`
	HoldP50Ms    Change `json:"hold_p50_ms"`
	HandoffP50Ms Change `json:"handoff_p50_ms"`
	// Findings lists what changed; empty when nothing did.
	Findings []Finding `json:"findings,omitempty"`
}

// Comparison is the result of Compare.
type Comparison struct {
	// Old and New name the compared files.
	Old string `json:"old"`
	New string `json:"new"`
	// MaxRegression is the relative threshold used (0.1 = 10%).
	MaxRegression float64 `json:"max_regression"`
	// Warnings say what makes the comparison weaker, e.g. different hosts
	// (then performance changes are reported but not gated).
	Warnings []string `json:"warnings,omitempty"`
	// Cells are OLD's cells in OLD's order, then the cells only NEW has.
	Cells []CellComparison `json:"cells"`
	// Gated is the number of gated findings: the comparison failed when > 0.
	Gated int `json:"gated"`
}

// Failed reports whether any finding is gated (lockbench compare exits 1).
func (c Comparison) Failed() bool { return c.Gated > 0 }

// checkNames are the verdict checks compared, in report order.
var checkNames = []string{"exclusion", "resource", "liveness", "fencing", "reentrancy", "orphans", "lost", "extends", "reasons"}

// verdictOf returns a run's status for a named check.
func verdictOf(r results.Run, check string) checker.Status {
	switch check {
	case "exclusion":
		return r.Verdict.Exclusion
	case "resource":
		return r.Verdict.Resource
	case "liveness":
		return r.Verdict.Liveness
	case "fencing":
		return r.Verdict.Fencing
	case "reentrancy":
		return r.Verdict.Reentrancy
	case "orphans":
		return r.Verdict.Orphans
	case "lost":
		return r.Verdict.Lost
	case "extends":
		return r.Verdict.Extends
	case "reasons":
		return r.Verdict.Reasons
	}
	return ""
}

// expectOf returns the expectation of a check in the runs ("hold", "break"
// or "at-risk"); a check without one (fencing, reentrancy: strategy
// promises; the contract checks) is "hold".
func expectOf(rs []results.Run, check string) string {
	for _, r := range rs {
		if e := r.ExpectedChecks[check]; e != "" {
			return e
		}
	}
	return "hold"
}

// MinGateSeeds is the number of runs (seeds) of a cell each side of a
// comparison needs before a significant cost change is gated: the
// windows of a single run share its machine state, so their spread
// understates the spread between runs (measured: two identical ci
// benches, one seed each, differed significantly in 6 of 264 figures,
// one by 14%).
const MinGateSeeds = 2

// Compare sets NEW beside OLD cell by cell ((strategy, scenario), runs
// grouped over repeats) and flags: a new violation, a lost canary, a cell
// newly unexpected for another reason, a cell missing from NEW, a median
// throughput drop or a median acquire-p99 rise beyond maxRegression
// (relative, e.g. 0.1). A change exactly at the threshold is not flagged.
// Performance is compared on the cell's windows (Run.Windows: every
// repeat's windows pooled) as benchstat compares benchmarks: the medians
// with their 95% intervals, and the Mann-Whitney U test
// (golang.org/x/perf/benchmath) at Alpha; a change beyond the threshold
// that is not significant ("~") is reported, not gated. A significant
// change is not gated either when the hosts differ (CPUs, CPU model, OS),
// the cell's clients or TTL differ, a run of the cell was measured on a
// busy machine (Run.Busy), either side has fewer than MinGateSeeds runs
// of the cell, or a run was outside its strategy's working envelope
// (Run.NotComparable): the note says which. Runs that could not complete
// (Error set) are left out of every figure. Compare reads only its
// arguments.
func Compare(oldF, newF *results.File, oldName, newName string, maxRegression float64) Comparison {
	c := Comparison{Old: oldName, New: newName, MaxRegression: maxRegression}
	perfGated := true
	oh, nh := oldF.Host, newF.Host
	if oh.CPUs != nh.CPUs || oh.CPUModel != nh.CPUModel || oh.OS != nh.OS {
		perfGated = false
		c.Warnings = append(c.Warnings, fmt.Sprintf("different hosts (OLD: %d CPUs, %s, %s; NEW: %d CPUs, %s, %s): throughput and latency from two machines cannot be compared, so performance changes are reported but not gated; compare runs from the same machine",
			oh.CPUs, oh.CPUModel, oh.OS, nh.CPUs, nh.CPUModel, nh.OS))
	} else if oh.Kernel != nh.Kernel {
		c.Warnings = append(c.Warnings, fmt.Sprintf("different kernels (OLD %s, NEW %s): performance may differ for that reason alone", oh.Kernel, nh.Kernel))
	}
	if oldF.Redis != newF.Redis {
		c.Warnings = append(c.Warnings, fmt.Sprintf("different redis-server versions (OLD %s, NEW %s)", oldF.Redis, newF.Redis))
	}
	c.Warnings = append(c.Warnings, setupWarnings(oldF, newF)...)
	if oldF.Incomplete != "" {
		c.Warnings = append(c.Warnings, fmt.Sprintf("OLD is incomplete (%s): the cells it did not run are listed as only in NEW, not compared; compare complete runs", oldF.Incomplete))
	}
	if newF.Incomplete != "" {
		c.Warnings = append(c.Warnings, fmt.Sprintf("NEW is incomplete (%s): the cells it did not run are reported missing; compare complete runs", newF.Incomplete))
	}
	oldAll, newAll := withCostCells(oldF), withCostCells(newF)
	oldCells, oldOrder := groupRuns(oldAll)
	newCells, newOrder := groupRuns(newAll)
	oldSum, newSum := summaryByCell(oldAll), summaryByCell(newAll)
	for _, k := range oldOrder {
		oldC, newC := oldSum[k], newSum[k]
		cc := CellComparison{Strategy: k.strategy, Scenario: k.scenario, Expected: oldC.Expected, OldObserved: observedText(oldC)}
		nrs, ok := newCells[k]
		if !ok {
			cc.add(Finding{Kind: FindingMissing, Gated: true, Message: "cell missing from NEW: it ran in OLD but not in NEW"})
			c.Cells = append(c.Cells, cc)
			continue
		}
		if newC.Expected != "" {
			cc.Expected = newC.Expected
		}
		cc.NewObserved = observedText(newC)
		ors, nrsOK := completed(oldCells[k]), completed(nrs)
		if len(nrsOK) == 0 {
			cc.add(Finding{Kind: FindingMissing, Gated: true, Message: fmt.Sprintf("no run of the cell completed in NEW (%d failed to run)", len(nrs))})
		}
		if len(ors) > 0 && len(nrsOK) > 0 {
			for _, check := range checkNames {
				cc.compareCheck(check, ors, nrsOK, oldCells[k], nrs)
			}
			if len(cc.Findings) == 0 {
				cc.compareExpected(ors, nrsOK)
			}
		}
		cc.ThroughputPerS = changeOf(ors, nrsOK, figures.FigureGrantsPerS)
		cc.P50Ms = changeOf(ors, nrsOK, figures.FigureAcquireP50Ms)
		cc.P99Ms = changeOf(ors, nrsOK, figures.FigureAcquireP99Ms)
		cc.CommandsPerGrant = changeOf(ors, nrsOK, figures.FigureCommandsPerGrant)
		cc.RTTsPerHold = changeOf(ors, nrsOK, figures.FigureRTTsPerHold)
		cc.HoldP50Ms = changeOf(ors, nrsOK, figures.FigureHoldP50Ms)
		cc.HandoffP50Ms = changeOf(ors, nrsOK, figures.FigureHandoffP50Ms)
		gated := perfGated
		note := ""
		switch {
		case oldC.Clients != newC.Clients || oldC.TTLMs != newC.TTLMs:
			gated = false
			note = fmt.Sprintf(" (not gated: OLD ran %d clients, TTL %s ms; NEW %d clients, TTL %s ms)", oldC.Clients, stats.FormatNum(oldC.TTLMs), newC.Clients, stats.FormatNum(newC.TTLMs))
		case !perfGated:
			note = " (not gated: different hosts)"
		case oldC.Busy > 0 || newC.Busy > 0:
			gated = false
			note = fmt.Sprintf(" (not gated: measured on a busy machine: %s)", busyNote(oldC, newC))
		case oldC.Seeds < MinGateSeeds || newC.Seeds < MinGateSeeds:
			gated = false
			note = fmt.Sprintf(" (not gated: %d run(s) in OLD, %d in NEW: the windows of one run share its conditions and understate the spread between runs; gate cost figures on benches with --repeat %d or more)", oldC.Seeds, newC.Seeds, MinGateSeeds)
		case oldC.NotComparable > 0 || newC.NotComparable > 0:
			gated = false
			why := oldC.EnvelopeWhy
			if why == "" {
				why = newC.EnvelopeWhy
			}
			note = fmt.Sprintf(" (not gated: outside the strategy's working envelope: %s)", why)
		}
		for _, x := range []struct {
			kind, what, unit string
			c                Change
			higherIsWorse    bool
		}{{FindingThroughput, "throughput", "grants/s", cc.ThroughputPerS, false}, {FindingP99, "acquire p99", "ms", cc.P99Ms, true},
			{FindingOverhead, "overhead", "round trips per hold", cc.RTTsPerHold, true}, {FindingHandoff, "handoff p50", "ms", cc.HandoffP50Ms, true}} {
			if !Beyond(x.c, maxRegression, x.higherIsWorse) {
				continue
			}
			sign := "−"
			if x.higherIsWorse {
				sign = "+"
			}
			msg := fmt.Sprintf("%s %s → %s %s: %s, beyond %s%s", x.what, x.c.Old, x.c.New, x.unit, x.c.Test, sign, formatShare(maxRegression))
			g := gated && x.c.Test.Significant
			switch {
			case !x.c.Test.Significant && x.c.Test.Note != "":
				msg += fmt.Sprintf(" (not gated: not significant, %s; run both with more --repeat)", x.c.Test.Note)
			case !x.c.Test.Significant:
				msg += " (not gated: not significant at alpha 0.05: noise)"
			default:
				msg += note
			}
			cc.add(Finding{Kind: x.kind, Gated: g, Message: msg})
		}
		c.Cells = append(c.Cells, cc)
	}
	for _, k := range newOrder {
		if _, ok := oldCells[k]; ok {
			continue
		}
		newC := newSum[k]
		nrs := completed(newCells[k])
		cc := CellComparison{Strategy: k.strategy, Scenario: k.scenario, Expected: newC.Expected, NewObserved: observedText(newC),
			ThroughputPerS: changeOf(nil, nrs, figures.FigureGrantsPerS), P50Ms: changeOf(nil, nrs, figures.FigureAcquireP50Ms),
			P99Ms: changeOf(nil, nrs, figures.FigureAcquireP99Ms), CommandsPerGrant: changeOf(nil, nrs, figures.FigureCommandsPerGrant),
			RTTsPerHold: changeOf(nil, nrs, figures.FigureRTTsPerHold), HoldP50Ms: changeOf(nil, nrs, figures.FigureHoldP50Ms), HandoffP50Ms: changeOf(nil, nrs, figures.FigureHandoffP50Ms)}
		cc.add(Finding{Kind: FindingNewCell, Message: "cell only in NEW: nothing to compare it with"})
		c.Cells = append(c.Cells, cc)
	}
	for _, cc := range c.Cells {
		for _, f := range cc.Findings {
			if f.Gated {
				c.Gated++
			}
		}
	}
	return c
}

// setupWarnings says where OLD and NEW ran differently set up, which makes
// the comparison not like-for-like: the profile, the backend or Docker
// image (bench config, else the runs'), and per cell the library settings
// (config.library), the usage policy or the fencing mode (a --policy or
// --fencing override on one side). One warning per kind of difference,
// naming the first cell that shows it.
func setupWarnings(oldF, newF *results.File) []string {
	var out []string
	if oldF.Profile != newF.Profile {
		out = append(out, fmt.Sprintf("different profiles (OLD %s, NEW %s): the cells ran with different workloads; compare benches of the same profile", oldF.Profile, newF.Profile))
	}
	ob, oi := setupOf(oldF)
	nb, ni := setupOf(newF)
	if ob != nb {
		out = append(out, fmt.Sprintf("different backends (OLD %s, NEW %s): not like-for-like; compare runs on the same backend", ob, nb))
	} else if oi != ni {
		out = append(out, fmt.Sprintf("different Redis images (OLD %s, NEW %s): not like-for-like", orDash(oi), orDash(ni)))
	}
	oldCells, order := groupRuns(oldF.Runs)
	newCells, _ := groupRuns(newF.Runs)
	type diff struct {
		what, first, oldV, newV string
		cells                   int
	}
	diffs := map[string]*diff{}
	var kinds []string
	note := func(what string, k cellKey, o, n string) {
		d := diffs[what]
		if d == nil {
			d = &diff{what: what, first: k.strategy + "/" + k.scenario, oldV: o, newV: n}
			diffs[what] = d
			kinds = append(kinds, what)
		}
		d.cells++
	}
	for _, k := range order {
		nrs, ok := newCells[k]
		if !ok || len(oldCells[k]) == 0 {
			continue
		}
		o, n := oldCells[k][0].Config, nrs[0].Config
		if a, b := formatSettings(o.Library), formatSettings(n.Library); a != b {
			note("library settings (config.library)", k, a, b)
		}
		if a, b := strings.Join(o.Policy, ","), strings.Join(n.Policy, ","); a != b {
			note("usage policy (--policy)", k, orNone(a), orNone(b))
		}
		if o.Fencing != n.Fencing {
			note("fencing mode (--fencing)", k, orNone(o.Fencing), orNone(n.Fencing))
		}
	}
	for _, what := range kinds {
		d := diffs[what]
		out = append(out, fmt.Sprintf("different %s in %d cell(s), e.g. %s: OLD %s, NEW %s: not like-for-like", d.what, d.cells, d.first, d.oldV, d.newV))
	}
	return out
}

// setupOf returns a file's backend ("process" when none is recorded) and
// Docker image: the bench config's, else its first run's.
func setupOf(f *results.File) (backend, image string) {
	backend, image = f.Config.Workload.Backend, f.Config.Workload.Image
	if backend == "" && len(f.Runs) > 0 {
		backend, image = f.Runs[0].Config.Backend, f.Runs[0].Config.Image
	}
	if backend == "" {
		backend = "process"
	}
	return backend, image
}

// formatSettings writes library settings as "k=v k=v" in key order ("none" if empty).
func formatSettings(m map[string]string) string {
	if len(m) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + m[k]
	}
	return strings.Join(parts, " ")
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func (cc *CellComparison) add(f Finding) { cc.Findings = append(cc.Findings, f) }

// compareCheck flags a new violation or a lost canary of one check; ors and
// nrs are the completed runs, allOld and allNew every run (for expectations).
func (cc *CellComparison) compareCheck(check string, ors, nrs, allOld, allNew []results.Run) {
	oe, ne := expectOf(allOld, check), expectOf(allNew, check)
	oldAllOK, oldAllViolated := true, true
	for _, r := range ors {
		v := verdictOf(r, check)
		oldAllOK = oldAllOK && v == checker.OK
		oldAllViolated = oldAllViolated && v == checker.Violated
	}
	newViolated, newNotViolated := 0, 0
	for _, r := range nrs {
		switch verdictOf(r, check) {
		case checker.Violated:
			newViolated++
		case checker.Inconclusive: // too little evidence: no lost canary
		default:
			newNotViolated++
		}
	}
	switch {
	case oldAllOK && newViolated > 0 && oe != "break" && ne != "break":
		gated := oe == "hold" || ne == "hold"
		msg := fmt.Sprintf("new violation: %s ok in every OLD run (%d), violated in %d of %d NEW runs", check, len(ors), newViolated, len(nrs))
		if !gated {
			msg += " (at risk in both: not gated)"
		}
		cc.add(Finding{Kind: FindingNewViolation, Gated: gated, Message: msg})
	case oe == "break" && oldAllViolated && newNotViolated > 0:
		cc.add(Finding{Kind: FindingLostCanary, Gated: true, Message: fmt.Sprintf("lost canary: %s must break and was violated in every OLD run (%d), not in %d of %d NEW runs: the harness lost its teeth",
			check, len(ors), newNotViolated, len(nrs))})
	}
}

// compareExpected flags a cell whose completed OLD runs were all as
// expected and some completed NEW run is unexpected (ors and nrs are not
// empty); a NEW run that is inconclusive (Run.Outcome) contradicts
// nothing.
func (cc *CellComparison) compareExpected(ors, nrs []results.Run) {
	for _, r := range ors {
		if !r.AsExpected {
			return
		}
	}
	var bad []results.Run
	for _, r := range nrs {
		if r.Outcome() == results.OutcomeUnexpected {
			bad = append(bad, r)
		}
	}
	if len(bad) == 0 {
		return
	}
	cc.add(Finding{Kind: FindingNewUnexpected, Gated: true, Message: fmt.Sprintf("newly unexpected: as expected in every OLD run (%d), not in %d of %d NEW runs: %s",
		len(ors), len(bad), len(nrs), strings.Join(bad[0].Unexpected, "; "))})
}

// Beyond reports whether a cost figure got worse by more than the
// relative threshold maxRegression: for a figure where higher is better
// (grants/s, higherIsWorse false) NEW's median is below OLD's by more than
// maxRegression·OLD; for a cost (latency, higherIsWorse true) above it by
// more. It does not look at significance (Change.Test): Compare gates
// only changes that are both beyond and significant. Figures without
// samples on a side and an OLD median of 0 are never beyond.
func Beyond(c Change, maxRegression float64, higherIsWorse bool) bool {
	if c.Old.N == 0 || c.New.N == 0 || c.Old.Median == 0 {
		return false
	}
	rel := (c.New.Median - c.Old.Median) / c.Old.Median
	if !higherIsWorse {
		rel = -rel
	}
	return rel > maxRegression
}

// busyNote gives the numbers of the busy side(s) of a cell.
func busyNote(o, n figures.Summary) string {
	var parts []string
	if o.Busy > 0 {
		parts = append(parts, fmt.Sprintf("OLD %d of %d runs, %s", o.Busy, o.Seeds, o.BusyWhy))
	}
	if n.Busy > 0 {
		parts = append(parts, fmt.Sprintf("NEW %d of %d runs, %s", n.Busy, n.Seeds, n.BusyWhy))
	}
	return strings.Join(parts, "; ")
}

// ParseRegression parses a --max-regression value: a percentage ("10%",
// "2.5%") or a fraction ("0.1"), returning the fraction. A bare number
// above 1 ("10") is refused as ambiguous, as are negative and non-numeric
// values, and a percentage above 100%; the error says how to write it.
func ParseRegression(s string) (float64, error) {
	t := strings.TrimSpace(s)
	pct := strings.HasSuffix(t, "%")
	v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(t, "%")), 64)
	switch {
	case err != nil || math.IsNaN(v) || math.IsInf(v, 0):
		return 0, fmt.Errorf("--max-regression %q is not a number: write a percentage (10%%) or a fraction (0.1)", s)
	case v < 0:
		return 0, fmt.Errorf("--max-regression %q is negative: write a percentage (10%%) or a fraction (0.1)", s)
	case pct && v > 100:
		return 0, fmt.Errorf("--max-regression %q is above 100%%: the valid range is 0-100%% (or a fraction 0-1)", s)
	case pct:
		return v / 100, nil
	case v > 1:
		return 0, fmt.Errorf("--max-regression %q is ambiguous: write %s%% for a percentage or a fraction between 0 and 1", s, t)
	}
	return v, nil
}

// WriteText writes the comparison as a table, one cell a line, followed by
// its findings and warnings and a verdict line.
func (c Comparison) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "OLD %s\nNEW %s\n", c.Old, c.New)
	for _, warn := range c.Warnings {
		fmt.Fprintf(w, "warning: %s\n", warn)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "\nSTRATEGY\tSCENARIO\tEXPECTED\tOLD\tNEW\tTHROUGHPUT/s OLD → NEW\tP99 ms OLD → NEW\tRTTs/HOLD OLD → NEW\tHANDOFF p50 ms OLD → NEW\tFLAGS")
	for _, cc := range c.Cells {
		var flags []string
		for _, f := range cc.Findings {
			k := f.Kind
			if !f.Gated {
				k = "(" + k + ")"
			}
			flags = append(flags, k)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", cc.Strategy, cc.Scenario, orDash(cc.Expected),
			orDash(cc.OldObserved), orDash(cc.NewObserved), changeText(cc.ThroughputPerS), changeText(cc.P99Ms),
			changeText(cc.RTTsPerHold), changeText(cc.HandoffP50Ms), orDash(strings.Join(flags, ", ")))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var lines []string
	for _, cc := range c.Cells {
		for _, f := range cc.Findings {
			mark := "FAIL"
			if !f.Gated {
				mark = "note"
			}
			lines = append(lines, fmt.Sprintf("%s %s/%s: %s", mark, cc.Strategy, cc.Scenario, f.Message))
		}
	}
	if len(lines) > 0 {
		fmt.Fprintln(w)
		for _, l := range lines {
			fmt.Fprintln(w, l)
		}
	}
	verdict := "no regression"
	if c.Failed() {
		verdict = fmt.Sprintf("%d gated finding(s): regression", c.Gated)
	}
	_, err := fmt.Fprintf(w, "\n%s compared, max regression %s: %s\n", plural(len(c.Cells), "cell"), formatShare(c.MaxRegression), verdict)
	return err
}

// withCostCells returns f's runs followed by its uncontended cost runs
// (File.Cost), each cost run as its own cell: its scenario named
// CostCellName, so that compare sets it beside the same cell of the other
// file and never pools it with the contended baseline.
func withCostCells(f *results.File) []results.Run {
	out := slices.Clone(f.Runs)
	for _, r := range f.Cost {
		r.Scenario = figures.CostCellName(r)
		out = append(out, r)
	}
	return out
}

// groupRuns groups runs by cell, keeping the order of first appearance.
func groupRuns(runs []results.Run) (map[cellKey][]results.Run, []cellKey) {
	m := map[cellKey][]results.Run{}
	var order []cellKey
	for _, r := range runs {
		k := cellKey{r.Strategy, r.Scenario}
		if _, ok := m[k]; !ok {
			order = append(order, k)
		}
		m[k] = append(m[k], r)
	}
	return m, order
}

type cellKey struct{ strategy, scenario string }

func summaryByCell(runs []results.Run) map[cellKey]figures.Summary {
	m := map[cellKey]figures.Summary{}
	for _, s := range figures.Summarize(runs) {
		m[cellKey{s.Strategy, s.Scenario}] = s
	}
	return m
}

// completed returns the runs without an Error.
func completed(rs []results.Run) []results.Run {
	return slices.DeleteFunc(slices.Clone(rs), func(r results.Run) bool { return r.Error != "" })
}

// observedText counts a cell's runs by observed outcome: "held", "held 2, violated 1".
func observedText(s figures.Summary) string {
	var parts []string
	for _, o := range []string{figures.ObservedHeld, figures.ObservedViolated, figures.ObservedInconclusive, figures.ObservedUnchecked, figures.ObservedError} {
		switch n := s.Observed[o]; {
		case n == 0:
		case n == s.Seeds:
			parts = append(parts, o)
		default:
			parts = append(parts, fmt.Sprintf("%s %d", o, n))
		}
	}
	return strings.Join(parts, ", ")
}

// changeText writes a figure in OLD and NEW as benchstat does: each side's
// median with its 95% interval, then the change ("~" when not
// significant) with the p-value and sample counts.
func changeText(c Change) string {
	switch {
	case c.Old.N == 0 && c.New.N == 0:
		return "—"
	case c.Old.N == 0:
		return "— → " + c.New.String()
	case c.New.N == 0:
		return c.Old.String() + " → —"
	}
	return fmt.Sprintf("%s → %s %s", c.Old, c.New, c.Test)
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// formatShare writes a share in 0..1 as a percentage, e.g. "12.5%".
func formatShare(v float64) string {
	return strconv.FormatFloat(100*v, 'f', 1, 64) + "%"
}

// plural writes n with word, adding an s unless n is 1, e.g. "2 runs".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
