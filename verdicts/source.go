package verdicts

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/lockbench/lockbench/chaos"
	"github.com/lockbench/lockbench/chaos/schedule"
	"github.com/lockbench/lockbench/checker"
	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/adapterclient"
	"github.com/lockbench/lockbench/impl/strategies"
)

// Source is where a lock's expectations come from, decided in one place
// (SourceOf) for every rule that asks what a run must show: For, the
// not-gated rules (NotGated: long critical sections, one client), the
// availability during faults (Expectation.DuringFaults) and the report's
// sentences. A strategy with verdict rows (the built-in strategies) is
// judged by its rows; any other lock (a lock run through an adapter
// process, exec:, or any lock the registry does not list) by the
// expectations its declared claims predict (FromClaims). So a lock is held
// to the same expectations whichever way it runs: an adapter with
// token-lua's claims is gated wherever token-lua is, and left ungated
// only where token-lua is.
type Source struct {
	strategy string
	// rows are the strategy's verdict rows, scenario → expectation; nil
	// when it has none.
	rows map[string]Expectation
	// info is the lock's declaration (claims, policy, nodes), read when it
	// has no rows; known says it could be read.
	info  impl.Info
	known bool
	// unknown says why the claims could not be read ("" when known or
	// when there was nothing to read them from).
	unknown string
}

// SourceOf is the expectation source of strategy, whose declaration is
// info (impl.Strategy.Info, with library settings applied): its verdict
// rows when it has any, else its claims.
func SourceOf(strategy string, info impl.Info) Source {
	if rows, ok := table()[strategy]; ok {
		return Source{strategy: strategy, rows: rows, info: info, known: true}
	}
	return Source{strategy: strategy, info: info, known: true}
}

// LookupSource is SourceOf for a strategy known by name only (lockbench
// check of a saved history): a strategy without rows is looked up
// (strategies.Lookup; an exec: adapter is started once to read its hello) for
// its claims. A name that cannot be looked up has neither rows nor
// claims: nothing is gated.
func LookupSource(strategy string) Source {
	if rows, ok := table()[strategy]; ok {
		src := Source{strategy: strategy, rows: rows, known: true}
		if st, err := strategies.Lookup(strategy); err == nil {
			src.info = st.Info() // its claims (renewal: the renewal-liveness check)
		}
		return src
	}
	st, err := strategies.Lookup(strategy)
	if err != nil {
		s := Source{strategy: strategy}
		if adapterclient.IsExec(strategy) {
			s.unknown = err.Error()
		}
		return s
	}
	return SourceOf(strategy, st.Info())
}

// RenewalOptions are the renewal-liveness check's options for a run of
// strategy under scenario: the scenario's declared reach
// (chaos.Scenario.KeepsLeases; a fault-free scenario keeps every lease)
// and whether lockbench's own process runs the lock's renewals (every
// strategy but an exec: adapter, which renews on its own schedule).
func RenewalOptions(strategy, scenario string) checker.RenewalOptions {
	o := checker.RenewalOptions{HarnessRenews: !adapterclient.IsExec(strategy)}
	if sc, err := chaos.Lookup(scenario); err == nil {
		o.KeepsLeases = sc.KeepsLeases || sc.Kind == chaos.None
	}
	return o
}

// Rows reports whether the expectations come from the verdict table (the
// strategy has rows), not from the claims.
func (s Source) Rows() bool { return s.rows != nil }

// phrase is rows when the expectations come from the verdict table,
// else claims: the words of a sentence that names the source.
func (s Source) phrase(rows, claims string) string {
	if s.Rows() {
		return rows
	}
	return claims
}

// Expected is the expectation of the lock under scenario: its row, or
// what its claims predict (FromClaims); ok is false when there is none (a
// pair without a row, a scenario no claims rule covers, claims that could
// not be read).
func (s Source) Expected(scenario string) (Expectation, bool) {
	if s.Rows() {
		e, ok := s.rows[scenario]
		return e, ok
	}
	if !s.known {
		return Expectation{}, false
	}
	return FromClaims(s.info, scenario)
}

// HoldsThroughLongCS reports whether the lock is expected to keep
// exclusion and the resource safe through the long-cs scenario (it renews
// or checks its validity): only such a lock keeps its expectations when
// the workload's own critical sections are long (longCS).
func (s Source) HoldsThroughLongCS() bool {
	e, ok := s.Expected("long-cs")
	return ok && e.Exclusion == Hold && e.Resource == Hold
}

// For is the expectation a run of the lock under scenario is judged
// against. notGated is NotGated's reason recorded with the run: when set,
// every check is at risk with that reason. Without an expectation
// (Expected's ok false) every check is at risk too, with a reason that
// says why: nothing is gated.
func (s Source) For(scenario, notGated string) Expectation {
	e := s.forScenario(scenario, notGated)
	if s.info.Claims.Renewal {
		// Renewal liveness holds in every setting (see Expectation.Renewal).
		e.Renewal = Hold
	}
	return e
}

