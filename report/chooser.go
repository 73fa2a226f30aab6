package report

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/lockbench/lockbench/checker"
	"github.com/lockbench/lockbench/figures"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/stats"
)

// This file derives the chooser table, the first thing a report shows:
// for each (strategy, scenario) pair what the checkers observed, as one
// class and a phrase in plain words, for an engineer choosing a lock. The
// words come from the stored verdicts, evidence and witnesses through
// small tables (damages, cellRules) so each phrase has one place and one
// triggering condition; expectations enter only as "at risk", where the
// verdict table says the outcome depends on timing.

// Classes of a chooser cell, also its CSS class in the HTML report.
const (
	// cellSafe: every check held on its evidence.
	cellSafe = "safe"
	// cellFenced: exclusion broke, but the protected resource rejected the
	// stale holder's operations by their fencing token: no update was lost.
	cellFenced = "resource-safe"
	// cellBroken: damage a user sees: lost updates, a deadlock, exclusion
	// broken without fencing, fencing tokens that do not increase, wrong
	// reentrancy counts, a broken contract check (orphaned locks, ...).
	cellBroken = "broken"
	// cellAtRisk: the verdict table says the outcome depends on timing; the
	// cell shows the observation as detail and keeps this class whatever
	// one bench saw, so identical benches give identical classes.
	cellAtRisk = "at-risk"
	// cellInconclusive: a check found no violation on too little evidence
	// (or could not decide), with what it lacked.
	cellInconclusive = "inconclusive"
	// cellUnchecked: the runs completed but no checker looked at them (e.g.
	// lockbench perf's unrecorded runs); it says nothing about safety.
	cellUnchecked = "unchecked"
	// cellFailed: no run of the pair could complete.
	cellFailed = "failed"
)

// cellWord is the word a cell's text starts with, per class.
var cellWord = map[string]string{
	cellSafe: "safe", cellFenced: "resource safe", cellBroken: "broken", cellAtRisk: "at risk",
	cellInconclusive: "inconclusive", cellUnchecked: "not checked", cellFailed: "did not run",
}

// outcome is what the checkers observed in one run, or the worst of several
// runs (seeds) merged with merge.
type outcome struct {
	lostUpdates bool // resource violated
	exclusion   bool // exclusion violated
	fencing     bool // fencing tokens did not strictly increase
	reentrancy  bool // reentrancy counts wrong
	orphans     bool // an acquire that said fail left its token on the servers
	lostSignal  bool // lost signalled late, never, or for a released lease
	extends     bool // a lease extended after its release
	reasons     bool // a failed release or extend stated a false reason
	deadlock    bool // liveness violated: a key left without TTL or not acquirable after the run
	resourceOK  bool // the resource check ran and held (in every merged run)
	// rejected counts the protected resource's operations the fencing
	// check rejected (Evidence.ResourceRejected), summed over merged runs:
	// fencing is credited with a safe resource only when it is above 0.
	rejected int
	// fencedAll: the resource checked fencing tokens on every operation,
	// not on writes only (RunConfig.Fencing "all").
	fencedAll bool
	// inconclusive are the checks that could not decide, in check order,
	// each with what it lacked.
	inconclusive []inconclusiveCheck
	// noGrants: a server-side fault (not the holder's own pause, crash or
	// slow critical section, where granting nobody is correct) lasted at
	// least one TTL and nobody was granted the lock during it.
	noGrants  bool
	unchecked bool // no check ran (every verdict skipped or empty), in every merged run
	// starved: the strategy granted (almost) nothing (Run.LivenessFinding
	// set), in some merged run.
	starved bool
}

// inconclusiveCheck is one check of a run that could not decide and what
// it lacked.
type inconclusiveCheck struct{ name, what string }

// checkStatuses lists a run's checks by name with their stored verdicts,
// in report order.
func checkStatuses(r results.Run) []struct {
	name   string
	status checker.Status
} {
	return []struct {
		name   string
		status checker.Status
	}{
		{"exclusion", r.Verdict.Exclusion}, {"resource", r.Verdict.Resource}, {"liveness", r.Verdict.Liveness},
		{"fencing", r.Verdict.Fencing}, {"reentrancy", r.Verdict.Reentrancy}, {"orphans", r.Verdict.Orphans},
		{"lost", r.Verdict.Lost}, {"extends", r.Verdict.Extends}, {"reasons", r.Verdict.Reasons},
	}
}

