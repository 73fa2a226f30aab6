package results

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
)

// This file derives the report's "Observed safety per strategy" section: what the
// checkers observed per (strategy, scenario) pair, in plain words, for an
// engineer choosing a lock; and one summary line per strategy. Unlike the
// harness gate it ignores expectations entirely.

// Classes of a safety cell, also its CSS class in the HTML report.
const (
	keptSafe    = "safe"    // every check held
	keptPartial = "partial" // the lock's promise broke but the protected resource stayed safe, or a check was inconclusive
	keptBroken  = "broken"  // lost updates, deadlock or another damage a user sees
	// keptUnchecked: the run completed but no checker looked at it (e.g.
	// lockbench perf's unrecorded runs); it says nothing about safety.
	keptUnchecked = "unchecked"
	keptFailed    = "failed" // the run could not complete
)

// outcome is what the checkers observed in one run, or the worst of several
// runs (seeds) merged with or.
type outcome struct {
	lostUpdates  bool // resource violated
	exclusion    bool // exclusion violated
	fencing      bool // fencing tokens did not strictly increase
	reentrancy   bool // reentrancy counts wrong
	deadlock     bool // liveness violated: a key left without TTL or not acquirable after the run
	resourceOK   bool // the resource check ran and held (in every merged run)
	inconclusive []string
	noGrants     bool // a fault lasting at least one TTL saw no grant
	atRisk       bool // the verdict table expects some check to be at risk
	unchecked    bool // no check ran (every verdict skipped or empty), in every merged run
}

// outcomeOf reads a completed run's verdicts.
func outcomeOf(r Run) outcome {
	o := outcome{
		lostUpdates: r.Verdict.Resource == "violated",
		exclusion:   r.Verdict.Exclusion == "violated",
		fencing:     r.Verdict.Fencing == "violated",
		reentrancy:  r.Verdict.Reentrancy == "violated",
		deadlock:    r.Verdict.Liveness == "violated",
		resourceOK:  r.Verdict.Resource == "ok",
		noGrants:    longFault(r) && r.Liveness.GrantsDuringFaults == 0,
		unchecked:   true,
	}
	for _, v := range []string{r.Verdict.Exclusion, r.Verdict.Resource, r.Verdict.Liveness, r.Verdict.Fencing, r.Verdict.Reentrancy} {
		if v == "ok" || v == "violated" || v == "inconclusive" {
			o.unchecked = false
		}
	}
	for _, e := range r.ExpectedChecks {
		o.atRisk = o.atRisk || e == "at-risk"
	}
	for _, c := range []struct{ name, status string }{
		{"exclusion", r.Verdict.Exclusion}, {"resource", r.Verdict.Resource}, {"liveness", r.Verdict.Liveness},
		{"fencing", r.Verdict.Fencing}, {"reentrancy", r.Verdict.Reentrancy},
	} {
		if c.status == "inconclusive" {
			o.inconclusive = append(o.inconclusive, c.name)
		}
	}
	return o
}

// longFault reports whether r had a fault window lasting at least one TTL
// (and at least 1 ms, as GrantsDuringFaults counts): long enough that a
// lease would run out, so whether others were granted the lock during it
// says something about the strategy.
func longFault(r Run) bool {
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
	o.deadlock = o.deadlock || p.deadlock
	o.resourceOK = o.resourceOK && p.resourceOK
	o.noGrants = o.noGrants || p.noGrants
	o.atRisk = o.atRisk || p.atRisk
	o.unchecked = o.unchecked && p.unchecked
	for _, c := range p.inconclusive {
		if !slices.Contains(o.inconclusive, c) {
			o.inconclusive = append(o.inconclusive, c)
		}
	}
	return o
}

// damage lists what a user of the protected resource would suffer, worst first.
func (o outcome) damage() []string {
	var d []string
	if o.lostUpdates {
		d = append(d, "lost updates")
	}
	if o.deadlock {
		d = append(d, "deadlock")
	}
	if o.reentrancy {
		d = append(d, "reentrancy count wrong")
	}
	if o.exclusion && !o.lostUpdates && !o.resourceOK {
		d = append(d, "exclusion broken (resource not checked)")
	}
	return d
}