// forScenario is For without the renewal-liveness expectation.
func (s Source) forScenario(scenario, notGated string) Expectation {
	if notGated != "" {
		assumes := s.phrase("the verdict table assumes the strategy's defaults", "the expectations its claims predict assume the lock's defaults")
		return Expectation{Exclusion: AtRisk, Resource: AtRisk, Liveness: AtRisk, Fencing: AtRisk,
			Reason: notGated + ": " + assumes + ", so nothing is gated"}
	}
	if e, ok := s.Expected(scenario); ok {
		return e
	}
	var why string
	switch {
	case s.Rows():
		why = fmt.Sprintf("no expectation recorded for %s under %s", s.strategy, scenario)
	case s.known:
		e, _ := FromClaims(s.info, scenario)
		return e // at risk, its reason saying no claims rule covers the scenario
	case s.unknown != "":
		why = fmt.Sprintf("no verdict rows for this strategy and its claims are unknown (%s): every check is reported, none is gated", s.unknown)
	default:
		why = "no verdict rows for this strategy: every check is reported, none is gated"
	}
	return Expectation{Exclusion: AtRisk, Resource: AtRisk, Liveness: AtRisk, Reason: why}
}

// ForSchedule is the expectation a run of the fault schedule sch is
// judged against (lockbench run --schedule, lockbench hunt): the weakest
// of the baseline's and of every scenario that exercises a step's
// primitive alone (schedule.ScenariosFor) and applies to the lock: a check
// must hold only when each of them says it must, else it is at risk; a
// canary's "must break" is at risk too (a drawn schedule promises no
// landing). A step whose primitive no applicable scenario exercises
// leaves every check at risk (nothing says what the lock does under it)
// but the contract checks, which hold in every scenario.
// Availability during faults is not judged (the scenarios' windows are
// what it was measured for; a schedule's are drawn). notGated as in For.
func (s Source) ForSchedule(sch schedule.Schedule, notGated string) Expectation {
	if notGated != "" {
		return s.For("", notGated)
	}
	exp, ok := s.Expected("baseline")
	if !ok {
		return s.For("baseline", "")
	}
	var used []string
	for i, st := range sch.Steps {
		names := s.exercising(st)
		if len(names) == 0 {
			return Expectation{Exclusion: AtRisk, Resource: AtRisk, Liveness: AtRisk, Fencing: AtRisk,
				Reason: fmt.Sprintf("schedule %s: no scenario that applies to %s exercises step %d's %s alone, so nothing says what the lock does under it: only the contract checks, the lock's promises about its own calls in every scenario, are gated", sch.Name, s.strategy, i+1, st.Fault)}
		}
		for _, name := range names {
			e, _ := s.Expected(name)
			exp = weakest(exp, e)
			if !slices.Contains(used, name) {
				used = append(used, name)
			}
		}
	}
	exp.DuringFaults = ""
	if len(used) == 0 {
		exp.Reason = fmt.Sprintf("schedule %s has no fault: the baseline's expectation (%s)", sch.Name, exp.Reason)
		return exp
	}
	exp.Reason = fmt.Sprintf("schedule %s: the weakest expectation of baseline, %s (the scenarios that exercise its faults alone); availability during faults not judged", sch.Name, strings.Join(used, ", "))
	if s.info.Claims.Renewal {
		exp.Renewal = Hold // outside the faults' reach, whatever the schedule (Expectation.Renewal)
	}
	return exp
}

// exercising returns the scenarios that exercise step st's primitive
// alone, apply to the lock and have an expectation for it (a row, or a
// claims rule).
func (s Source) exercising(st schedule.Step) []string {
	var out []string
	for _, name := range schedule.ScenariosFor(st) {
		if !s.Rows() {
			sc, err := chaos.Lookup(name)
			if err != nil {
				continue
			}
			if ok, _ := sc.AppliesTo(s.info); !ok {
				continue
			}
		}
		if _, ok := s.Expected(name); ok {
			out = append(out, name)
		}
	}
	return out
}

// weakest combines two expectations check by check: a check must hold
// only when both say it must; anything else is at risk. Fencing "" is
// the strategy's promise (must hold), and Contract "" the contract
// checks' (must hold).
func weakest(a, b Expectation) Expectation {
	w := func(x, y Expect) Expect {
		if x == Hold && y == Hold {
			return Hold
		}
		return AtRisk
	}
	f := func(x, y Expect) Expect {
		if (x == "" || x == Hold) && (y == "" || y == Hold) {
			return x
		}
		return AtRisk
	}
	return Expectation{Exclusion: w(a.Exclusion, b.Exclusion), Resource: w(a.Resource, b.Resource),
		Liveness: w(a.Liveness, b.Liveness), Fencing: f(a.Fencing, b.Fencing), Contract: f(a.Contract, b.Contract), Reason: a.Reason}
}

// ForHeader is the expectation of a saved history (lockbench check): the
// schedule's (ForSchedule) when its header carries one, else For of its
// scenario.
func ForHeader(h history.Header) Expectation {
	if len(h.Schedule) == 0 {
		return For(h.Strategy, h.Scenario, h.NotGated)
	}
	sch, err := schedule.Decode(bytes.NewReader(h.Schedule))
	if err != nil {
		return Expectation{Exclusion: AtRisk, Resource: AtRisk, Liveness: AtRisk,
			Reason: fmt.Sprintf("the history's fault schedule cannot be read (%v): every check is reported, none is gated", err)}
	}
	return LookupSource(h.Strategy).ForSchedule(sch, h.NotGated)
}