// missingOf says what a check of r lacked to decide: the evidence rules'
// words (Run.Missing, e.g. "2 holds, 0 chances to overlap (need ≥ 10)"),
// else, for a file written before them, the checker's message for that
// check (e.g. "no successful acquires: no holds to check"), or "" when it
// left none.
func missingOf(r results.Run, check string) string {
	if m, ok := r.Missing[check]; ok {
		return m.What
	}
	return r.Checks[check]
}

// outcomeOf reads a completed run's verdicts and evidence. An exclusion or
// resource check that was skipped in a run whose other checks ran found
// nothing to check (no hold, no resource operation): it is inconclusive.
func outcomeOf(r results.Run) outcome {
	o := outcome{
		lostUpdates: r.Verdict.Resource == checker.Violated,
		exclusion:   r.Verdict.Exclusion == checker.Violated,
		fencing:     r.Verdict.Fencing == checker.Violated,
		reentrancy:  r.Verdict.Reentrancy == checker.Violated,
		orphans:     r.Verdict.Orphans == checker.Violated,
		lostSignal:  r.Verdict.Lost == checker.Violated,
		extends:     r.Verdict.Extends == checker.Violated,
		reasons:     r.Verdict.Reasons == checker.Violated,
		deadlock:    r.Verdict.Liveness == checker.Violated,
		resourceOK:  r.Verdict.Resource == checker.OK,
		rejected:    r.Evidence.ResourceRejected,
		fencedAll:   r.Config.Fencing == "all",
		noGrants:    serverFault(r.ScenarioKind) && longFault(r) && r.Liveness.GrantsDuringFaults == 0,
		starved:     r.LivenessFinding != "",
		unchecked:   true,
	}
	for _, c := range checkStatuses(r) {
		if c.status == checker.OK || c.status == checker.Violated || c.status == checker.Inconclusive {
			o.unchecked = false
		}
	}
	for _, c := range checkStatuses(r) {
		skipped := c.status == checker.Skipped && (c.name == "exclusion" || c.name == "resource")
		if c.status == checker.Inconclusive || skipped && !o.unchecked {
			o.inconclusive = append(o.inconclusive, inconclusiveCheck{c.name, missingOf(r, c.name)})
		}
	}
	return o
}

// serverFault reports whether faults of a scenario kind (Run.ScenarioKind)
// strike the servers or the network, where a strategy that grants nobody
// is unavailable; "client" faults are the holder's own (its pause, crash
// or slow critical section), where granting nobody is the lock doing its
// job. An unknown kind (a file that predates it) is not taken as one.
func serverFault(kind string) bool {
	switch kind {
	case "process", "replication", "network", "clock", "mixed":
		return true
	}
	return false
}

// longFault reports whether r had a fault window lasting at least one TTL
// (and at least 1 ms, as GrantsDuringFaults counts): long enough that a
// lease would run out, so whether others were granted the lock during it
// says something about the strategy.
func longFault(r results.Run) bool {
	least := max(1, r.Config.TTLMs)
	for _, f := range r.Faults {
		if f.EndMs-f.StartMs >= least {
			return true
		}
	}
	return false
}

// merge is the worst of o and p, check by check.
func (o outcome) merge(p outcome) outcome {
	o.lostUpdates = o.lostUpdates || p.lostUpdates
	o.exclusion = o.exclusion || p.exclusion
	o.fencing = o.fencing || p.fencing
	o.reentrancy = o.reentrancy || p.reentrancy
	o.orphans = o.orphans || p.orphans
	o.lostSignal = o.lostSignal || p.lostSignal
	o.extends = o.extends || p.extends
	o.reasons = o.reasons || p.reasons
	o.deadlock = o.deadlock || p.deadlock
	o.resourceOK = o.resourceOK && p.resourceOK
	o.rejected += p.rejected
	o.fencedAll = o.fencedAll && p.fencedAll
	o.noGrants = o.noGrants || p.noGrants
	o.unchecked = o.unchecked && p.unchecked
	o.starved = o.starved || p.starved
	for _, c := range p.inconclusive {
		if !o.inconclusiveCheck(c.name) {
			o.inconclusive = append(o.inconclusive, c)
		}
	}
	return o
}

