// Package report writes the report of a results folder: report.md (the
// answer first: the chooser with the like-for-like cost columns and the
// recommendations, then the harness gate and the cost table), details.md
// and index.html, from results.json and the plots package plots drew; and
// the verdict and counts lines lockbench prints (Outcome). It reads
// results; it defines no schema and computes figures through package
// figures.
package report

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	htmltemplate "html/template"
	"maps"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	texttemplate "text/template"

	"github.com/lockbench/lockbench/compare"
	"github.com/lockbench/lockbench/figures"
	"github.com/lockbench/lockbench/internal/atomicfile"
	"github.com/lockbench/lockbench/internal/noise"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/stats"
)

//go:embed templates/report.md.tmpl templates/details.md.tmpl templates/index.html.tmpl
var templateFS embed.FS

// PlotRef names one plot for the report. PNG and SVG are paths relative to
// the results folder (either may be empty); the reports show the PNG and
// link the SVG. Strategy and Scenario are set for a timeline of one pair
// (Key too when the pair has timelines of several keys): the reports list
// timelines as links in a strategy × scenario table instead of showing
// each.
type PlotRef struct {
	Title string
	PNG   string
	SVG   string

	Strategy, Scenario, Key string
}

// WriteReport renders f as dir/report.md, dir/details.md and
// dir/index.html, creating dir if needed. Both reports lead with the
// answer: the verdict line, then the chooser table (strategies grouped,
// one class per (strategy, scenario) pair with what was observed, and each
// strategy's cost from its baseline pair: median, 95% interval and sample
// count), and one recommendation per need derived from those cells; then
// the harness gate (expected against observed), unexpected results,
// performance (significance against a reference strategy, machine noise,
// contention), plots, faults, runs, strategies and the host, tool and
// Redis versions. Reasons and footnotes are one click away: in details.md
// for report.md, in <details> elements of index.html. index.html links
// the plots' PNG files (relative paths, lazily loaded) instead of
// embedding them, and fetches nothing else: its CSS is inline. Links are
// relative, so the folder can be moved or served as is. Every value from f
// is escaped for its format. Errors come from rendering (wrapped) or from
// the file system.
func WriteReport(dir string, f *results.File, plots []PlotRef) error {
	if f == nil {
		return errors.New("results: report: nil File")
	}
	v := buildView(f, plots)
	for i := range v.Plots {
		v.Plots[i].Missing = missingFile(dir, v.Plots[i].PNG)
	}
	mdFuncs := texttemplate.FuncMap{"md": func(v any) string { return escapeMarkdown(fmt.Sprint(v)) }, "url": markdownURL, "code": markdownCode}
	var pages []struct {
		name string
		data []byte
	}
	for _, name := range []string{results.ReportMarkdown, results.DetailsMarkdown} {
		t, err := texttemplate.New(name+".tmpl").Funcs(texttemplate.FuncMap(viewFuncs())).Funcs(mdFuncs).ParseFS(templateFS, "templates/"+name+".tmpl")
		if err != nil {
			return fmt.Errorf("results: parse Markdown template: %w", err)
		}
		var b bytes.Buffer
		if err := t.Execute(&b, v); err != nil {
			return fmt.Errorf("results: render %s: %w", name, err)
		}
		pages = append(pages, struct {
			name string
			data []byte
		}{name, b.Bytes()})
	}
	htmlT, err := htmltemplate.New("index.html.tmpl").Funcs(htmltemplate.FuncMap(viewFuncs())).ParseFS(templateFS, "templates/index.html.tmpl")
	if err != nil {
		return fmt.Errorf("results: parse HTML template: %w", err)
	}
	var html bytes.Buffer
	if err := htmlT.Execute(&html, v); err != nil {
		return fmt.Errorf("results: render %s: %w", results.ReportHTML, err)
	}
	if err := mkdir(dir); err != nil {
		return err
	}
	for _, p := range pages {
		if err := atomicfile.Write(filepath.Join(dir, p.name), p.data); err != nil {
			return err
		}
	}
	return atomicfile.Write(filepath.Join(dir, results.ReportHTML), html.Bytes())
}

