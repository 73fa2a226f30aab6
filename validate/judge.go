package validate

import (
	"fmt"
	"path/filepath"

	"github.com/lockbench/lockbench/checker"
	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/results"
)

// Fill judges a checked history: it sets out's expectation (Expected,
// ExpectedChecks, Reason from exp), verdict per check, violation count,
// check messages, liveness figures, visualisation path (relative to
// outDir when it can be), fault windows, fairness and error breakdown from
// the checker report rep of the history ops, then compares the verdicts
// with exp: out.Unexpected gets one line per contradiction and
// out.AsExpected is true when there is none. Fairness counts
// out.Config.Clients clients (those that never got a grant count as zeros),
// so set out.Config first.
//
// The rules: a check expected to hold must not be violated or
// inconclusive, and exclusion and resource must have been checked at all;
// a check expected to break (a canary) must be violated; an at-risk check
// is never judged. Fencing tokens and reentrancy counts are strategy
// promises, judged in every scenario unless exp.Fencing says otherwise.
// exp.DuringFaults judges the grants inside fault windows.
func Fill(out *results.Run, ops []history.Operation, rep checker.Report, exp Expectation, outDir string) {
	out.Expected, out.ExpectedChecks, out.Reason = exp.Summary(), exp.Checks(), exp.Reason
	out.Verdict = results.Verdict{
		Exclusion:  string(rep.Exclusion.Status),
		Resource:   string(rep.Resource.Status),
		Liveness:   string(rep.Liveness.Status),
		Fencing:    string(rep.Fencing.Status),
		Reentrancy: string(rep.Reentrancy.Status),
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
	out.Unexpected = judge(rep, exp, out.Liveness.GrantsDuringFaults)
	out.AsExpected = len(out.Unexpected) == 0
}

// judge compares a checker report with an expectation and returns one line
// per contradiction (none: as expected); grantsDuringFaults is
// checker.GrantsDuringFaults of the history.
func judge(rep checker.Report, exp Expectation, grantsDuringFaults int) []string {
	var out []string
	check := func(name string, e Expect, r checker.Result) {
		switch {
		case e == Hold && (r.Status == checker.Violated || r.Status == checker.Inconclusive):
			out = append(out, fmt.Sprintf("%s must hold but is %s: %s", name, r.Status, r.Message))
		case e == Hold && r.Status == checker.Skipped && (name == "exclusion" || name == "resource"):
			out = append(out, fmt.Sprintf("%s must hold but nothing was checked: %s", name, r.Message))
		case e == Break && r.Status != checker.Violated:
			out = append(out, fmt.Sprintf("%s must break (canary) but is %s: %s", name, r.Status, r.Message))
		}
	}
	check("exclusion", exp.Exclusion, rep.Exclusion)
	check("resource", exp.Resource, rep.Resource)
	check("liveness", exp.Liveness, rep.Liveness)
	switch g := grantsDuringFaults; {
	case exp.DuringFaults == Granting && g == 0:
		out = append(out, "availability: must keep granting during the fault but granted nothing")
	case exp.DuringFaults == NotGranting && g > 0:
		out = append(out, fmt.Sprintf("availability: must grant nothing during the fault but granted %d times", g))
	}
	// Fencing tokens and reentrancy counts are strategy promises: a strategy
	// that claims them must keep them in every scenario, unless exp.Fencing
	// expects otherwise (a fault that loses the fencing counter itself).
	promise := func(name string, r checker.Result) {
		if r.Status == checker.Violated || r.Status == checker.Inconclusive {
			out = append(out, fmt.Sprintf("%s is %s: %s", name, r.Status, r.Message))
		}
	}
	if exp.Fencing == "" || exp.Fencing == Hold {
		promise("fencing", rep.Fencing)
	} else {
		check("fencing", exp.Fencing, rep.Fencing)
	}
	promise("reentrancy", rep.Reentrancy)
	return out
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