// inconclusiveCheck reports whether the named check is inconclusive.
func (o outcome) inconclusiveCheck(name string) bool {
	return slices.ContainsFunc(o.inconclusive, func(c inconclusiveCheck) bool { return c.name == name })
}

// fencingSaved reports whether exclusion broke while the resource stayed
// safe because it rejected stale operations by fencing token.
func (o outcome) fencingSaved() bool {
	return o.exclusion && !o.lostUpdates && o.resourceOK && o.rejected > 0
}

// damages are what a user of the protected resource suffers, worst first:
// each phrase with the data that triggers it.
var damages = []struct {
	phrase string
	when   func(outcome) bool
}{
	{"lost updates", func(o outcome) bool { return o.lostUpdates }},
	{"deadlock", func(o outcome) bool { return o.deadlock }},
	{"reentrancy count wrong", func(o outcome) bool { return o.reentrancy }},
	{"orphaned locks", func(o outcome) bool { return o.orphans }},
	{"lost signalled late, never or after release", func(o outcome) bool { return o.lostSignal }},
	{"lease extended after release", func(o outcome) bool { return o.extends }},
	{"false failure reasons", func(o outcome) bool { return o.reasons }},
	{"fencing tokens not increasing", func(o outcome) bool { return o.fencing }},
	// Two holders at once without a lost update: fencing is credited
	// only when the resource rejected something (fencingSaved).
	{"exclusion broken", func(o outcome) bool { return o.exclusion && !o.lostUpdates && !o.fencingSaved() }},
}

// damage lists the damage phrases o triggers.
func (o outcome) damage() []string {
	var d []string
	for _, x := range damages {
		if x.when(o) {
			d = append(d, x.phrase)
		}
	}
	return d
}

// resourceNote says what became of the protected resource when exclusion
// broke without a lost update, "" otherwise: fencing rejected the stale
// operations, no update was lost by luck, or the resource was not checked.
func (o outcome) resourceNote() string {
	switch {
	case !o.exclusion || o.lostUpdates:
		return ""
	case o.fencingSaved():
		what := "writes"
		if o.fencedAll {
			what = "operations"
		}
		return fmt.Sprintf("fencing rejected %s, no update lost", plural(o.rejected, "stale "+strings.TrimSuffix(what, "s")))
	case o.resourceOK:
		return "no update lost in this run"
	}
	return "resource not checked" // skipped, or could not decide
}

// cellRules class a merged outcome and word it: the first rule whose
// condition holds gives the class; text gives the phrase after the class
// word ("" for the word alone). Expectations (at risk) and failed runs are
// decided before these rules, in pairCell.
var cellRules = []struct {
	class string
	when  func(outcome) bool
	text  func(outcome) string
}{
	{cellBroken, func(o outcome) bool { return len(o.damage()) > 0 }, func(o outcome) string {
		s := strings.Join(o.damage(), ", ")
		if n := o.resourceNote(); n != "" {
			s += "; " + n
		}
		return s
	}},
	{cellInconclusive, func(o outcome) bool { return len(o.inconclusive) > 0 }, outcome.inconclusiveText},
	{cellUnchecked, func(o outcome) bool { return o.unchecked }, func(outcome) string { return "no checker ran: says nothing about safety" }},
	{cellFenced, outcome.fencingSaved, func(o outcome) string { return "exclusion broken; " + o.resourceNote() }},
	{cellSafe, func(outcome) bool { return true }, func(outcome) string { return "" }},
}

// classify returns o's class and its phrase, e.g. (cellBroken, "lost
// updates"), from cellRules; a server fault without grants adds "no grants
// during the fault" to a safe or resource-safe cell, and a liveness
// finding (the strategy granted almost nothing) adds "granted almost
// nothing" to any cell but a broken one.
func (o outcome) classify() (class, phrase string) {
	for _, r := range cellRules {
		if r.when(o) {
			class, phrase = r.class, r.text(o)
			break
		}
	}
	if o.noGrants && (class == cellSafe || class == cellFenced) && !o.starved {
		phrase = joinPhrase(phrase, "no grants during the fault")
	}
	if o.starved && class != cellBroken {
		// A liveness finding: the cause is under Evidence (details).
		phrase = joinPhrase(phrase, "granted almost nothing")
	}
	return class, phrase
}

