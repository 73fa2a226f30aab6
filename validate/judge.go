// Package validate judges a checked history against the verdict table
// (package verdicts): it turns the checker's results into a run's
// verdicts, "as expected" or the lines that say what contradicted the
// table, with the evidence rules (a check that found nothing on too little
// evidence is inconclusive) and the unknown calls' budget. lockbench run,
// bench and check all judge through it, so a run and `lockbench check` of
// its saved history agree.
//
// The entry points: Fill (a checker report and a history → the run's
// record), FromHistory (the record's settings from a history header),
// CheckHistory (lockbench check after loading), and the rules bench asks
// about a finished run (Stalled, BusyPartialOrphans, RerunHelps,
// AvailabilityHints).
package validate

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lockbench/lockbench/checker"
	"github.com/lockbench/lockbench/checker/witness"
	"github.com/lockbench/lockbench/figures"
	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/history/measure"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/stats"
	"github.com/lockbench/lockbench/verdicts"
)

// Fill judges a checked history: it sets out's expectation (Expected,
// ExpectedChecks, Reason from exp), verdict per check, violation count,
// check messages, evidence, witnesses, liveness figures, visualisation
// path (relative to outDir when it can be), fault windows, fairness and
// error breakdown from the checker report rep of the history ops; applies
// the evidence rules (Missing: a check that found no violation on too
// little evidence is "inconclusive", with what is missing in out.Missing)
// and the liveness finding (LivenessFinding, in out.LivenessFinding);
// then compares the verdicts with exp: out.Unexpected gets one line per
// contradiction, out.Inconclusive one line per gated check that lacked
// evidence, and out.AsExpected is true when both are empty. Fairness and
// the liveness finding count out.Config.Clients clients, and the evidence
// rules read out.Scenario (does it inject faults?), so set both first.
//
// The rules: a check expected to hold must not be violated; a check
// expected to break (a canary) must be violated; an inconclusive check is
// neither (it is listed in out.Inconclusive, never in out.Unexpected); an
// at-risk check is never judged. Exclusion and resource expected to hold
// must have been checked at all (a history with holds but no resource
// operations, from another tool, is unexpected). A checker that
// disagrees with itself (a bug) is unexpected. Fencing tokens and
// reentrancy counts are strategy promises, judged in every scenario
// unless exp.Fencing says otherwise. exp.DuringFaults judges the grants
// inside fault windows; "must keep granting" with no grant is inconclusive
// when the whole run granted almost nothing (a liveness finding) or most
// acquires during the faults had an unknown outcome (availabilityMissing).
func Fill(out *results.Run, ops []history.Operation, rep checker.Report, exp verdicts.Expectation, outDir string) {
	out.Expected, out.ExpectedChecks, out.Reason = exp.Summary(), exp.Checks(), exp.Reason
	out.Verdict = results.Verdict{
		Exclusion:  rep.Exclusion.Status,
		Resource:   rep.Resource.Status,
		Liveness:   rep.Liveness.Status,
		Fencing:    rep.Fencing.Status,
		Reentrancy: rep.Reentrancy.Status,
		Renewal:    rep.Renewal.Status,
	}
	out.Violations = rep.Exclusion.Violations + rep.Resource.Violations
	out.Checks = map[string]string{
		"exclusion":  rep.Exclusion.Message,
		"resource":   rep.Resource.Message,
		"liveness":   rep.Liveness.Message,
		"fencing":    rep.Fencing.Message,
		"reentrancy": rep.Reentrancy.Message,
		"renewal":    rep.Renewal.Message,
	}
	out.Verdict.Orphans, out.Verdict.Lost, out.Verdict.Extends, out.Verdict.Reasons = rep.Orphans.Status, rep.Lost.Status, rep.Extends.Status, rep.Reasons.Status
	for _, c := range contractResults(rep) {
		out.Checks[c.name] = c.r.Message
	}
	f := rep.Figures
	out.Liveness = results.LivenessFigures{
		LongestUnavailableMs: f.LongestUnavailableMs, UnavailableMsByKey: f.UnavailableMsByKey, RecoveryMs: f.RecoveryMs,
		FailedShare: f.FailedShare, InfoShare: f.InfoShare, Deadlocked: f.Deadlocked,
		Orphans: f.Orphans, LongestOrphanMs: f.LongestOrphanMs,
		GrantsDuringFaults: measure.GrantsDuringFaults(ops),
	}
	out.Evidence = rep.Evidence
	out.Witnesses = rep.Witnesses()
	if rep.Visualization != "" {
		if rel, err := filepath.Rel(outDir, rep.Visualization); err == nil {
			out.Visualization = rel
		} else {
			out.Visualization = rep.Visualization
		}
	}
	out.Faults = faults(ops)
	out.Fairness, out.Errors = fairnessAndErrors(ops, out.Config.Clients)
	budget := time.Duration(out.Config.OpTimeoutMs * float64(time.Millisecond))
	finding := LivenessFinding(out.Config.Clients, rep.Evidence, UnknownsOf(ops, budget), rep.Liveness.Status == checker.Violated)
	out.LivenessFinding = finding.Text
	out.Availability = availabilityOf(ops, budget)
	missing := Missing(out.Scenario, rep, exp, finding, UnknownsOf(ops, budget))
	var tolerates string // why the availability during the faults is violated ("" if it is not)
	if exp.DuringFaults == verdicts.Granting && spansSeveral(out.Config.Topology) {
		tolerates = toleratesFault(ops, budget, time.Duration(out.Config.TTLMs*float64(time.Millisecond)))
	}
	if rep.Renewal.Status == checker.Inconclusive {
		if missing == nil {
			missing = map[string]results.MissingEvidence{}
		}
		missing["renewal"] = results.MissingEvidence{What: rep.Renewal.Message, Fix: fixStall}
	}
	if exp.DuringFaults != "" && out.Liveness.GrantsDuringFaults == 0 && tolerates == "" {
		if m, ok := availabilityMissing(ops, finding, budget, exp.DuringFaults); ok {
			if missing == nil {
				missing = map[string]results.MissingEvidence{}
			}
			missing["availability"] = m
		}
	}
	for name, v := range map[string]*checker.Status{"exclusion": &out.Verdict.Exclusion, "resource": &out.Verdict.Resource, "fencing": &out.Verdict.Fencing,
		"orphans": &out.Verdict.Orphans, "lost": &out.Verdict.Lost, "extends": &out.Verdict.Extends, "reasons": &out.Verdict.Reasons} {
		if _, ok := missing[name]; ok {
			*v = checker.Inconclusive
		}
	}
	out.Missing = missing
	out.Unexpected, out.Inconclusive = judge(rep, exp, out.Liveness.GrantsDuringFaults, missing)
	if tolerates != "" {
		// The lock's own figures replace the bare "granted nothing".
		out.Unexpected = slices.DeleteFunc(out.Unexpected, func(l string) bool { return strings.HasPrefix(l, "availability") })
		out.Unexpected = append(out.Unexpected, "availability: must keep granting during the fault but "+tolerates)
	}
	out.AsExpected = len(out.Unexpected) == 0 && len(out.Inconclusive) == 0
}

