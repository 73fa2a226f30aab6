// Package validate judges a checked history: it holds the verdict table
// (what each (strategy, scenario) pair must show, and why) and turns the
// checker's results into a run's verdicts, "as expected" or the lines that
// say what contradicted the table. lockbench run, bench and check all judge
// through it, so a run and `lockbench check` of its saved history agree.
//
// The API is a few entry points:
//
//   - Expected: the verdict table's row of a pair, if it has one.
//   - For: what a run is judged against (the row, or "at risk, not gated"
//     when the run left the strategy's defaults or the pair has no row).
//   - NotGated: why a run's settings take it outside the table ("" if not).
//   - Fill and FromHistory: a checker report and a history → the run's record.
//   - Matrix, NotApplicable and MatrixMarkdown: the whole table, for lists
//     and reports.
//
// The table is keyed by strategy, one file per strategy family
// (verdicts_*.go): each row is a scenario, its expectation and a one-line
// reason. A test fails when an applicable pair of a registered strategy has
// no row, or a row names a pair that does not exist or does not apply.
package validate

import (
	"fmt"
	"sort"
	"strings"

	"github.com/lockbench/lockbench/chaos"
	"github.com/lockbench/lockbench/impl"
)

// Expect is what a check must show in one (strategy, scenario) pair.
type Expect string

// Expectations per check.
const (
	// Hold: the check must pass; a violation (or an inconclusive check) fails the run: the CI gate.
	Hold Expect = "hold"
	// Break: a canary: the check must find a violation; not finding it means
	// the harness lost its teeth, which also fails the run.
	Break Expect = "break"
	// AtRisk: reported, never gated (the outcome depends on timing the
	// scenario does not control).
	AtRisk Expect = "at-risk"
)

// Availability is what a pair must show while a fault window is open:
// whether the strategy keeps granting the lock.
type Availability string

// Availabilities; the zero value "" means availability is not judged.
const (
	// Granting: at least one grant must be invoked and completed inside a
	// fault window (e.g. a quorum lock with one slow node).
	Granting Availability = "grants"
	// NotGranting: nothing may be granted inside a fault window (e.g. a
	// paused single node, a lost quorum).
	NotGranting Availability = "no-grants"
)

// Expectation is the expected verdict of one (strategy, scenario) pair,
// per check, with the reasoning in one line.
type Expectation struct {
	Exclusion Expect
	Resource  Expect
	Liveness  Expect
	// Fencing is what the fencing-token check must show; "" (the default)
	// means it must hold for every strategy that issues fencing tokens (a
	// strategy promise). Set it to Break where a fault loses the counter
	// itself (e.g. a failover to a replica that never saw its INCR).
	Fencing Expect
	Reason  string
	// DuringFaults is the availability the pair must show while a fault
	// window is open; "" is not judged.
	DuringFaults Availability
}

// Summary is the pair's one-word expectation: "must-break" if any check
// must break, "must-hold" if every check must hold, else "at-risk".
func (e Expectation) Summary() string {
	all := []Expect{e.Exclusion, e.Resource, e.Liveness}
	for _, x := range append(all, e.Fencing) {
		if x == Break {
			return "must-break"
		}
	}
	for _, x := range all {
		if x != Hold {
			return "at-risk"
		}
	}
	return "must-hold"
}

// Checks returns the expectation per check name, as in results.json
// ("fencing" only when Fencing is set).
func (e Expectation) Checks() map[string]string {
	m := map[string]string{"exclusion": string(e.Exclusion), "resource": string(e.Resource), "liveness": string(e.Liveness)}
	if e.Fencing != "" {
		m["fencing"] = string(e.Fencing)
	}
	return m
}

// row is one row of a strategy's verdicts: a scenario and what the
// strategy must show under it.
type row struct {
	scenario string
	exp      Expectation
}

// safe: every check must hold.
func safe(reason string) Expectation {
	return Expectation{Exclusion: Hold, Resource: Hold, Liveness: Hold, Reason: reason}
}

// broken: exclusion and the resource must break (a canary); liveness must hold.
func broken(reason string) Expectation {
	return Expectation{Exclusion: Break, Resource: Break, Liveness: Hold, Reason: reason}
}

// fencedOnly: exclusion must break while fencing keeps the resource safe.
func fencedOnly(reason string) Expectation {
	return Expectation{Exclusion: Break, Resource: Hold, Liveness: Hold, Reason: reason}
}

// mayBreak: exclusion and the resource are at risk (it depends on the
// seed's timing); liveness must hold.
func mayBreak(reason string) Expectation {
	return Expectation{Exclusion: AtRisk, Resource: AtRisk, Liveness: Hold, Reason: reason}
}

// keepsGranting: safe, and the strategy must keep granting while the fault
// is on (a slow link delays grants but does not stop them).
func keepsGranting(reason string) Expectation {
	e := safe(reason)
	e.DuringFaults = Granting
	return e
}

// families returns the verdict rows of every strategy family, strategy →
// rows; a strategy appears in one family only (TestVerdictTable).
func families() []map[string][]row {
	return []map[string][]row{singleNodeVerdicts(), renewalVerdicts(), reentrantVerdicts(),
		quorumVerdicts(), fencedVerdicts(), libraryVerdicts(), consensusVerdicts()}
}