// inconclusiveText words the inconclusive checks from what each lacked:
// "exclusion, resource: no successful acquires: no holds to check" when
// every check lacked the same, else per check separated by "; "; a check
// that left no message reads "exclusion could not decide".
func (o outcome) inconclusiveText() string {
	var whats []string
	names := map[string][]string{}
	for _, c := range o.inconclusive {
		if names[c.what] == nil {
			whats = append(whats, c.what)
		}
		names[c.what] = append(names[c.what], c.name)
	}
	parts := make([]string, len(whats))
	for i, w := range whats {
		if w == "" {
			w = "could not decide"
		}
		parts[i] = strings.Join(names[whats[i]], ", ") + ": " + w
	}
	return strings.Join(parts, "; ")
}

// joinPhrase joins two phrases with "; ", either may be empty.
func joinPhrase(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}

// chooserCell is one (strategy, scenario) cell of the chooser table; Ran is
// false where the pair was not run ("n/a").
type chooserCell struct {
	Ran bool
	// Text is the class word and the phrase, e.g. "broken: lost updates",
	// "at risk: broke in 1 of 1 seeds: lost updates".
	Text string
	// Class is one of the cell* classes (a CSS class in index.html).
	Class string
	o     outcome
	label string // the scenario
}

// ObservedSafety describes in plain words what the checkers observed
// over a pair's runs (its seeds), as the chooser table's cell does: e.g.
// "safe", "resource safe: exclusion broken; fencing rejected 3 stale
// writes, no update lost", "broken: lost updates", "at risk: broke in 1
// of 1 seeds: lost updates", "inconclusive: exclusion: …".
func ObservedSafety(rs []results.Run) string { return pairCell(rs).Text }

// pairCell merges a pair's runs (seeds) into one chooser cell. A pair that
// the verdict table marks at risk (Run.Expected "at-risk": its outcome
// depends on timing) is cellAtRisk whatever was observed, with the
// observation as detail ("broke in k of n seeds: how"); any other pair
// shows the worst observed over its seeds (cellRules), with how many
// seeds showed its class when not all did. Runs that could not complete
// are counted apart; a pair none of whose runs completed is cellFailed.
func pairCell(rs []results.Run) chooserCell {
	var (
		merged    outcome
		completed []outcome
		failed    int
		atRisk    bool
	)
	for _, r := range rs {
		atRisk = atRisk || r.Expected == "at-risk"
		if r.Error != "" {
			failed++
			continue
		}
		o := outcomeOf(r)
		if len(completed) == 0 {
			merged = o
		} else {
			merged = merged.merge(o)
		}
		completed = append(completed, o)
	}
	if len(completed) == 0 {
		return chooserCell{Ran: true, Text: cellWord[cellFailed] + " (error)", Class: cellFailed}
	}
	c := chooserCell{Ran: true, o: merged}
	if atRisk {
		c.Class = cellAtRisk
		c.Text = cellWord[cellAtRisk] + ": " + atRiskDetail(completed)
	} else {
		class, phrase := merged.classify()
		c.Class, c.Text = class, cellWord[class]
		if phrase != "" {
			c.Text += ": " + phrase
		}
		if n := len(completed); n > 1 && class != cellSafe {
			k := 0
			for _, o := range completed {
				if cl, _ := o.classify(); cl == class {
					k++
				}
			}
			if k < n {
				c.Text += fmt.Sprintf(" (%d of %d seeds)", k, n)
			}
		}
	}
	if failed > 0 {
		c.Text += fmt.Sprintf(" (%d of %d seeds failed to run)", failed, len(rs))
	}
	return c
}

// atRiskDetail words the seeds of an at-risk pair: "broke in k of n
// seeds", then how (the damage of the broken seeds merged), then the
// seeds where fencing kept the resource safe and those that were
// inconclusive, with what they lacked.
func atRiskDetail(seeds []outcome) string {
	var broken, fenced, inconclusive []outcome
	for _, o := range seeds {
		switch cl, _ := o.classify(); cl {
		case cellBroken:
			broken = append(broken, o)
		case cellFenced:
			fenced = append(fenced, o)
		case cellInconclusive:
			inconclusive = append(inconclusive, o)
		}
	}
	s := fmt.Sprintf("broke in %d of %d seeds", len(broken), len(seeds))
	if len(broken) > 0 {
		s += ": " + strings.Join(mergeAll(broken).damage(), ", ")
	}
	if len(fenced) > 0 {
		s += fmt.Sprintf("; fencing kept the resource safe in %d", len(fenced))
	}
	if len(inconclusive) > 0 {
		s += fmt.Sprintf("; inconclusive in %d (%s)", len(inconclusive), mergeAll(inconclusive).inconclusiveText())
	}
	return s
}