// spansSeveral reports whether a run's topology (results.RunConfig.Topology,
// e.g. "single", "replicated:1+sentinel", "independent:5", "etcd:3") gives
// the lock several nodes to answer from, so that a fault on some of them
// need not slow it (toleratesFault). A single node, or a primary with
// replicas (the lock talks to the primary alone), does not: every call
// waits on the faulty node, late grants are the fault's, not the lock's,
// and "must keep granting" there means any grant at all (judge).
func spansSeveral(topology string) bool {
	kind, n, ok := strings.Cut(topology, ":")
	if !ok || (kind != "independent" && kind != "etcd" && kind != "zookeeper") {
		return false
	}
	nodes, err := strconv.Atoi(n)
	return err == nil && nodes > 1
}

// lateGrantShare is the share of a fault's grants that may come late
// (toleratesFault) before the lock is said not to tolerate the fault.
const lateGrantShare = 0.5

// toleratesFault judges a run in which the lock's claims say it keeps
// granting through the fault (a quorum lock with a minority of nodes
// down or paused): it returns why it did not, with the figures, or ""
// when it did or the run cannot say. The lock did not when, over the
// fault windows that saw acquire calls:
//   - it granted nothing, and most of those calls either ran to the call
//     budget (at least 90% of it: the lock waited out its deadline on the
//     faulty node instead of answering from the live ones) or were
//     refused (result fail: a definite no while a quorum was up); calls
//     answered unknown well inside the budget (the lock's own short
//     timeouts on a busy machine) leave the check to the evidence rules;
//   - or more than half of its grants there came late: their calls took
//     at least 90% of the budget, or half the TTL (half the lease spent
//     acquiring), where quiet grants did not.
//
// The text names the lock's figures; it blames the budget only as the
// alternative a reader can rule out by running another lock beside it
// (lockbench bench, diff), which the bench's hint then does.
func toleratesFault(ops []history.Operation, budget, ttl time.Duration) string {
	ws := measure.AvailabilityOf(ops, budget)
	quiet := ws[0]
	var calls, grants, fails, atBudget, late int
	var grantMs []float64
	for _, w := range ws[1:] {
		calls += w.Acquires
		fails += w.Fail
		atBudget += w.AtBudget
		grants += len(w.GrantCallsMs)
		grantMs = append(grantMs, w.GrantCallsMs...)
	}
	if calls == 0 {
		return "" // no call during the fault: no evidence (the evidence rules say so)
	}
	slow := func(ms float64) bool {
		d := time.Duration(ms * float64(time.Millisecond))
		return (budget > 0 && d >= budget*9/10) || (ttl > 0 && d >= ttl/2)
	}
	for _, g := range grantMs {
		if slow(g) {
			late++
		}
	}
	quietSlow := 0
	for _, g := range quiet.GrantCallsMs {
		if slow(g) {
			quietSlow++
		}
	}
	budgetText := "no call budget recorded"
	if budget > 0 {
		budgetText = fmt.Sprintf("the %v call budget", budget)
	}
	switch {
	case grants == 0 && 2*(atBudget+fails) > calls:
		return fmt.Sprintf("granted nothing: of %d acquire calls during the fault, %d ran to %s and %d were refused (quiet: %d grants): the lock waited on the faulty node or refused while the nodes it needs were up; a lock that tolerates this fault answers from them well inside the budget (per-node timeouts)",
			calls, atBudget, budgetText, fails, len(quiet.GrantCallsMs))
	case grants > 0 && float64(late) > lateGrantShare*float64(grants) && 2*quietSlow <= len(quiet.GrantCallsMs):
		med := medianMs(grantMs)
		return fmt.Sprintf("%d of its %d grants during the fault came late (a call of at least 90%% of %s or half the TTL %v; median %.0f ms, quiet median %.1f ms over %d grants): the lock waited on the faulty node instead of answering from the live ones",
			late, grants, budgetText, ttl, med, medianMs(quiet.GrantCallsMs), len(quiet.GrantCallsMs))
	}
	return ""
}