// view is what both report templates render.
type view struct {
	Title      string
	F          *results.File
	Unexpected []results.Run
	Scenarios  []string
	Matrix     []matrixRow
	Notes      []matrixNote
	// Chooser is the chooser table: observed outcomes per pair in plain
	// words, strategies grouped (buildChooser), columns Scenarios, with each
	// strategy's cost figures.
	Chooser []chooserRow
	// ChooserCost says where the chooser's cost figures come from, e.g.
	// "baseline: 16 clients, 1 key, TTL 100 ms" ("" when no pair ran
	// without faults).
	ChooserCost string
	// CostTable is what each lock costs, like for like (costTable): its
	// overhead and handoff beside their bounds and its capacity curve.
	CostTable []costRow
	// CapacityPlot is the capacity plot's PNG, relative to the report
	// (the plot named CapacityPlotName); "" when none was drawn.
	CapacityPlot string
	// LikeForLike says whether every strategy's cost cells ran the same
	// critical section and think time (likeForLike).
	LikeForLike string
	// Recommendations are one line per need (scenario), derived from
	// the chooser's cells.
	Recommendations []recommendation
	// Families compares the Redis, etcd and ZooKeeper locks, one
	// sentence per scenario that two of them ran (FamilyComparisons).
	Families []string
	// Timelines are the timeline plots as links, one row per strategy,
	// one cell per scenario; TimelineCount is how many there are.
	Timelines     []timelineRow
	TimelineCount int
	// BusyPairs and NotComparablePairs count the pairs with a run measured
	// on a busy machine or outside the strategy's working envelope.
	BusyPairs, NotComparablePairs int
	// Contention describes each run configuration (clients, keys, CS,
	// retry) under the performance table.
	Contention []string
	// OneKey is true when some run used a single key (full contention).
	OneKey     bool
	Summaries  []figures.Summary
	Runs       []runView
	Faulted    []runView
	Strategies []results.StrategyInfo
	Plots      []plotView
	// AsExpected is how many runs had verdicts as expected.
	AsExpected int
	// Inconclusive are the runs with a gated check that lacked evidence
	// (Run.Outcome "inconclusive"); Evidence the runs with anything to say
	// about their evidence (a check inconclusive, a liveness finding, or
	// earlier attempts a bench reran), each with it in words.
	Inconclusive []results.Run
	Evidence     []evidenceView
	// Significance compares each strategy's cost figures with a
	// reference strategy's in one scenario (significanceRows).
	Significance significanceTable
	// EvidenceLine counts Evidence in one line, e.g. "2 runs fell short
	// of evidence (1 inconclusive, 1 rerun)"; "" without any.
	EvidenceLine string
	// Thresholds states when a run counts as busy.
	Thresholds string
	// NotRun names the scenarios the bench's profile left out
	// (BenchConfig.NotRun): the report says what it did not test.
	NotRun string
	// LongerTTL says, one sentence per strategy, which strategies ran at
	// a TTL other than the profile's and why (StrategyInfo.TTLMs).
	LongerTTL []string
}

// significanceTable compares the cost figures of the strategies of one
// scenario with those of a reference strategy.
type significanceTable struct {
	Scenario, Ref string
	Rows          []significanceRow
	// OneRun is set when a strategy ran the scenario fewer than
	// MinGateSeeds times: its windows show the spread within one run, not
	// between runs, so a small significant difference is a hint.
	OneRun bool
}

// significanceRow is one strategy against the reference: per cost figure
// (Figures order), benchstat's "vs base" text.
type significanceRow struct {
	Strategy string
	Cells    []string
}

// preferredRef is the reference strategy of the significance table when
// it ran: the seeds' "basic correct" lock.
const preferredRef = "token-lua"