// mergeAll merges outcomes (at least one).
func mergeAll(os []outcome) outcome {
	m := os[0]
	for _, o := range os[1:] {
		m = m.merge(o)
	}
	return m
}

// chooserRow is one strategy's row of the chooser table: its group, cells
// (one per scenario) and cost figures from its baseline pair.
type chooserRow struct {
	Strategy string
	// Group is the strategy's report group (GroupOf); FirstOfGroup is
	// true on the first row of each group.
	Group        string
	FirstOfGroup bool
	Cells        []chooserCell
	// Cost holds the cost figures of the strategy
	// (chooserCostCells) as text: overhead round trips and ms, handoff ms, commands per grant, peak capacity; empty when none ran.
	Cost []string
	// CostFrom names the pair and configuration the cost comes from,
	// e.g. "baseline: 16 clients, 1 key, TTL 100 ms"; OwnCost is true when
	// it differs from the table's (chooserCost), so the row says so.
	CostFrom string
	OwnCost  bool
	// Summary is one line: where the strategy is safe, what breaks, and
	// its cost (chooserSummary).
	Summary string
}

// chooserCostCells are a strategy's cost cells in the chooser, like for
// like across families: the overhead per hold in round trips and in ms
// (the p50 of granting call + release call in its uncontended cost runs at
// 1 client, File.Cost), the handoff p50 in ms and the client commands per
// grant (its contended baseline runs, base, and their Summary perf). The
// ms figures carry the BUSY mark of a run measured on a busy machine (and
// the handoff NOT COMPARABLE outside the working envelope); round trips
// and commands compare across busy runs; last the peak of its capacity
// curve (Capacity.peakText, "—" without one). nil when the strategy has none
// of them. The contended grants/s is in the strategy's line
// (chooserSummary) in details.
func chooserCostCells(strategy string, cost, base []results.Run, perf figures.Summary, hasPerf bool, capacity *figures.Capacity) []string {
	var one []results.Run
	busy := false
	for _, r := range cost {
		if r.Strategy == strategy && r.Config.Clients == 1 && r.Error == "" {
			one = append(one, r)
			busy = busy || r.Busy()
		}
	}
	rtts, hold := stats.EstimateOf(figures.SamplesOf(one, figures.FigureRTTsPerHold)), stats.EstimateOf(figures.SamplesOf(one, figures.FigureHoldP50Ms))
	handoff := stats.EstimateOf(figures.SamplesOf(base, figures.FigureHandoffP50Ms))
	var cmds stats.Estimate
	if hasPerf && perf.Seeds > perf.Errors {
		cmds = perf.Cost.CommandsPerGrant
	}
	peak := "—"
	if capacity != nil && len(capacity.Points) > 1 {
		peak = peakText(*capacity)
	}
	if rtts.N+hold.N+handoff.N+cmds.N == 0 && peak == "—" {
		return nil
	}
	holdText := hold.String()
	if busy && hold.N > 0 {
		holdText = "BUSY: " + holdText
	}
	handoffText := handoff.String()
	if handoff.N > 0 {
		handoffText = costMarks(perf) + handoffText
	}
	return []string{rttsText(rtts, figures.RTTsCounted(one)), holdText, handoffText, cmds.String(), peak}
}

// pairKey is a (strategy, scenario) pair.
type pairKey struct{ strategy, scenario string }