// medianMs is the median of xs (0 when empty).
func medianMs(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// availabilityMissing is the evidence an availability check (a, the
// expectation) lacks when no grant came during the faults: no client
// called the lock while a fault was in force (the window tested nothing:
// "no call during the fault", for either expectation); or, for "must keep
// granting", the whole run granted almost nothing (finding), or more than
// MaxUnknownShare of the acquires during the faults had an unknown outcome
// (not the lock's refusals: what the unknowns were is in the hint). ok is
// false when the check has its evidence: no grant is then a finding
// against a lock that must keep granting, and the evidence a lock that
// must grant nothing needs. budget is each call's budget (0: not
// recorded): the hint says what the unknowns' durations show
// (UnknownsOf), and sends the user to more time only when the calls took
// it.
func availabilityMissing(ops []history.Operation, finding Finding, budget time.Duration, a verdicts.Availability) (results.MissingEvidence, bool) {
	if calls, windows := measure.CallsDuringFaults(ops); calls == 0 && windows > 0 {
		return results.MissingEvidence{What: "no call during the fault: no client called the lock while a fault was in force, so the window tested nothing",
			Fix: "run longer (--duration) or check why the clients were not calling (a client slow to start delays the schedule; see config.schedule_wait_ms)"}, true
	}
	if a != verdicts.Granting {
		return results.MissingEvidence{}, false
	}
	if finding.Text != "" {
		return results.MissingEvidence{What: "no grant during the fault, but the whole run granted almost nothing (" + finding.Text + ")", Fix: finding.Fix}, true
	}
	var during []history.Operation
	measure.EachAcquireDuringFaults(ops, func(op history.Operation) { during = append(during, op) })
	total, unknown := measure.AcquiresDuringFaults(ops)
	if total > 0 && float64(unknown) > MaxUnknownShare*float64(total) {
		m := results.MissingEvidence{What: fmt.Sprintf("no grant during the fault, but %d of its %d acquires had an unknown outcome (%s; at most %.0f%%)", unknown, total, pct(unknown, total), 100*MaxUnknownShare), Fix: fixTimeouts}
		if text, fix, ok := UnknownsOf(during, budget).Explain("acquire"); ok {
			m.What += ", of which " + text
			m.Fix = fix
		}
		return m, true
	}
	return results.MissingEvidence{}, false
}

// judge compares a checker report with an expectation and returns one line
// per contradiction (unexpected) and one per gated check that is
// inconclusive (none of either: as expected); grantsDuringFaults is
// measure.GrantsDuringFaults of the history and missing the evidence
// rules' verdict (Missing, plus "availability"): a check listed there is
// inconclusive whatever its checker status.
func judge(rep checker.Report, exp verdicts.Expectation, grantsDuringFaults int, missing map[string]results.MissingEvidence) (unexpected, inconclusive []string) {
	lacks := func(name string) (string, bool) {
		m, ok := missing[name]
		return m.String(), ok
	}
	check := func(name string, e verdicts.Expect, r checker.Result) {
		m, short := lacks(name)
		switch {
		case e == verdicts.AtRisk || e == "":
		case short: // before a violation: Stalled lists violations the machine may have caused
			inconclusive = append(inconclusive, fmt.Sprintf("%s must %s: inconclusive: %s", name, e, m))
		case r.Status == checker.Violated && e == verdicts.Hold:
			unexpected = append(unexpected, fmt.Sprintf("%s must hold but is violated: %s", name, r.Message))
		case r.Status == checker.Violated:
		case r.Status == checker.Inconclusive:
			unexpected = append(unexpected, fmt.Sprintf("%s is inconclusive: %s", name, r.Message))
		case e == verdicts.Hold && r.Status == checker.Skipped && (name == "exclusion" || name == "resource"):
			unexpected = append(unexpected, fmt.Sprintf("%s must hold but nothing was checked: %s", name, r.Message))
		case e == verdicts.Break:
			unexpected = append(unexpected, fmt.Sprintf("%s must break (canary) but is %s: %s", name, r.Status, r.Message))
		}
	}
	check("exclusion", exp.Exclusion, rep.Exclusion)
	check("resource", exp.Resource, rep.Resource)
	check("liveness", exp.Liveness, rep.Liveness)
	switch g := grantsDuringFaults; {
	case exp.DuringFaults == verdicts.Granting && g == 0:
		if m, short := lacks("availability"); short {
			inconclusive = append(inconclusive, "availability must keep granting during the fault: inconclusive: "+m)
		} else {
			unexpected = append(unexpected, "availability: must keep granting during the fault but granted nothing")
		}
	case exp.DuringFaults == verdicts.NotGranting && g > 0:
		unexpected = append(unexpected, fmt.Sprintf("availability: must grant nothing during the fault but granted %d times", g))
	case exp.DuringFaults == verdicts.NotGranting:
		if m, short := lacks("availability"); short {
			inconclusive = append(inconclusive, "availability must grant nothing during the fault: inconclusive: "+m)
		}
	}
	// Fencing tokens and reentrancy counts are strategy promises: a strategy
	// that claims them must keep them in every scenario, unless exp.Fencing
	// expects otherwise (a fault that loses the fencing counter itself) or
	// the fault loses the lock's state (reentrancy, below).
	if exp.Fencing == "" || exp.Fencing == verdicts.Hold {
		check("fencing", verdicts.Hold, rep.Fencing)
	} else {
		check("fencing", exp.Fencing, rep.Fencing)
	}
	// A fault that loses the lock's state (its row expects exclusion to
	// break, or puts it at risk) loses the hold counts with it: a nested
	// acquire then re-creates the hash at count 1. Counts are a promise
	// where the lock keeps its state; elsewhere they are at risk.
	if exp.Exclusion == verdicts.Break || exp.Exclusion == verdicts.AtRisk {
		check("reentrancy", verdicts.AtRisk, rep.Reentrancy)
	} else {
		check("reentrancy", verdicts.Hold, rep.Reentrancy)
	}
	check("renewal", exp.Renewal, rep.Renewal)
	// The contract checks: every lock's promises about its own calls, in
	// every scenario (Expectation.Contract).
	for _, c := range contractResults(rep) {
		check(c.name, exp.ContractExpect(), c.r)
	}
	return unexpected, inconclusive
}

// contractResult is one contract check's name and result.
type contractResult struct {
	name string
	r    checker.Result
}

// contractResults lists the contract checks' results in verdicts.ContractChecks order.
func contractResults(rep checker.Report) []contractResult {
	return []contractResult{{"orphans", rep.Orphans}, {"lost", rep.Lost}, {"extends", rep.Extends}, {"reasons", rep.Reasons}}
}

// FromHistory fills a run's workload figures from its history alone, for
// a history judged without the run that wrote it (`lockbench check`):
// the configuration the header records, grants, acquire attempts by
// result, throughput over the history's span, acquire latency and
// granting-call percentiles (ms), and the cost windows (without commands
// per grant: the command counter is not in the history). A run measures
// these itself, from its workload's own counts. The error is
// stats.Percentiles' (a latency that is not a finite number).
func FromHistory(out *results.Run, h history.Header, ops []history.Operation) error {
	out.Acquires = map[string]int{"ok": 0, "fail": 0, "info": 0}
	var first, last int64 = -1, 0
	for _, op := range ops {
		if op.Client < 0 {
			continue
		}
		if first < 0 || op.Invoke < first {
			first = op.Invoke
		}
		last = max(last, op.Complete)
		if op.Kind == history.Acquire && op.Depth <= 1 && op.Node == "" {
			out.Acquires[string(op.Result)]++
		}
	}
	out.Grants = out.Acquires["ok"]
	if first >= 0 && last > first {
		out.DurationS = float64(last-first) / 1e9
		out.ThroughputPerS = float64(out.Grants) / out.DurationS
	}
	out.Config = results.RunConfig{Clients: h.Clients, Keys: h.Keys, TTLMs: float64(h.TTLMs), OpTimeoutMs: float64(h.OpTimeoutMs), Fencing: h.Fencing, DurationMs: out.DurationS * 1000}
	var err error
	if out.AcquireLatencyMs, err = stats.Percentiles(measure.AcquireLatencies(ops)); err != nil {
		return err
	}
	if out.GrantCallMs, err = stats.Percentiles(measure.GrantCalls(ops)); err != nil {
		return err
	}
	figures.SetWindows(out, ops, nil) // the command counter is not in the history
	return nil
}

// availabilityOf converts measure.AvailabilityOf into results' form.
func availabilityOf(ops []history.Operation, budget time.Duration) []results.AvailabilityWindow {
	var out []results.AvailabilityWindow
	for _, w := range measure.AvailabilityOf(ops, budget) {
		a := results.AvailabilityWindow{Fault: w.Name, StartMs: float64(w.Start) / 1e6, EndMs: float64(w.End) / 1e6,
			Acquires: w.Acquires, OK: w.OK, Fail: w.Fail, Info: w.Info, Grants: len(w.GrantCallsMs), AtBudget: w.AtBudget}
		if w.Quiet {
			a.Fault = results.QuietWindow
		}
		if w.Span > 0 {
			a.GrantsPerS = float64(a.Grants) / (float64(w.Span) / 1e9)
		}
		if len(w.GrantCallsMs) > 0 {
			if l, err := stats.Percentiles(w.GrantCallsMs); err == nil {
				p50, p99 := l.P50, l.P99
				a.GrantCallP50Ms, a.GrantCallP99Ms = &p50, &p99
			}
		}
		out = append(out, a)
	}
	return out
}

// faults returns the nemesis windows of a history in ms since run start,
// ordered by start (measure.FaultWindows).
func faults(ops []history.Operation) []results.Fault {
	var fs []results.Fault
	for _, w := range measure.FaultWindows(ops) {
		fs = append(fs, results.Fault{Name: w.Name, StartMs: float64(w.Start) / 1e6, EndMs: float64(w.End) / 1e6, Note: w.Note})
	}
	return fs
}

// fairnessAndErrors computes a run's fairness and error breakdown from its
// history (measure.Outcomes): clients is the run's client count, clients
// that never got a grant count as zeros in the fairness index. The
// definitions are results.Run.Fairness and results.ErrorBreakdown's; the
// index is stats.JainIndex.
func fairnessAndErrors(ops []history.Operation, clients int) (float64, results.ErrorBreakdown) {
	o := measure.Outcomes(ops, clients)
	// JainIndex fails only on negative or non-finite values; counts are neither.
	fair, _ := stats.JainIndex(o.GrantsPerClient)
	return fair, results.ErrorBreakdown{NotAcquired: o.NotAcquired, Lost: o.Lost, ExpiredOnRelease: o.ExpiredOnRelease, Info: o.Info}
}

// Stalled applies the harness's own delay to a judged run: when a client
// stalled inside a hold for more than half the TTL with no fault to
// explain it (workload.Stats.MaxOverrun: the machine ran the harness
// late), a violation of a check expected to hold may be the machine's,
// not the lock's. Each such check becomes inconclusive, its missing
// evidence naming the stall, and out is judged again (rep and exp as given
// to Fill). It reports whether it changed out. A canary's violation and
// any check expected to hold that was not violated are left as they are.
func Stalled(out *results.Run, rep checker.Report, exp verdicts.Expectation, stall, ttl time.Duration) bool {
	if stall <= ttl/2 || out.Outcome() != results.OutcomeUnexpected {
		return false
	}
	changed := false
	for _, c := range []struct {
		name    string
		e       verdicts.Expect
		verdict *checker.Status
	}{{"exclusion", exp.Exclusion, &out.Verdict.Exclusion}, {"resource", exp.Resource, &out.Verdict.Resource}, {"fencing", exp.Fencing, &out.Verdict.Fencing},
		{"renewal", exp.Renewal, &out.Verdict.Renewal}, {"orphans", exp.ContractExpect(), &out.Verdict.Orphans}, {"lost", exp.ContractExpect(), &out.Verdict.Lost}, {"extends", exp.ContractExpect(), &out.Verdict.Extends}, {"reasons", exp.ContractExpect(), &out.Verdict.Reasons}} {
		if c.e != verdicts.Hold || *c.verdict != checker.Violated {
			continue
		}
		if out.Missing == nil {
			out.Missing = map[string]results.MissingEvidence{}
		}
		out.Missing[c.name] = results.MissingEvidence{
			What: fmt.Sprintf("a client stalled %v (TTL %v) inside a hold with no fault to explain it: the machine ran the harness late, so the violation may be the machine's, not the lock's", stall.Round(time.Millisecond), ttl),
			Fix:  fixStall}
		*c.verdict = checker.Inconclusive
		changed = true
	}
	if changed {
		out.Unexpected, out.Inconclusive = judge(rep, exp, out.Liveness.GrantsDuringFaults, out.Missing)
		out.AsExpected = len(out.Unexpected) == 0 && len(out.Inconclusive) == 0
	}
	return changed
}

// BusyPartialOrphans applies the machine's load to a judged run whose only
// orphans are partial ones: tokens of failed acquires left on a minority of
// a quorum lock's nodes (witness.OrphanWitness.Quorum false). A quorum lock
// cleans up a failed acquire's partial holds on a short budget (redsync:
// 0.05×TTL, 10 ms at TTL 200 ms); on a busy machine (results.Run.Busy: the
// noise sampler saw steal or run-queue pressure) the harness may run that
// cleanup too late, so the orphans may be the machine's, not the lock's.
// The orphans check then becomes inconclusive, its missing evidence naming
// the load, and out is judged again. It reports whether it changed out. A
// quorum orphan (the lock held by nobody's knowledge) stays a violation.
func BusyPartialOrphans(out *results.Run, rep checker.Report, exp verdicts.Expectation) bool {
	o := rep.Orphans.Witnesses
	if !out.Busy() || out.Outcome() != results.OutcomeUnexpected || out.Verdict.Orphans != checker.Violated || exp.ContractExpect() != verdicts.Hold ||
		len(o.Orphans) == 0 || o.Total.Orphans != len(o.Orphans) || slices.ContainsFunc(o.Orphans, func(w witness.OrphanWitness) bool { return w.Quorum }) {
		return false
	}
	if out.Missing == nil {
		out.Missing = map[string]results.MissingEvidence{}
	}
	out.Missing["orphans"] = results.MissingEvidence{
		What: fmt.Sprintf("%d partial acquires left on a minority of the nodes, on a busy machine: the lock cleans them up on a short budget, which the harness, run late, may have missed", len(o.Orphans)),
		Fix:  fixStall}
	out.Verdict.Orphans = checker.Inconclusive
	out.Unexpected, out.Inconclusive = judge(rep, exp, out.Liveness.GrantsDuringFaults, out.Missing)
	out.AsExpected = len(out.Unexpected) == 0 && len(out.Inconclusive) == 0
	return true
}

// AvailabilityHints names the cause of each availability violation among
// runs (one bench, or both sides of a diff) from the other runs of the same
// scenario and seed: when another lock was granted during the same fault,
// the line names the lock as the cause (and those locks' figures); when
// others ran and none could be granted, it names the call budget
// (--op-timeout) as what may be too short. A run alone gets no hint.
func AvailabilityHints(runs []results.Run) {
	for i := range runs {
		r := &runs[i]
		for j, line := range r.Unexpected {
			if !strings.HasPrefix(line, "availability: must keep granting") {
				continue
			}
			var granted, others []string
			for _, o := range runs {
				if o.Strategy == r.Strategy || o.Scenario != r.Scenario || o.Seed != r.Seed || o.Error != "" {
					continue
				}
				others = append(others, o.Strategy)
				n, calls := 0, []float64{}
				for _, w := range o.Availability {
					if w.Fault != results.QuietWindow {
						n += w.Grants
						if w.GrantCallP50Ms != nil {
							calls = append(calls, *w.GrantCallP50Ms)
						}
					}
				}
				if n > 0 {
					granted = append(granted, fmt.Sprintf("%s %d times (median call %.1f ms)", o.Strategy, n, medianMs(calls)))
				}
			}
			switch {
			case len(granted) > 0:
				r.Unexpected[j] = line + "; the lock, not the budget: under the same fault in this run set " + strings.Join(granted, ", ") + " were granted"
			case len(others) > 0:
				r.Unexpected[j] = line + "; no other lock here (" + strings.Join(others, ", ") + ") was granted during this fault either: the call budget (--op-timeout) may be too short for it"
			}
		}
	}
}