// significanceRows compares, in the baseline scenario (else the first
// scenario that ran), every strategy's window samples of each cost
// figure with those of token-lua (else the first strategy of the
// scenario) by the Mann-Whitney U test (CompareSamples): the change of the
// medians, or "~" when the difference is not significant, with the
// p-value and both sample counts. Only completed runs count; other
// scenarios' windows are never pooled in.
func significanceRows(runs []results.Run, strategies, scenarios []string) significanceTable {
	if len(scenarios) == 0 {
		return significanceTable{}
	}
	sc := scenarios[0]
	if slices.Contains(scenarios, "baseline") {
		sc = "baseline"
	}
	by := map[string][]results.Run{}
	for _, r := range runs {
		if r.Scenario == sc && r.Error == "" {
			by[r.Strategy] = append(by[r.Strategy], r)
		}
	}
	t := significanceTable{Scenario: sc}
	if len(by[preferredRef]) > 0 {
		t.Ref = preferredRef
	} else {
		for _, st := range strategies {
			if len(by[st]) > 0 {
				t.Ref = st
				break
			}
		}
	}
	if t.Ref == "" {
		return significanceTable{}
	}
	for _, st := range strategies {
		if st == t.Ref || len(by[st]) == 0 {
			continue
		}
		row := significanceRow{Strategy: st}
		for _, fig := range figures.Figures {
			ref, other := figures.SamplesOf(by[t.Ref], fig), figures.SamplesOf(by[st], fig)
			if len(ref) == 0 || len(other) == 0 {
				row.Cells = append(row.Cells, "—") // not measured (e.g. no command count)
				continue
			}
			row.Cells = append(row.Cells, stats.CompareSamples(ref, other).String())
		}
		t.Rows = append(t.Rows, row)
		if len(by[st]) < compare.MinGateSeeds {
			t.OneRun = true
		}
	}
	if len(by[t.Ref]) < compare.MinGateSeeds {
		t.OneRun = true
	}
	return t
}

// costText writes a cost figure of a pair as "median [low, high] (n=N)",
// prefixed "not comparable:" when a run of the pair was outside its
// strategy's working envelope.
func costText(s figures.Summary, figure string) string {
	e := s.Cost.Of(figure).String()
	if s.NotComparable > 0 && s.Cost.Of(figure).N > 0 {
		return "not comparable: " + e
	}
	return e
}

// noiseText writes the machine noise of a pair's runs: "BUSY k/n: why"
// first when runs were measured on a busy machine, then the medians over
// runs of other processes' CPU, steal, run queue and round-trip p99, and
// the working-envelope verdict when a run was outside it; "—" when no
// run measured noise.
func noiseText(s figures.Summary) string {
	var parts []string
	if s.Busy > 0 {
		parts = append(parts, fmt.Sprintf("BUSY %d/%d: %s", s.Busy, s.Seeds, s.BusyWhy))
	}
	if s.OtherCPUCores.N > 0 {
		parts = append(parts, fmt.Sprintf("other CPU %s cores, steal %s, run queue %s", formatNum(s.OtherCPUCores.Median), formatShare(s.StealShare.Median), formatNum(s.RunQueue.Median)))
	}
	if s.RTTP99Ms.N > 0 {
		parts = append(parts, fmt.Sprintf("RTT p99 %s ms", formatNum(s.RTTP99Ms.Median)))
	}
	if s.NotComparable > 0 {
		parts = append(parts, fmt.Sprintf("NOT COMPARABLE %d/%d: %s", s.NotComparable, s.Seeds, s.EnvelopeWhy))
	}
	if len(parts) == 0 {
		return "—"
	}
	return strings.Join(parts, "; ")
}

// hostText writes the host line of the report: CPUs, OS, Go, CPU model,
// and what bears on noise (a hypervisor, memory, a CPU quota).
func hostText(h results.Host) string {
	parts := []string{fmt.Sprintf("%d CPUs", h.CPUs), h.OS, h.Go}
	if h.CPUModel != "" {
		parts = append(parts, h.CPUModel)
	}
	if h.Hypervisor {
		parts = append(parts, "virtual machine (hypervisor: steal possible)")
	}
	if h.MemoryMB > 0 {
		parts = append(parts, fmt.Sprintf("%d MiB memory", h.MemoryMB))
	}
	if h.CPUQuotaCores > 0 {
		parts = append(parts, fmt.Sprintf("CPU quota %s cores", formatNum(h.CPUQuotaCores)))
	}
	return strings.Join(parts, ", ")
}

// evidenceView is what one run's evidence lacked, in words: per check
// ("exclusion: 2 holds, ... : run longer (--duration) ..."), the liveness
// finding, and the earlier attempts of the cell a bench reran.
type evidenceView struct {
	Strategy, Scenario string
	Seed               int64
	Outcome            string
	Missing            []string
	Finding            string
	Rerun              string
}

// evidenceOf is a run's evidenceView; ok is false when there is nothing
// to say (no check lacked evidence, no finding, no rerun).
func evidenceOf(r results.Run) (evidenceView, bool) {
	e := evidenceView{Strategy: r.Strategy, Scenario: r.Scenario, Seed: r.Seed, Outcome: r.Outcome(), Finding: r.LivenessFinding, Rerun: RerunNote(r),
		Missing: missingByText(r.Missing, results.MissingEvidence.String)}
	return e, len(e.Missing) > 0 || e.Finding != "" || e.Rerun != ""
}