// buildChooser returns the chooser table's rows: strategies grouped by
// their report group (groups in order of their first strategy), in the
// order given within a group, scenarios in the order given; infos names
// each strategy's group; summaries holds the cost figures of each pair.
func buildChooser(runs, cost []results.Run, strategies, scenarios []string, summaries []figures.Summary, infos []results.StrategyInfo) []chooserRow {
	capacities := figures.CapacityOf(cost)
	byPair := map[pairKey][]results.Run{}
	for _, r := range runs {
		k := pairKey{r.Strategy, r.Scenario}
		byPair[k] = append(byPair[k], r)
	}
	sums := map[pairKey]figures.Summary{}
	for _, s := range summaries {
		sums[pairKey{s.Strategy, s.Scenario}] = s
	}
	group := map[string]string{}
	for _, in := range infos {
		group[in.Name] = GroupOf(in)
	}
	var rows []chooserRow
	for _, st := range groupOrder(strategies, group) {
		row := chooserRow{Strategy: st, Group: group[st]}
		if row.Group == "" {
			row.Group = "other"
		}
		row.FirstOfGroup = len(rows) == 0 || rows[len(rows)-1].Group != row.Group
		for _, sc := range scenarios {
			rs := byPair[pairKey{st, sc}]
			if len(rs) == 0 {
				row.Cells = append(row.Cells, chooserCell{Text: "n/a"})
				continue
			}
			c := pairCell(rs)
			c.label = sc
			row.Cells = append(row.Cells, c)
		}
		perf, hasPerf := perfPair(st, scenarios, byPair, sums)
		var capacity *figures.Capacity
		for i := range capacities {
			if capacities[i].Strategy == st {
				capacity = &capacities[i]
			}
		}
		row.Cost = chooserCostCells(st, cost, completed(byPair[pairKey{st, figures.CostScenario}]), perf, hasPerf, capacity)
		if hasPerf && perf.Seeds > perf.Errors {
			row.CostFrom = fmt.Sprintf("%s: %s, TTL %s ms", perf.Scenario, clientsKeys(perf.Clients, perf.Keys), formatNum(perf.TTLMs))
		}
		row.Summary = chooserSummary(st, row.Cells, perf, hasPerf)
		rows = append(rows, row)
	}
	common := chooserCost(rows)
	for i := range rows {
		rows[i].OwnCost = rows[i].CostFrom != "" && rows[i].CostFrom != common
		if rows[i].OwnCost && len(rows[i].Cost) > 0 {
			rows[i].Cost[0] = "(" + rows[i].CostFrom + ") " + rows[i].Cost[0]
		}
	}
	return rows
}

// chooserCost returns the CostFrom most rows share (the first such in
// row order on a tie), "" when no row has cost figures.
func chooserCost(rows []chooserRow) string {
	count := map[string]int{}
	best := ""
	for _, r := range rows {
		if r.CostFrom == "" {
			continue
		}
		count[r.CostFrom]++
		if count[r.CostFrom] > count[best] {
			best = r.CostFrom
		}
	}
	return best
}

// costMarks prefixes a pair's first cost figure with what limits its
// figures: "NOT COMPARABLE" when a run was outside the strategy's working
// envelope, "BUSY" when one was measured on a busy machine (e.g. "BUSY:
// "), "" when neither.
func costMarks(s figures.Summary) string {
	var m []string
	if s.NotComparable > 0 {
		m = append(m, "NOT COMPARABLE")
	}
	if s.Busy > 0 {
		m = append(m, "BUSY")
	}
	if len(m) == 0 {
		return ""
	}
	return strings.Join(m, ", ") + ": "
}

// groupOrder orders strategies by group, groups in the order of their
// first strategy, keeping the given order within a group.
func groupOrder(strategies []string, group map[string]string) []string {
	var groups []string
	for _, st := range strategies {
		if !slices.Contains(groups, group[st]) {
			groups = append(groups, group[st])
		}
	}
	out := make([]string, 0, len(strategies))
	for _, g := range groups {
		for _, st := range strategies {
			if group[st] == g {
				out = append(out, st)
			}
		}
	}
	return out
}

// GroupOf returns the report group of a strategy: StrategyInfo.Group, or
// for a file that predates it, one derived from the claims and library as
// impl's Info.Group derives it ("libraries", "fenced", "Redis quorum",
// "Redis single-node").
func GroupOf(in results.StrategyInfo) string {
	switch {
	case in.Group != "":
		return in.Group
	case in.Library != "":
		return "libraries"
	case slices.Contains(in.Claims, "fencing"):
		return "fenced"
	case slices.Contains(in.Claims, "quorum"):
		return "Redis quorum"
	}
	return "Redis single-node"
}

