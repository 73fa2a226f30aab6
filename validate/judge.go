package validate

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/lockbench/lockbench/checker"
	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/results"
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
func Fill(out *results.Run, ops []history.Operation, rep checker.Report, exp Expectation, outDir string) {
	out.Expected, out.ExpectedChecks, out.Reason = exp.Summary(), exp.Checks(), exp.Reason
	out.Verdict = results.Verdict{
		Exclusion:  rep.Exclusion.Status,
		Resource:   rep.Resource.Status,
		Liveness:   rep.Liveness.Status,
		Fencing:    rep.Fencing.Status,
		Reentrancy: rep.Reentrancy.Status,
	}
	out.Violations = rep.Exclusion.Violations + rep.Resource.Violations
	out.Checks = map[string]string{
		"exclusion":  rep.Exclusion.Message,
		"resource":   rep.Resource.Message,
		"liveness":   rep.Liveness.Message,
		"fencing":    rep.Fencing.Message,
		"reentrancy": rep.Reentrancy.Message,
	}
	f := rep.Figures
	out.Liveness = results.LivenessFigures{
		LongestUnavailableMs: f.LongestUnavailableMs, UnavailableMsByKey: f.UnavailableMsByKey, RecoveryMs: f.RecoveryMs,
		FailedShare: f.FailedShare, InfoShare: f.InfoShare, Deadlocked: f.Deadlocked,
		GrantsDuringFaults: checker.GrantsDuringFaults(ops),
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
	finding := LivenessFinding(out.Config.Clients, rep.Evidence, rep.Liveness.Status == checker.Violated)
	out.LivenessFinding = finding.Text
	missing := Missing(out.Scenario, rep, exp, finding)
	if exp.DuringFaults == Granting && out.Liveness.GrantsDuringFaults == 0 {
		if m, ok := availabilityMissing(ops, finding); ok {
			if missing == nil {
				missing = map[string]results.MissingEvidence{}
			}
			missing["availability"] = m
		}
	}
	for name, v := range map[string]*checker.Status{"exclusion": &out.Verdict.Exclusion, "resource": &out.Verdict.Resource, "fencing": &out.Verdict.Fencing} {
		if _, ok := missing[name]; ok {
			*v = checker.Inconclusive
		}
	}
	out.Missing = missing
	out.Unexpected, out.Inconclusive = judge(rep, exp, out.Liveness.GrantsDuringFaults, missing)
	out.AsExpected = len(out.Unexpected) == 0 && len(out.Inconclusive) == 0
}

// availabilityMissing is the evidence a "must keep granting during the
// fault" check lacks when no grant came during the faults: the whole run
// granted almost nothing (finding), or more than MaxUnknownShare of the
// acquires during the faults had an unknown outcome (timeouts: the calls'
// budget decided, not the lock's refusals). ok is false when the check
// has its evidence: no grant is then a finding against the lock.
func availabilityMissing(ops []history.Operation, finding Finding) (results.MissingEvidence, bool) {
	if finding.Text != "" {
		return results.MissingEvidence{What: "no grant during the fault, but the whole run granted almost nothing (" + finding.Text + ")", Fix: finding.Fix}, true
	}
	total, unknown := checker.AcquiresDuringFaults(ops)
	if total > 0 && float64(unknown) > MaxUnknownShare*float64(total) {
		return results.MissingEvidence{What: fmt.Sprintf("no grant during the fault, but %d of its %d acquires had an unknown outcome (%s; at most %.0f%%)", unknown, total, pct(unknown, total), 100*MaxUnknownShare), Fix: fixTimeouts}, true
	}
	return results.MissingEvidence{}, false
}

// judge compares a checker report with an expectation and returns one line
// per contradiction (unexpected) and one per gated check that is
// inconclusive (none of either: as expected); grantsDuringFaults is
// checker.GrantsDuringFaults of the history and missing the evidence
// rules' verdict (Missing, plus "availability"): a check listed there is
// inconclusive whatever its checker status.
func judge(rep checker.Report, exp Expectation, grantsDuringFaults int, missing map[string]results.MissingEvidence) (unexpected, inconclusive []string) {
	lacks := func(name string) (string, bool) {
		m, ok := missing[name]
		return m.String(), ok
	}
	check := func(name string, e Expect, r checker.Result) {
		m, short := lacks(name)
		switch {
		case e == AtRisk || e == "":
		case short: // before a violation: Stalled lists violations the machine may have caused
			inconclusive = append(inconclusive, fmt.Sprintf("%s must %s: inconclusive: %s", name, e, m))
		case r.Status == checker.Violated && e == Hold:
			unexpected = append(unexpected, fmt.Sprintf("%s must hold but is violated: %s", name, r.Message))
		case r.Status == checker.Violated:
		case r.Status == checker.Inconclusive:
			unexpected = append(unexpected, fmt.Sprintf("%s is inconclusive: %s", name, r.Message))
		case e == Hold && r.Status == checker.Skipped && (name == "exclusion" || name == "resource"):
			unexpected = append(unexpected, fmt.Sprintf("%s must hold but nothing was checked: %s", name, r.Message))
		case e == Break:
			unexpected = append(unexpected, fmt.Sprintf("%s must break (canary) but is %s: %s", name, r.Status, r.Message))
		}
	}
	check("exclusion", exp.Exclusion, rep.Exclusion)
	check("resource", exp.Resource, rep.Resource)
	check("liveness", exp.Liveness, rep.Liveness)
	switch g := grantsDuringFaults; {
	case exp.DuringFaults == Granting && g == 0:
		if m, short := lacks("availability"); short {
			inconclusive = append(inconclusive, "availability must keep granting during the fault: inconclusive: "+m)
		} else {
			unexpected = append(unexpected, "availability: must keep granting during the fault but granted nothing")
		}
	case exp.DuringFaults == NotGranting && g > 0:
		unexpected = append(unexpected, fmt.Sprintf("availability: must grant nothing during the fault but granted %d times", g))
	}
	// Fencing tokens and reentrancy counts are strategy promises: a strategy
	// that claims them must keep them in every scenario, unless exp.Fencing
	// expects otherwise (a fault that loses the fencing counter itself).
	if exp.Fencing == "" || exp.Fencing == Hold {
		check("fencing", Hold, rep.Fencing)
	} else {
		check("fencing", exp.Fencing, rep.Fencing)
	}
	check("reentrancy", Hold, rep.Reentrancy)
	return unexpected, inconclusive
}

// FromHistory fills a run's workload figures from its history alone, for
// a history judged without the run that wrote it (`lockbench check`):
// the configuration the header records, grants, acquire attempts by
// result, throughput over the history's span, acquire latency and
// granting-call percentiles (ms), and the cost windows (without commands
// per grant: the command counter is not in the history). A run measures
// these itself, from its workload's own counts. The error is
// results.Percentiles' (a latency that is not a finite number).
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
	out.Config = results.RunConfig{Clients: h.Clients, Keys: h.Keys, TTLMs: float64(h.TTLMs), Fencing: h.Fencing, DurationMs: out.DurationS * 1000}
	var err error
	if out.AcquireLatencyMs, err = results.Percentiles(checker.AcquireLatencies(ops)); err != nil {
		return err
	}
	if out.GrantCallMs, err = results.Percentiles(checker.GrantCalls(ops)); err != nil {
		return err
	}
	out.SetWindows(ops, nil) // the command counter is not in the history
	return nil
}