// missingByText writes a run's missing evidence one line per distinct text
// (text of each MissingEvidence), the checks that share it named first:
// "exclusion, resource: 2 holds, ... (need ≥ 10): run longer ...".
func missingByText(m map[string]results.MissingEvidence, text func(results.MissingEvidence) string) []string {
	var order []string
	names := map[string][]string{}
	for _, name := range slices.Sorted(maps.Keys(m)) {
		t := text(m[name])
		if names[t] == nil {
			order = append(order, t)
		}
		names[t] = append(names[t], name)
	}
	out := make([]string, 0, len(order))
	for _, t := range order {
		out = append(out, strings.Join(names[t], ", ")+": "+t)
	}
	return out
}

// evidenceLine counts runs that fell short of evidence, e.g. "3 runs fell
// short of evidence (2 inconclusive, 1 liveness finding, 1 rerun)"; ""
// for none. A run counts once in the total and in each kind it shows.
func evidenceLine(es []evidenceView) string {
	if len(es) == 0 {
		return ""
	}
	var inconclusive, findings, reruns int
	for _, e := range es {
		if e.Outcome == results.OutcomeInconclusive {
			inconclusive++
		}
		if e.Finding != "" {
			findings++
		}
		if e.Rerun != "" {
			reruns++
		}
	}
	var kinds []string
	for _, k := range []struct {
		n    int
		what string
	}{{inconclusive, "inconclusive"}, {findings, "liveness finding"}, {reruns, "rerun"}} {
		switch {
		case k.n == 0:
		case k.what == "inconclusive":
			kinds = append(kinds, fmt.Sprintf("%d inconclusive", k.n))
		default:
			kinds = append(kinds, plural(k.n, k.what))
		}
	}
	s := plural(len(es), "run") + " fell short of evidence"
	if len(kinds) > 0 {
		s += " (" + strings.Join(kinds, ", ") + ")"
	}
	return s
}

// RerunNote says, for a run a bench ran after inconclusive attempts of its
// cell (Run.Earlier), how often and why, e.g. "rerun 2 times: seed 1 (1 s)
// was inconclusive (exclusion: 2 holds, 0 chances to overlap (need ≥ 10)),
// seed 2 (2 s) was inconclusive (...)"; "" for a run that was not rerun.
func RerunNote(r results.Run) string {
	if len(r.Earlier) == 0 {
		return ""
	}
	var parts []string
	for _, e := range r.Earlier {
		why := missingByText(e.Missing, func(m results.MissingEvidence) string { return m.What })
		if len(why) == 0 {
			why = e.Inconclusive
		}
		parts = append(parts, fmt.Sprintf("seed %d (%g s) was inconclusive (%s)", e.Seed, e.Config.DurationMs/1000, strings.Join(why, "; ")))
	}
	times := "once"
	if len(r.Earlier) > 1 {
		times = fmt.Sprintf("%d times", len(r.Earlier))
	}
	return "rerun " + times + ": " + strings.Join(parts, ", ")
}

// plotView is a PlotRef with Missing set when its PNG file is absent.
type plotView struct {
	PlotRef
	Missing bool
}

// missingFile reports whether dir/rel (a PNG path; "" is not missing) is
// absent or empty.
func missingFile(dir, rel string) bool {
	if rel == "" {
		return false
	}
	st, err := os.Stat(filepath.Join(dir, rel))
	return err != nil || st.Size() == 0
}

// timelineRow is one strategy's timelines: per scenario (view.Scenarios'
// order) the links to its timeline plots, none where there is no timeline.
type timelineRow struct {
	Strategy string
	Cells    [][]PlotRef
}

