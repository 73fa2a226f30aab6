// Package verdicts is the verdict table: what each (strategy, scenario)
// pair must show, check by check, and why in one line. validate judges a
// checked run against it; lockbench list, the report and docs/verdicts.md
// print it.
//
// The API is a few entry points:
//
//   - SourceOf: where a lock's expectations come from, decided once for
//     every rule: its verdict rows (built-in strategies) or its claims
//     (FromClaims: exec: adapters and any lock without rows).
//   - Expected: the verdict table's row of a pair, if it has one.
//   - For: what a run is judged against (the row or the claims, or "at
//     risk, not gated" when the run left the lock's defaults or there is no
//     expectation).
//   - NotGated: why a run's settings take it outside the table ("" if not).
//   - Matrix, NotApplicable and MatrixMarkdown: the whole table, for lists
//     and reports.
//
// The table is keyed by strategy, one file per strategy family
// (verdicts_*.go), with the reasons the rows share in reasons_*.go: each
// row is a scenario, its expectation and a one-line reason. A test fails
// when an applicable pair of a registered strategy has no row, or a row
// names a pair that does not exist or does not apply.
package verdicts

import (
	"fmt"
	"sort"
	"strings"

	"github.com/lockbench/lockbench/chaos"
	"github.com/lockbench/lockbench/impl/strategies"
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
	// Renewal is what the renewal-liveness check must show (no lease lost
	// with no fault while its holder ran: checker.Renewal); "" is not
	// judged. Source.For sets Hold for every lock that claims renewal,
	// whatever its usage policy and whether or not the run is gated
	// otherwise: a renewal that does not keep the lease on a healthy
	// server is the lock's bug in any setting.
	Renewal Expect
	Reason  string
	// DuringFaults is the availability the pair must show while a fault
	// window is open; "" is not judged.
	DuringFaults Availability
	// Contract is what the contract checks must show (ContractChecks: no
	// orphaned lock, true failure reasons, a timely lost signal and none
	// after release, no extend after release): "" (the default) means
	// they must hold, for every lock in every scenario, rows and claims
	// alike, whatever else the run is expected to show. No row sets it
	// today: a scenario whose fault could make one of these checks wrong
	// about a correct lock would set it to AtRisk with its reason.
	Contract Expect
}

// ContractChecks are the names of the contract checks, in report order:
// promises every lock makes about its own calls, whatever the scenario
// (see Expectation.Contract).
var ContractChecks = []string{"orphans", "lost", "extends", "reasons"}

// ContractExpect is the expectation of the contract checks: Contract, Hold
// when unset.
func (e Expectation) ContractExpect() Expect {
	if e.Contract == "" {
		return Hold
	}
	return e.Contract
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
	if e.Renewal != "" {
		m["renewal"] = string(e.Renewal)
	}
	if e.Contract != "" {
		for _, c := range ContractChecks {
			m[c] = string(e.Contract)
		}
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
// an unknown name, or a strategy with no rows of its own. It reads the
// table only: a rule that asks what a run must show asks the run's Source
// (SourceOf), which answers from the claims for a lock without rows.
func Expected(strategy, scenario string) (e Expectation, ok bool) {
	e, ok = table()[strategy][scenario]
	return e, ok
}

// For is the expectation a run of (strategy, scenario) is judged against:
// LookupSource(strategy).For(scenario, notGated). notGated is NotGated's
// reason recorded with the run (the history header's NotGated field): when
// set, every check is at risk with that reason, so lockbench run and
// lockbench check of its history agree. A strategy with verdict rows is
// judged by its row, any other lock (an exec: adapter) by the expectation
// its declared claims predict (FromClaims; strategies.Lookup starts an adapter
// once to read them); a pair with neither is at risk with a reason that
// says so: nothing is gated. Every applicable pair of a registered
// strategy has a row (TestVerdictTableComplete).
func For(strategy, scenario, notGated string) Expectation {
	return LookupSource(strategy).For(scenario, notGated)
}

// Pair is one row of the verdict matrix: a (strategy, scenario) pair and
// its expectation.
type Pair struct {
	Strategy, Scenario string
	Expectation
}

// Matrix returns every row of the verdict table, in report order
// (scenarios as chaos.All lists them, then strategies as strategies.All does), for
// docs/verdicts.md and reports.
func Matrix() []Pair {
	rank := func(names []string) map[string]int {
		m := map[string]int{}
		for i, n := range names {
			m[n] = i
		}
		return m
	}
	sc, st := rank(chaos.Names()), rank(strategies.Names())
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
		for _, st := range strategies.All() {
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