// table is the verdict table: strategy → scenario → expectation.
func table() map[string]map[string]Expectation {
	t := map[string]map[string]Expectation{}
	for _, fam := range families() {
		for st, rows := range fam {
			m := map[string]Expectation{}
			for _, r := range rows {
				m[r.scenario] = r.exp
			}
			t[st] = m
		}
	}
	return t
}

// Expected returns the verdict table's row for a (strategy, scenario)
// pair; ok is false when the table has none: a pair that does not apply,
// an unknown name, or a strategy with no rows of its own (whose
// expectations would follow from its declared claims; For does not gate
// such a run).
func Expected(strategy, scenario string) (e Expectation, ok bool) {
	e, ok = table()[strategy][scenario]
	return e, ok
}

// For is the expectation a run of (strategy, scenario) is judged against.
// notGated is NotGated's reason recorded with the run (the history
// header's NotGated field): when set, every check is at risk with that
// reason, so lockbench run and lockbench check of its history agree. A pair
// without a row (Expected's ok false) is at risk too, with a reason that
// says so: nothing is gated; except that a lock run through an adapter
// (impl.IsExec) is judged by the expectation its declared claims predict
// (FromClaims; impl.Lookup starts the adapter once to read them). Every
// applicable pair of a registered strategy has a row
// (TestVerdictTableComplete).
func For(strategy, scenario, notGated string) Expectation {
	if notGated != "" {
		return Expectation{Exclusion: AtRisk, Resource: AtRisk, Liveness: AtRisk, Fencing: AtRisk,
			Reason: notGated + ": the verdict table assumes the strategy's defaults, so nothing is gated"}
	}
	if e, ok := Expected(strategy, scenario); ok {
		return e
	}
	// No row: a strategy outside the registry (a lock run through an
	// adapter process) or an unknown pair. An adapter's expectation follows
	// from the claims its hello declares (FromClaims).
	why := fmt.Sprintf("no expectation recorded for %s under %s", strategy, scenario)
	if _, known := table()[strategy]; !known {
		why = "no verdict rows for this strategy: every check is reported, none is gated"
		if impl.IsExec(strategy) {
			st, err := impl.Lookup(strategy)
			if err != nil {
				why = fmt.Sprintf("no verdict rows for this strategy and its claims are unknown (%v): every check is reported, none is gated", err)
			} else if e, ok := FromClaims(st.Info(), scenario); ok {
				return e
			}
		}
	}
	return Expectation{Exclusion: AtRisk, Resource: AtRisk, Liveness: AtRisk, Reason: why}
}

// Pair is one row of the verdict matrix: a (strategy, scenario) pair and
// its expectation.
type Pair struct {
	Strategy, Scenario string
	Expectation
}

// Matrix returns every row of the verdict table, in report order
// (scenarios as chaos.All lists them, then strategies as impl.All does), for
// docs/verdicts.md and reports.
func Matrix() []Pair {
	rank := func(names []string) map[string]int {
		m := map[string]int{}
		for i, n := range names {
			m[n] = i
		}
		return m
	}
	sc, st := rank(chaos.Names()), rank(impl.Names())
	var out []Pair
	for stn, m := range table() {
		for scn, e := range m {
			out = append(out, Pair{stn, scn, e})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Scenario != out[j].Scenario {
			return sc[out[i].Scenario] < sc[out[j].Scenario]
		}
		return st[out[i].Strategy] < st[out[j].Strategy]
	})
	return out
}

// NotApplicable returns the (strategy, scenario) pairs whose scenario does
// not apply to the strategy (e.g. Redlock-only faults for a single-node
// lock), with the reason, in report order. They never run.
func NotApplicable() []Pair {
	var out []Pair
	for _, sc := range chaos.All() {
		for _, st := range impl.All() {
			if ok, why := sc.AppliesTo(st.Info()); !ok {
				out = append(out, Pair{Strategy: st.Name(), Scenario: sc.Name, Expectation: Expectation{Reason: "not applicable: " + why}})
			}
		}
	}
	return out
}

//go:generate go test -run TestVerdictsDoc|TestMatrixGolden -update .

// MatrixMarkdown renders the verdict matrix as a Markdown table, one row per
// pair (docs/verdicts.md embeds it; a test keeps the two in sync). The "during
// faults" column is the availability the pair must show while a fault is
// on; "fencing" is blank where the default applies (tokens must increase
// for strategies that issue them).
func MatrixMarkdown() string {
	var b strings.Builder
	b.WriteString("| scenario | strategy | expected | exclusion | resource | liveness | fencing | during faults | why |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|\n")
	for _, p := range Matrix() {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", p.Scenario, p.Strategy, p.Summary(),
			p.Exclusion, p.Resource, p.Liveness, p.Fencing, p.DuringFaults, p.Reason)
	}
	for _, na := range NotApplicable() {
		fmt.Fprintf(&b, "| %s | %s | n/a | | | | | | %s |\n", na.Scenario, na.Strategy, na.Reason)
	}
	return b.String()
}