// timelineTable arranges the timeline plots (PlotRef with a Strategy) as
// rows of strategies (in the order given, then others in the order they
// first appear) and columns of scenarios, and returns the other plots.
func timelineTable(plots []PlotRef, strategies, scenarios []string) (rows []timelineRow, others []PlotRef, n int) {
	at := map[pairKey][]PlotRef{}
	order := slices.Clone(strategies)
	for _, p := range plots {
		if p.Strategy == "" {
			others = append(others, p)
			continue
		}
		if !slices.Contains(order, p.Strategy) {
			order = append(order, p.Strategy)
		}
		at[pairKey{p.Strategy, p.Scenario}] = append(at[pairKey{p.Strategy, p.Scenario}], p)
		n++
	}
	for _, st := range order {
		row := timelineRow{Strategy: st, Cells: make([][]PlotRef, len(scenarios))}
		any := false
		for i, sc := range scenarios {
			row.Cells[i] = at[pairKey{st, sc}]
			any = any || len(row.Cells[i]) > 0
		}
		if any {
			rows = append(rows, row)
		}
	}
	return rows, others, n
}

type matrixRow struct {
	Strategy string
	Cells    []matrixCell
}

// matrixCell is one (strategy, scenario) pair of the verdict matrix; Ran is
// false where the pair was not run.
type matrixCell struct {
	Ran    bool
	Text   string // e.g. "must-break → violated ✓"
	Class  string // "ok", "unexpected", "inconclusive", "risk": a CSS class from a fixed set
	Reason string
	Note   int // number of the reason in the notes list
}

type matrixNote struct {
	N                  int
	Strategy, Scenario string
	Reason             string
}

// runView is a Run with derived fields for the templates.
type runView struct {
	results.Run
	Observed string
	Checks   []checkMsg
	// Contract sums up the contract checks' verdicts (ContractSummary);
	// ContractWitnesses are their witnesses' lines (ContractWitnessLines).
	Contract          string
	ContractWitnesses []string
}

type checkMsg struct{ Name, Message string }

func buildView(f *results.File, plots []PlotRef) view {
	v := view{
		Title:      "lockbench report",
		F:          f,
		Summaries:  figures.Summarize(f.Runs),
		Strategies: f.Strategies,
	}
	if f.Profile != "" {
		v.Title += ": " + f.Profile
	}
	for _, r := range f.Runs {
		rv := runView{Run: r, Observed: figures.Observed(r), Contract: ContractSummary(r), ContractWitnesses: ContractWitnessLines(r, maxContractWitnessLines)}
		names := make([]string, 0, len(r.Checks))
		for name := range r.Checks {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			rv.Checks = append(rv.Checks, checkMsg{name, r.Checks[name]})
		}
		v.Runs = append(v.Runs, rv)
		if len(r.Faults) > 0 {
			v.Faulted = append(v.Faulted, rv)
		}
		switch r.Outcome() {
		case results.OutcomeUnexpected:
			v.Unexpected = append(v.Unexpected, r)
		case results.OutcomeInconclusive:
			v.Inconclusive = append(v.Inconclusive, r)
		default:
			v.AsExpected++
		}
		if e, ok := evidenceOf(r); ok {
			v.Evidence = append(v.Evidence, e)
		}
	}

	// Rows: strategies in the order File.Strategies lists them, then any other
	// strategy that ran; columns: scenarios in the order they first ran.
	var strategies []string
	ran := map[string]bool{}
	for _, r := range f.Runs {
		ran[r.Strategy] = true
		if !slices.Contains(v.Scenarios, r.Scenario) {
			v.Scenarios = append(v.Scenarios, r.Scenario)
		}
	}
	for _, s := range f.Strategies {
		if ran[s.Name] && !slices.Contains(strategies, s.Name) {
			strategies = append(strategies, s.Name)
		}
	}
	for _, r := range f.Runs {
		if !slices.Contains(strategies, r.Strategy) {
			strategies = append(strategies, r.Strategy)
		}
	}
	type pair struct{ strategy, scenario string }
	byPair := map[pair]figures.Summary{}
	for _, s := range v.Summaries {
		byPair[pair{s.Strategy, s.Scenario}] = s
	}
	for _, st := range strategies {
		row := matrixRow{Strategy: st}
		for _, sc := range v.Scenarios {
			s, ok := byPair[pair{st, sc}]
			if !ok {
				row.Cells = append(row.Cells, matrixCell{})
				continue
			}
			c := cellOf(s)
			if c.Reason != "" {
				c.Note = len(v.Notes) + 1
				v.Notes = append(v.Notes, matrixNote{N: c.Note, Strategy: st, Scenario: sc, Reason: c.Reason})
			}
			row.Cells = append(row.Cells, c)
		}
		v.Matrix = append(v.Matrix, row)
	}
	v.Chooser = buildChooser(f.Runs, f.Cost, strategies, v.Scenarios, v.Summaries, f.Strategies)
	v.ChooserCost = chooserCost(v.Chooser)
	v.LikeForLike = likeForLike(f.Runs)
	v.Recommendations = recommend(v.Chooser, v.Scenarios, f.Strategies)
	v.Families = FamilyComparisons(f)
	var others []PlotRef
	v.Timelines, others, v.TimelineCount = timelineTable(plots, strategies, v.Scenarios)
	for _, p := range others {
		v.Plots = append(v.Plots, plotView{PlotRef: p})
		if strings.TrimSuffix(filepath.Base(p.PNG), ".png") == results.CapacityPlotName {
			v.CapacityPlot = p.PNG
		}
	}
	var order []string
	for _, r := range v.Chooser {
		order = append(order, r.Strategy)
	}
	v.CostTable = costTable(f, order)
	for _, s := range v.Summaries {
		if s.Busy > 0 {
			v.BusyPairs++
		}
		if s.NotComparable > 0 {
			v.NotComparablePairs++
		}
	}
	v.Significance = significanceRows(f.Runs, strategies, v.Scenarios)
	v.EvidenceLine = evidenceLine(v.Evidence)
	v.Thresholds = fmt.Sprintf("a run is busy when processes other than lockbench and its servers used more than %s cores on average, or steal took more than %s of the CPU time", formatNum(noise.BusyOtherCores), formatShare(noise.BusySteal))
	v.Contention = contentionNotes(f.Runs)
	v.NotRun = strings.Join(f.Config.NotRun, ", ")
	for _, si := range f.Strategies {
		if si.TTLMs > 0 {
			v.LongerTTL = append(v.LongerTTL, fmt.Sprintf("%s ran at TTL %s ms: %s; its critical section stayed the profile's, so its costs compare.", si.Name, formatNum(si.TTLMs), si.TTLWhy))
		}
	}
	for _, r := range f.Runs {
		v.OneKey = v.OneKey || r.Config.Keys == 1
	}
	return v
}