// faults returns the nemesis windows of a history in ms since run start,
// ordered by start (checker.FaultWindows).
func faults(ops []history.Operation) []results.Fault {
	var fs []results.Fault
	for _, w := range checker.FaultWindows(ops) {
		fs = append(fs, results.Fault{Name: w.Name, StartMs: float64(w.Start) / 1e6, EndMs: float64(w.End) / 1e6, Note: w.Note})
	}
	return fs
}

// fairnessAndErrors computes a run's fairness and error breakdown from its
// history (checker.Outcomes): clients is the run's client count, clients
// that never got a grant count as zeros in the fairness index. The
// definitions are results.Run.Fairness and results.ErrorBreakdown's; the
// index is results.JainIndex.
func fairnessAndErrors(ops []history.Operation, clients int) (float64, results.ErrorBreakdown) {
	o := checker.Outcomes(ops, clients)
	// JainIndex fails only on negative or non-finite values; counts are neither.
	fair, _ := results.JainIndex(o.GrantsPerClient)
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
func Stalled(out *results.Run, rep checker.Report, exp Expectation, stall, ttl time.Duration) bool {
	if stall <= ttl/2 || out.Outcome() != results.OutcomeUnexpected {
		return false
	}
	changed := false
	for _, c := range []struct {
		name    string
		e       Expect
		verdict *checker.Status
	}{{"exclusion", exp.Exclusion, &out.Verdict.Exclusion}, {"resource", exp.Resource, &out.Verdict.Resource}, {"fencing", exp.Fencing, &out.Verdict.Fencing}} {
		if c.e != Hold || *c.verdict != checker.Violated {
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