// class is the outcome's colour: broken when there is damage; partial when
// the lock's promise broke but the resource stayed safe, a check was
// inconclusive, or nothing broke where the verdict table says the strategy is
// at risk; else safe.
func (o outcome) class() string {
	switch {
	case len(o.damage()) > 0:
		return keptBroken
	case o.unchecked:
		return keptUnchecked
	case o.exclusion || o.fencing || len(o.inconclusive) > 0 || o.atRisk:
		return keptPartial
	}
	return keptSafe
}

// text writes the outcome in plain words, e.g. "safe", "exclusion broken,
// resource safe", "broken: lost updates", "no violation seen (at risk)" or
// "safe; no grants during the fault".
func (o outcome) text() string {
	var s string
	switch o.class() {
	case keptBroken:
		parts := o.damage()
		if o.fencing {
			parts = append(parts, "fencing tokens not increasing")
		}
		s = "broken: " + strings.Join(parts, ", ")
	case keptPartial:
		var parts []string
		if o.exclusion {
			parts = append(parts, "exclusion broken")
		}
		if o.fencing {
			parts = append(parts, "fencing tokens not increasing")
		}
		if len(parts) > 0 && o.resourceOK {
			parts = append(parts, "resource safe")
		}
		for _, c := range o.inconclusive {
			parts = append(parts, c+" check inconclusive")
		}
		if len(parts) == 0 { // only at risk
			parts = append(parts, "no violation seen (at risk)")
		}
		s = strings.Join(parts, ", ")
	case keptUnchecked:
		return "not checked (no checker ran: says nothing about safety)"
	default:
		s = "safe"
	}
	if o.noGrants {
		s += "; no grants during the fault"
	}
	return s
}

// keptCell is one (strategy, scenario) cell of the observed-safety table; Ran is false
// where the pair was not run ("n/a").
type keptCell struct {
	Ran   bool
	Text  string
	Class string // keptSafe, keptPartial, keptBroken, keptUnchecked or keptFailed
	o     outcome
	label string // the scenario
}

// ObservedSafety describes in plain words what the checkers observed over
// a pair's runs (its seeds), as the report's "Observed safety per strategy" cell does:
// e.g. "safe", "exclusion broken, resource safe", "broken: lost updates",
// "deadlock", with how many seeds showed it when not all did.
func ObservedSafety(rs []Run) string { return keptOf(rs).Text }

// keptOf merges a pair's runs (seeds) into one cell: the worst observed per
// check, with how many seeds showed the cell's class when not all did, and
// how many seeds could not run.
func keptOf(rs []Run) keptCell {
	var (
		merged    outcome
		completed []outcome
		failed    int
	)
	for _, r := range rs {
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
		return keptCell{Ran: true, Text: "did not run (error)", Class: keptFailed}
	}
	c := keptCell{Ran: true, Text: merged.text(), Class: merged.class(), o: merged}
	if n := len(completed); n > 1 && c.Class != keptSafe {
		k := 0
		for _, o := range completed {
			if o.class() == c.Class {
				k++
			}
		}
		if k < n {
			c.Text += fmt.Sprintf(" (%d of %d seeds)", k, n)
		}
	}
	if failed > 0 {
		c.Text += fmt.Sprintf(" (%d of %d seeds failed to run)", failed, len(rs))
	}
	return c
}

// keptRow is one strategy's row of the observed-safety table and its summary line.
type keptRow struct {
	Strategy string
	Cells    []keptCell
	Summary  string
}

// pairRuns groups runs by (strategy, scenario).
type pairKey struct{ strategy, scenario string }