// cellOf writes a pair's expected and observed outcome, e.g.
// "must-break → violated ✓", "must-hold → VIOLATED ✗",
// "must-hold → inconclusive ?" (a gated check lacked evidence; the
// "Evidence" section says what) or, over several seeds with mixed
// outcomes, "must-hold → HELD 2, VIOLATED 1 ✗ (2/3 as expected)".
// Unexpected wins over inconclusive.
func cellOf(s figures.Summary) matrixCell {
	var parts []string
	for _, o := range []string{figures.ObservedHeld, figures.ObservedViolated, figures.ObservedInconclusive, figures.ObservedUnchecked, figures.ObservedError} {
		n := s.Observed[o]
		switch {
		case n == 0:
		case n == s.Seeds:
			parts = append(parts, o)
		default:
			parts = append(parts, fmt.Sprintf("%s %d", o, n))
		}
	}
	observed := strings.Join(parts, ", ")
	unexpected := s.Seeds - s.AsExpected - s.Inconclusive
	mark, class := "✓", "ok"
	switch {
	case unexpected > 0:
		observed = strings.ToUpper(observed)
		mark, class = "✗", "unexpected"
	case s.Inconclusive > 0:
		mark, class = "?", "inconclusive"
	case s.Expected == "at-risk":
		class = "risk"
	}
	expected := s.Expected
	if expected == "" {
		expected = "no expectation"
	}
	text := fmt.Sprintf("%s → %s %s", expected, observed, mark)
	switch {
	case unexpected > 0:
		text += fmt.Sprintf(" (%d/%d as expected)", s.AsExpected, s.Seeds)
	case s.Inconclusive > 0 && s.Seeds > 1:
		text += fmt.Sprintf(" (%d/%d inconclusive)", s.Inconclusive, s.Seeds)
	case s.Seeds > 1:
		text += fmt.Sprintf(" (%d seeds)", s.Seeds)
	}
	return matrixCell{Ran: true, Text: text, Class: class, Reason: s.Reason}
}