// perfPair picks the pair whose figures stand for the strategy's cost: the
// "baseline" scenario if it ran, else the first scenario run without faults.
// ok is false when there is none.
func perfPair(strategy string, scenarios []string, byPair map[pairKey][]results.Run, sums map[pairKey]figures.Summary) (s figures.Summary, ok bool) {
	if s, ok := sums[pairKey{strategy, "baseline"}]; ok {
		return s, true
	}
	for _, sc := range scenarios {
		rs := byPair[pairKey{strategy, sc}]
		if len(rs) == 0 {
			continue
		}
		faulted := false
		for _, r := range rs {
			faulted = faulted || len(r.Faults) > 0
		}
		if !faulted {
			return sums[pairKey{strategy, sc}], true
		}
	}
	return figures.Summary{}, false
}

// chooserSummary writes one line per strategy, e.g. "token-lua: safe under 2
// of 9 scenarios (baseline, crash-between); broken under long-cs,
// gc-pause; baseline (16 clients, 1 key, TTL 100 ms): 170 [150, 180]
// (n=6) grants/s, granting call p50 0.1 ms, acquire with waiting p50 6 ms
// [...], p99 643 ms [...], 12 Redis commands per grant". The groups follow
// the chooser classes, so the line never says more than the cells.
func chooserSummary(strategy string, cells []chooserCell, perf figures.Summary, hasPerf bool) string {
	groups := []struct{ what, class string }{
		{"broken under", cellBroken},
		{"exclusion broken but fencing kept the resource safe under", cellFenced},
		{"at risk under", cellAtRisk},
		{"inconclusive under", cellInconclusive},
		{"not checked under", cellUnchecked},
		{"did not run under", cellFailed},
	}
	var safe, ran, noGrants []string
	for _, c := range cells {
		if !c.Ran {
			continue
		}
		ran = append(ran, c.label)
		if c.Class == cellSafe {
			safe = append(safe, c.label)
		}
		if c.o.noGrants && (c.Class == cellSafe || c.Class == cellFenced) {
			noGrants = append(noGrants, c.label)
		}
	}
	parts := []string{fmt.Sprintf("safe under %d of %d scenarios", len(safe), len(ran))}
	if len(safe) > 0 && len(safe) < len(ran) {
		parts[0] += " (" + strings.Join(safe, ", ") + ")"
	}
	for _, g := range groups {
		var under []string
		for _, c := range cells {
			if c.Ran && c.Class == g.class {
				under = append(under, c.label)
			}
		}
		if len(under) > 0 {
			parts = append(parts, g.what+" "+strings.Join(under, ", "))
		}
	}
	if len(noGrants) > 0 {
		parts = append(parts, "grants nothing during the server fault under "+strings.Join(noGrants, ", "))
	}
	if hasPerf && perf.Seeds > perf.Errors {
		p := fmt.Sprintf("%s (%s, TTL %s ms): %s grants/s", perf.Scenario, clientsKeys(perf.Clients, perf.Keys), formatNum(perf.TTLMs), costText(perf, figures.FigureGrantsPerS))
		if perf.GrantCallP50Ms.N > 0 {
			// The acquire call's own cost, apart from the wait for the lock,
			// which contention sets and which varies run to run.
			p += fmt.Sprintf(", granting call p50 %s ms", formatNum(perf.GrantCallP50Ms.Median))
		}
		if perf.Cost.AcquireP50Ms.N > 0 {
			p += fmt.Sprintf(", acquire with waiting p50 %s ms, p99 %s ms", perf.Cost.AcquireP50Ms, perf.Cost.AcquireP99Ms)
		}
		if perf.RoundTripsPerGrant.N > 0 {
			// The figure that tells strategies apart when one contended key
			// sets everyone's rate: what each grant costs the servers.
			p += fmt.Sprintf(", %s Redis commands per grant", formatNum(perf.RoundTripsPerGrant.Median))
		}
		parts = append(parts, p)
	}
	return strategy + ": " + strings.Join(parts, "; ")
}