// buildKept returns the observed-safety table's rows, strategies and scenarios in the
// order given, each row with its summary line; summaries holds the
// performance figures of each pair.
func buildKept(runs []Run, strategies, scenarios []string, summaries []Summary) []keptRow {
	byPair := map[pairKey][]Run{}
	for _, r := range runs {
		k := pairKey{r.Strategy, r.Scenario}
		byPair[k] = append(byPair[k], r)
	}
	sums := map[pairKey]Summary{}
	for _, s := range summaries {
		sums[pairKey{s.Strategy, s.Scenario}] = s
	}
	var rows []keptRow
	for _, st := range strategies {
		row := keptRow{Strategy: st}
		for _, sc := range scenarios {
			rs := byPair[pairKey{st, sc}]
			if len(rs) == 0 {
				row.Cells = append(row.Cells, keptCell{Text: "n/a"})
				continue
			}
			c := keptOf(rs)
			c.label = sc
			row.Cells = append(row.Cells, c)
		}
		perf, hasPerf := perfPair(st, scenarios, byPair, sums)
		row.Summary = keptSummary(st, row.Cells, perf, hasPerf)
		rows = append(rows, row)
	}
	return rows
}

// perfPair picks the pair whose figures stand for the strategy's cost: the
// "baseline" scenario if it ran, else the first scenario run without faults.
// ok is false when there is none.
func perfPair(strategy string, scenarios []string, byPair map[pairKey][]Run, sums map[pairKey]Summary) (s Summary, ok bool) {
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
	return Summary{}, false
}

// keptSummary writes one line per strategy, e.g. "safe under 2 of 9
// scenarios (baseline, crash-between); loses updates under long-cs,
// gc-pause; baseline (16 clients, 1 key, TTL 100 ms): 170 grants/s,
// granting call p50 0.1 ms, acquire with waiting p50 6 ms, p99 643 ms,
// 12 Redis commands per grant".
func keptSummary(strategy string, cells []keptCell, perf Summary, hasPerf bool) string {
	type group struct {
		what string
		pick func(keptCell) bool
	}
	groups := []group{
		{"loses updates", func(c keptCell) bool { return c.o.lostUpdates }},
		{"deadlocks", func(c keptCell) bool { return c.o.deadlock }},
		{"breaks reentrancy counts", func(c keptCell) bool { return c.o.reentrancy }},
		{"breaks exclusion (resource not checked)", func(c keptCell) bool {
			return c.o.exclusion && !c.o.lostUpdates && !c.o.resourceOK
		}},
		{"breaks exclusion but the resource stays safe", func(c keptCell) bool {
			return c.o.exclusion && !c.o.lostUpdates && c.o.resourceOK
		}},
		{"fencing tokens do not increase", func(c keptCell) bool { return c.o.fencing }},
		{"is inconclusive", func(c keptCell) bool { return len(c.o.inconclusive) > 0 }},
		{"shows no violation but is at risk", func(c keptCell) bool {
			return c.Class == keptPartial && !c.o.exclusion && !c.o.fencing && len(c.o.inconclusive) == 0
		}},
		{"grants nothing during the fault", func(c keptCell) bool { return c.o.noGrants }},
		{"was not checked", func(c keptCell) bool { return c.Class == keptUnchecked }},
		{"did not run", func(c keptCell) bool { return c.Class == keptFailed }},
	}
	var safe, ran []string
	for _, c := range cells {
		if !c.Ran {
			continue
		}
		ran = append(ran, c.label)
		if c.Class == keptSafe {
			safe = append(safe, c.label)
		}
	}
	parts := []string{fmt.Sprintf("safe under %d of %d scenarios", len(safe), len(ran))}
	if len(safe) > 0 && len(safe) < len(ran) {
		parts[0] += " (" + strings.Join(safe, ", ") + ")"
	}
	for _, g := range groups {
		var under []string
		for _, c := range cells {
			if c.Ran && g.pick(c) {
				under = append(under, c.label)
			}
		}
		if len(under) > 0 {
			parts = append(parts, g.what+" under "+strings.Join(under, ", "))
		}
	}
	if hasPerf && perf.Seeds > perf.Errors {
		p := fmt.Sprintf("%s (%s, TTL %s ms): %s grants/s", perf.Scenario, clientsKeys(perf.Clients, perf.Keys), formatNum(perf.TTLMs), costText(perf, FigureGrantsPerS))
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
func contentionNotes(runs []Run) []string {
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