// viewFuncs are the formatting functions shared by both templates.
func viewFuncs() map[string]any {
	return map[string]any{
		"num":         formatNum,
		"spread":      formatSpread,
		"counts":      formatCountSpread,
		"share":       formatShare,
		"pct":         formatSpreadShare,
		"join":        strings.Join,
		"observed":    figures.Observed,
		"cost":        costText,
		"noise":       noiseText,
		"host":        hostText,
		"hostsDiffer": results.HostsDiffer,
		"list":        formatList,
		"recovery": func(ms float64) string {
			switch {
			case ms < 0:
				return "no grant after the faults"
			case ms == 0:
				return "no fault"
			}
			return formatNum(ms) + " ms"
		},
		"isURL": isWebURL,
		"strategyInfo": func(f *results.File, name string) *results.StrategyInfo {
			for i := range f.Strategies {
				if f.Strategies[i].Name == name {
					return &f.Strategies[i]
				}
			}
			return nil
		},
		"add":     func(a, b int) int { return a + b },
		"groupOf": GroupOf,
		"runs": func(n int) string {
			if n == 1 {
				return "1 run"
			}
			return strconv.Itoa(n) + " runs"
		},
	}
}

// formatNum writes v as the reports do (stats.FormatNum).
func formatNum(v float64) string { return stats.FormatNum(v) }

// formatSpread writes "median (min–max)", only the median when there is no
// range, and "—" when there are no values.
func formatSpread(s stats.Spread) string {
	if s.N == 0 {
		return "—"
	}
	if s.Min == s.Max {
		return formatNum(s.Median)
	}
	return fmt.Sprintf("%s (%s–%s)", formatNum(s.Median), formatNum(s.Min), formatNum(s.Max))
}

// formatCountSpread is formatSpread for counts: whole numbers without
// decimals (a median of an even number of runs may end in .5).
func formatCountSpread(s stats.Spread) string {
	if s.N == 0 {
		return "—"
	}
	c := func(v float64) string {
		if v == math.Trunc(v) && math.Abs(v) < 1e15 {
			return strconv.FormatFloat(v, 'f', 0, 64)
		}
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	if s.Min == s.Max {
		return c(s.Median)
	}
	return fmt.Sprintf("%s (%s–%s)", c(s.Median), c(s.Min), c(s.Max))
}

// formatShare writes a share in 0..1 as a percentage.
func formatShare(v float64) string {
	return strconv.FormatFloat(100*v, 'f', 1, 64) + "%"
}

// formatSpreadShare is formatSpread for shares in 0..1, written as percentages.
func formatSpreadShare(s stats.Spread) string {
	if s.N == 0 {
		return "—"
	}
	if s.Min == s.Max {
		return formatShare(s.Median)
	}
	return fmt.Sprintf("%s (%s–%s)", formatShare(s.Median), formatShare(s.Min), formatShare(s.Max))
}

// formatList joins a list with commas, or returns empty (the "none" word) for no items.
func formatList(xs []string, empty string) string {
	if len(xs) == 0 {
		return empty
	}
	return strings.Join(xs, ", ")
}

// escapeMarkdown escapes s for inline Markdown text, table cells included:
// characters that start emphasis, code, links, raw HTML, entities or table
// cells get a backslash (CommonMark: any ASCII punctuation may be escaped), and
// line breaks become spaces.
func escapeMarkdown(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '\\', '`', '*', '_', '[', ']', '<', '>', '|', '&', '~', '#', '!':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '\n', '\r':
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// markdownURL escapes a link for a Markdown link destination. An http or
// https URL is re-encoded; anything else is taken as a relative path:
// spaces, parentheses and the like are percent-encoded, and "./" is prefixed
// when the first segment holds a colon so the path cannot read as a URL
// scheme (javascript: and the like).
func markdownURL(p string) string {
	if isWebURL(p) {
		if u, err := url.Parse(p); err == nil {
			return strings.NewReplacer("(", "%28", ")", "%29", " ", "%20", "<", "%3C", ">", "%3E").Replace(u.String())
		}
	}
	return (&url.URL{Path: filepath.ToSlash(p)}).String()
}

// isWebURL reports whether s is an absolute http or https URL.
func isWebURL(s string) bool {
	return strings.HasPrefix(s, "https://") || strings.HasPrefix(s, "http://")
}

// markdownCode writes s as a code span whose backtick fence is longer than any
// run of backticks in s; line breaks become spaces. Use it outside tables.
func markdownCode(s string) string {
	s = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(s)
	longest, run := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return fence + s + fence
}

func mkdir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("results: create folder: %w", err)
	}
	return nil
}