// clientsKeys writes "16 clients, 1 key".
func clientsKeys(clients, keys int) string {
	return plural(clients, "client") + ", " + plural(keys, "key")
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// fixedCS matches a fixed critical-section distribution without a tail, as
// workload.CSDist.String writes it, e.g. "fixed(5ms)".
var fixedCS = regexp.MustCompile(`^fixed\(([^)]+)\)$`)

// contentionNotes describes, per distinct (clients, keys, CS, retry)
// configuration of runs, who contends for what, so a reader knows what
// bounds throughput and what acquire latency includes, e.g. "16 clients, 1
// key, CS fixed(5ms), retry exponential:2ms:20ms (52 runs): one holder per
// key at a time allows at most 200 grants/s". The bound is given for a fixed
// CS only: keys / CS.
func contentionNotes(runs []results.Run) []string {
	type cfg struct {
		clients, keys int
		cs, retry     string
	}
	var order []cfg
	count := map[cfg]int{}
	for _, r := range runs {
		c := cfg{r.Config.Clients, r.Config.Keys, r.Config.CSMs, r.Config.Retry}
		if count[c] == 0 {
			order = append(order, c)
		}
		count[c]++
	}
	var notes []string
	for _, c := range order {
		s := clientsKeys(c.clients, c.keys)
		if c.cs != "" {
			s += ", CS " + c.cs
		}
		if c.retry != "" {
			s += ", retry " + c.retry
		}
		s += " (" + plural(count[c], "run") + ")"
		if m := fixedCS.FindStringSubmatch(c.cs); m != nil && c.keys > 0 {
			if d, err := time.ParseDuration(m[1]); err == nil && d > 0 {
				s += fmt.Sprintf(": one holder per key at a time allows at most %s grants/s", formatNum(float64(c.keys)*float64(time.Second)/float64(d)))
			}
		}
		notes = append(notes, s)
	}
	return notes
}

// likeForLike says whether the cost cells (the runs of CostScenario) of
// every strategy ran the same critical section and think time, whatever
// their TTL, e.g. "Like for like: every strategy's cost cells ran critical
// section fixed(5ms) and no think time (TTL 100 ms; etcd-mutex, zk-lock at
// 1000 ms: their servers' floor, not their critical section)"; when they
// did not, which strategies ran which, so that no reader compares a 5 ms
// critical section with a 50 ms one unawares. "" without cost cells.
func likeForLike(runs []results.Run) string {
	type timing struct {
		cs    string
		think float64
	}
	var order []timing
	who := map[timing][]string{}
	ttls := map[float64][]string{}
	var ttlOrder []float64
	for _, r := range runs {
		if r.Scenario != figures.CostScenario {
			continue
		}
		t := timing{r.Config.CSMs, r.Config.ThinkMs}
		if _, ok := who[t]; !ok {
			order = append(order, t)
		}
		if !slices.Contains(who[t], r.Strategy) {
			who[t] = append(who[t], r.Strategy)
		}
		if _, ok := ttls[r.Config.TTLMs]; !ok {
			ttlOrder = append(ttlOrder, r.Config.TTLMs)
		}
		if !slices.Contains(ttls[r.Config.TTLMs], r.Strategy) {
			ttls[r.Config.TTLMs] = append(ttls[r.Config.TTLMs], r.Strategy)
		}
	}
	if len(order) == 0 {
		return ""
	}
	thinkText := func(ms float64) string {
		if ms == 0 {
			return "no think time"
		}
		return "think time " + formatNum(ms) + " ms"
	}
	if len(order) > 1 {
		parts := make([]string, len(order))
		for i, t := range order {
			parts[i] = fmt.Sprintf("critical section %s, %s: %s", t.cs, thinkText(t.think), strings.Join(who[t], ", "))
		}
		return "NOT like for like: the cost cells ran different critical sections or think times (" + strings.Join(parts, "; ") + "): their throughput and latency compare the timing, not the locks."
	}
	t := order[0]
	s := fmt.Sprintf("Like for like: every strategy's cost cells (%s) ran critical section %s and %s", figures.CostScenario, t.cs, thinkText(t.think))
	if len(ttlOrder) > 1 {
		// The most common TTL first, the others named.
		slices.SortStableFunc(ttlOrder, func(a, b float64) int { return len(ttls[b]) - len(ttls[a]) })
		var other []string
		for _, ttl := range ttlOrder[1:] {
			other = append(other, fmt.Sprintf("%s at %s ms", strings.Join(ttls[ttl], ", "), formatNum(ttl)))
		}
		s += fmt.Sprintf(", whatever their TTL (%s ms; %s: a TTL their servers or call budget need, which does not change the critical section)", formatNum(ttlOrder[0]), strings.Join(other, "; "))
	}
	return s + "."
}

// completed returns the runs of rs that completed (Error empty).
func completed(rs []results.Run) []results.Run {
	return slices.DeleteFunc(slices.Clone(rs), func(r results.Run) bool { return r.Error != "" })
}
