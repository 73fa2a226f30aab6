package validate

import (
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/noise"

	"github.com/lockbench/lockbench/checker"
	"github.com/lockbench/lockbench/checker/witness"
	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/verdicts"
)

// TestJudge: each rule of the judgement on a checker report, one case each.
func TestJudge(t *testing.T) {
	ok := checker.Result{Status: checker.OK, Message: "fine"}
	bad := checker.Result{Status: checker.Violated, Violations: 1, Message: "1 overlapping pair"}
	unsure := checker.Result{Status: checker.Inconclusive, Message: "checker disagreement (bug)"}
	skip := checker.Result{Status: checker.Skipped, Message: "no holds"}
	clean := checker.Report{Exclusion: ok, Resource: ok, Liveness: ok, Fencing: skip, Reentrancy: skip}
	with := func(f func(*checker.Report)) checker.Report {
		r := clean
		f(&r)
		return r
	}
	for _, tt := range []struct {
		name   string
		rep    checker.Report
		exp    verdicts.Expectation
		grants int    // grants during faults
		want   string // "" as expected, else a part of the one unexpected line
	}{
		{"must hold, held", clean, safe("r"), 0, ""},
		{"must hold, violated", with(func(r *checker.Report) { r.Exclusion = bad }), safe("r"), 0, "exclusion must hold but is violated: 1 overlapping pair"},
		{"checker disagreement is unexpected", with(func(r *checker.Report) { r.Resource = unsure }), safe("r"), 0, "resource is inconclusive: checker disagreement"},
		{"must hold, nothing checked", with(func(r *checker.Report) { r.Exclusion = skip }), safe("r"), 0, "exclusion must hold but nothing was checked: no holds"},
		{"liveness skipped is no contradiction", with(func(r *checker.Report) { r.Liveness = skip }), safe("r"), 0, ""},
		{"canary broke", with(func(r *checker.Report) { r.Exclusion, r.Resource = bad, bad }), broken("r"), 0, ""},
		{"canary held", with(func(r *checker.Report) { r.Exclusion = bad }), broken("r"), 0, "resource must break (canary) but is ok"},
		{"at risk is never judged", with(func(r *checker.Report) { r.Exclusion, r.Resource = bad, unsure }), mayBreak("r"), 0, ""},
		{"must keep granting", clean, keepsGranting("r"), 0, "availability: must keep granting during the fault but granted nothing"},
		{"kept granting", clean, keepsGranting("r"), 2, ""},
		{"must grant nothing", clean, verdicts.Expectation{Exclusion: verdicts.Hold, Resource: verdicts.Hold, Liveness: verdicts.Hold, DuringFaults: verdicts.NotGranting}, 3, "must grant nothing during the fault but granted 3 times"},
		{"fencing is a promise", with(func(r *checker.Report) { r.Fencing = bad }), safe("r"), 0, "fencing must hold but is violated"},
		{"fencing expected to break", with(func(r *checker.Report) { r.Fencing = bad }), verdicts.Expectation{Exclusion: verdicts.Hold, Resource: verdicts.Hold, Liveness: verdicts.Hold, Fencing: verdicts.Break}, 0, ""},
		{"fencing expected to break but held", with(func(r *checker.Report) { r.Fencing = ok }), verdicts.Expectation{Exclusion: verdicts.Hold, Resource: verdicts.Hold, Liveness: verdicts.Hold, Fencing: verdicts.Break}, 0, "fencing must break (canary) but is ok"},
		{"reentrancy is a promise", with(func(r *checker.Report) { r.Reentrancy = unsure }), safe("r"), 0, "reentrancy is inconclusive"},
		{"orphans: a contract check, gated for a must-hold pair", with(func(r *checker.Report) { r.Orphans = bad }), safe("r"), 0, "orphans must hold but is violated"},
		{"orphans: gated for a canary too", with(func(r *checker.Report) { r.Exclusion, r.Resource, r.Orphans = bad, bad, bad }), broken("r"), 0, "orphans must hold but is violated"},
		{"orphans: gated for an at-risk pair too", with(func(r *checker.Report) { r.Orphans = bad }), mayBreak("r"), 0, "orphans must hold but is violated"},
		{"orphans: a row may say at risk", with(func(r *checker.Report) { r.Orphans = bad }), verdicts.Expectation{Exclusion: verdicts.Hold, Resource: verdicts.Hold, Liveness: verdicts.Hold, Contract: verdicts.AtRisk}, 0, ""},
		{"orphans skipped (not observed) is no contradiction", with(func(r *checker.Report) { r.Orphans = skip }), safe("r"), 0, ""},
	} {
		got, inconclusive := judge(tt.rep, tt.exp, tt.grants, nil)
		if len(inconclusive) > 0 {
			t.Errorf("%s: inconclusive %q without missing evidence", tt.name, inconclusive)
		}
		switch {
		case tt.want == "" && len(got) != 0:
			t.Errorf("%s: unexpected %q, want as expected", tt.name, got)
		case tt.want != "" && (len(got) != 1 || !strings.Contains(got[0], tt.want)):
			t.Errorf("%s: unexpected %q, want one line containing %q", tt.name, got, tt.want)
		}
	}
}

// TestJudgeInconclusive: a check the evidence rules call inconclusive is
// never unexpected, whatever its expectation, and is listed with what is
// missing when the table gates it; a violation stays a violation.
func TestJudgeInconclusive(t *testing.T) {
	ok := checker.Result{Status: checker.OK, Message: "fine"}
	bad := checker.Result{Status: checker.Violated, Violations: 1, Message: "1 overlapping pair"}
	skip := checker.Result{Status: checker.Skipped, Message: "no holds"}
	timedOut := checker.Result{Status: checker.Inconclusive, TimedOut: true, Message: "porcupine timed out"}
	few := results.MissingEvidence{What: "2 holds, 0 chances to overlap (need ≥ 10)", Fix: "run longer (--duration) or with more clients (--clients)"}
	rep := checker.Report{Exclusion: ok, Resource: ok, Liveness: ok, Fencing: skip, Reentrancy: skip}
	both := map[string]results.MissingEvidence{"exclusion": few, "resource": few}
	for _, tt := range []struct {
		name             string
		rep              checker.Report
		exp              verdicts.Expectation
		missing          map[string]results.MissingEvidence
		grants           int
		wantInconclusive []string // parts of each line, in order
		wantUnexpected   string   // "" for none
	}{
		{"must hold, too few holds", rep, safe("r"), both, 0,
			[]string{"exclusion must hold: inconclusive: 2 holds, 0 chances to overlap (need ≥ 10): run longer (--duration) or with more clients (--clients)", "resource must hold: inconclusive"}, ""},
		{"canary, too few holds", rep, broken("r"), both, 0, []string{"exclusion must break: inconclusive: 2 holds", "resource must break: inconclusive"}, ""},
		{"canary found on little evidence", func() checker.Report { r := rep; r.Exclusion, r.Resource = bad, bad; return r }(), broken("r"), nil, 0, nil, ""},
		{"no holds at all", func() checker.Report { r := rep; r.Exclusion, r.Resource = skip, skip; return r }(), safe("r"), both, 0, []string{"exclusion must hold: inconclusive", "resource must hold: inconclusive"}, ""},
		{"at risk is listed nowhere", rep, mayBreak("r"), both, 0, nil, ""},
		{"porcupine timeout", func() checker.Report { r := rep; r.Exclusion = timedOut; return r }(), safe("r"),
			map[string]results.MissingEvidence{"exclusion": {What: "porcupine timed out", Fix: fixCheckTime}}, 0, []string{"exclusion must hold: inconclusive: porcupine timed out: give porcupine more time"}, ""},
		{"no grant during the fault of a starved run", rep, keepsGranting("r"),
			map[string]results.MissingEvidence{"availability": {What: "no grant during the fault, but the whole run granted almost nothing", Fix: fixTimeouts}}, 0,
			[]string{"availability must keep granting during the fault: inconclusive: no grant during the fault"}, ""},
		{"no call during the fault, must grant nothing", rep, verdicts.Expectation{Exclusion: verdicts.AtRisk, Resource: verdicts.AtRisk, Liveness: verdicts.AtRisk, DuringFaults: verdicts.NotGranting},
			map[string]results.MissingEvidence{"availability": {What: "no call during the fault: no client called the lock while a fault was in force"}}, 0,
			[]string{"availability must grant nothing during the fault: inconclusive: no call during the fault"}, ""},
		{"no call during the fault, must keep granting", rep, verdicts.Expectation{Exclusion: verdicts.AtRisk, Resource: verdicts.AtRisk, Liveness: verdicts.AtRisk, DuringFaults: verdicts.Granting},
			map[string]results.MissingEvidence{"availability": {What: "no call during the fault: no client called the lock while a fault was in force"}}, 0,
			[]string{"availability must keep granting during the fault: inconclusive: no call during the fault"}, ""},
		{"inconclusive beside a contradiction", func() checker.Report { r := rep; r.Liveness = bad; return r }(), safe("r"), both, 0,
			[]string{"exclusion must hold: inconclusive", "resource must hold: inconclusive"}, "liveness must hold but is violated"},
	} {
		unexpected, inconclusive := judge(tt.rep, tt.exp, tt.grants, tt.missing)
		if len(inconclusive) != len(tt.wantInconclusive) {
			t.Errorf("%s: inconclusive %q, want %d lines", tt.name, inconclusive, len(tt.wantInconclusive))
		} else {
			for i, w := range tt.wantInconclusive {
				if !strings.Contains(inconclusive[i], w) {
					t.Errorf("%s: inconclusive line %q, want it to contain %q", tt.name, inconclusive[i], w)
				}
			}
		}
		switch {
		case tt.wantUnexpected == "" && len(unexpected) > 0:
			t.Errorf("%s: unexpected %q, want none", tt.name, unexpected)
		case tt.wantUnexpected != "" && (len(unexpected) != 1 || !strings.Contains(unexpected[0], tt.wantUnexpected)):
			t.Errorf("%s: unexpected %q, want one line containing %q", tt.name, unexpected, tt.wantUnexpected)
		}
	}
}

// TestFill: Fill records the expectation, verdicts, fault windows (ms),
// a visualisation path relative to the results folder, fairness over
// out.Config.Clients and the error breakdown, and AsExpected.
func TestFill(t *testing.T) {
	const ms = 1_000_000
	ops := []history.Operation{
		{Client: -1, Kind: history.Nemesis, Invoke: 10 * ms, Complete: 30 * ms, Result: history.OK, Note: "gc-pause: client 0 stopped"},
		{Client: 0, Kind: history.Acquire, Depth: 1, Hold: 1, Invoke: 12 * ms, Complete: 13 * ms, Result: history.OK},
		{Client: 1, Kind: history.Acquire, Depth: 1, Invoke: 40 * ms, Complete: 41 * ms, Result: history.Fail},
	}
	rep := checker.Report{
		Exclusion: checker.Result{Status: checker.Violated, Violations: 2, Message: "2 pairs"},
		Resource:  checker.Result{Status: checker.Violated, Violations: 1, Message: "1 lost update"},
		Liveness:  checker.Result{Status: checker.OK}, Fencing: checker.Result{Status: checker.Skipped}, Reentrancy: checker.Result{Status: checker.Skipped},
		Visualization: "out/histories/x.html",
	}
	exp := broken("canary")
	r := results.Run{Config: results.RunConfig{Clients: 2}}
	Fill(&r, ops, rep, exp, "out")
	if !r.AsExpected || len(r.Unexpected) != 0 {
		t.Errorf("as expected %v, unexpected %q", r.AsExpected, r.Unexpected)
	}
	if r.Expected != "must-break" || r.Reason != "canary" || !reflect.DeepEqual(r.ExpectedChecks, exp.Checks()) {
		t.Errorf("expectation recorded as %q %q %v", r.Expected, r.Reason, r.ExpectedChecks)
	}
	if r.Verdict.Exclusion != "violated" || r.Verdict.Fencing != "skipped" || r.Violations != 3 || r.Checks["resource"] != "1 lost update" {
		t.Errorf("verdict %+v, violations %d, checks %v", r.Verdict, r.Violations, r.Checks)
	}
	if r.Visualization != "histories/x.html" {
		t.Errorf("visualization %q, want it relative to the results folder", r.Visualization)
	}
	if want := []results.Fault{{Name: "gc-pause", StartMs: 10, EndMs: 30, Note: "gc-pause: client 0 stopped"}}; !reflect.DeepEqual(r.Faults, want) {
		t.Errorf("faults %+v, want %+v", r.Faults, want)
	}
	if r.Liveness.GrantsDuringFaults != 1 {
		t.Errorf("grants during faults %d, want 1", r.Liveness.GrantsDuringFaults)
	}
	// Grants per client 1, 0: (1)²/(2·1).
	if math.Abs(r.Fairness-0.5) > 1e-12 || r.Errors != (results.ErrorBreakdown{NotAcquired: 1}) {
		t.Errorf("fairness %v errors %+v, want 0.5 and one not acquired", r.Fairness, r.Errors)
	}
}

// TestFromHistory: the figures of a history judged without its run.
func TestFromHistory(t *testing.T) {
	const ms = 1_000_000
	h := history.Header{Clients: 2, Keys: 1, TTLMs: 100, Fencing: "off"}
	ops := []history.Operation{
		{Client: 0, Kind: history.Acquire, Depth: 1, Invoke: 0, Complete: 2 * ms, Result: history.OK},
		{Client: 1, Kind: history.Acquire, Depth: 1, Invoke: ms, Complete: 3 * ms, Result: history.Fail},
		{Client: 1, Kind: history.Acquire, Depth: 1, Invoke: 4 * ms, Complete: 5 * ms, Result: history.Info},
		{Client: 0, Kind: history.Release, Depth: 1, Invoke: 6 * ms, Complete: 10 * ms, Result: history.OK},
		{Client: -1, Kind: history.Probe, Invoke: 20 * ms, Complete: 21 * ms, Result: history.OK},
	}
	var r results.Run
	if err := FromHistory(&r, h, ops); err != nil {
		t.Fatal(err)
	}
	if r.Grants != 1 || !reflect.DeepEqual(r.Acquires, map[string]int{"ok": 1, "fail": 1, "info": 1}) {
		t.Errorf("grants %d acquires %v", r.Grants, r.Acquires)
	}
	if math.Abs(r.DurationS-0.01) > 1e-12 || math.Abs(r.ThroughputPerS-100) > 1e-9 {
		t.Errorf("duration %v s, throughput %v/s; want 0.01 s (the clients' span) and 100/s", r.DurationS, r.ThroughputPerS)
	}
	if r.Config.Clients != 2 || r.Config.TTLMs != 100 || r.Config.DurationMs != 10 {
		t.Errorf("config %+v", r.Config)
	}
	if r.AcquireLatencyMs.P50 != 2 || r.GrantCallMs.P50 != 2 {
		t.Errorf("latency p50 %v, grant call p50 %v; want 2 ms each", r.AcquireLatencyMs.P50, r.GrantCallMs.P50)
	}
}

// TestAvailabilityMissing: a "must keep granting" check with no grant
// during the fault lacks evidence when most acquires during the fault had
// an unknown outcome, or the whole run granted almost nothing; refusals
// during the fault are evidence against the lock. Either availability
// check lacks evidence when no call was in flight during the fault (a
// client slow to start: the window tested nothing).
func TestAvailabilityMissing(t *testing.T) {
	ms := int64(time.Millisecond)
	fault := history.Operation{Client: -1, Kind: history.Nemesis, Invoke: 10 * ms, Complete: 100 * ms}
	acq := func(at int64, r history.Result) history.Operation {
		return history.Operation{Client: 1, Kind: history.Acquire, Key: "k", Invoke: at * ms, Complete: (at + 5) * ms, Result: r}
	}
	tests := []struct {
		name    string
		ops     []history.Operation
		finding Finding
		missing string // substring of What; "" when nothing is missing
		a       verdicts.Availability
	}{
		{"refused during the fault", []history.Operation{fault, acq(20, history.Fail), acq(40, history.Fail), acq(60, history.Info)}, Finding{}, "", verdicts.Granting},
		{"timed out during the fault", []history.Operation{fault, acq(20, history.Info), acq(40, history.Info), acq(60, history.Fail)}, Finding{}, "2 of its 3 acquires had an unknown outcome", verdicts.Granting},
		{"unknown outside the fault only", []history.Operation{fault, acq(20, history.Fail), acq(200, history.Info), acq(300, history.Info)}, Finding{}, "", verdicts.Granting},
		{"run granted almost nothing", []history.Operation{fault, acq(20, history.Fail)}, Finding{Text: "granted once", Fix: "x"}, "granted almost nothing", verdicts.Granting},
		{"no call during the fault", []history.Operation{fault, acq(150, history.OK), acq(200, history.Fail)}, Finding{}, "no call during the fault", verdicts.Granting},
		{"no call during the fault, must grant nothing", []history.Operation{fault, acq(150, history.OK)}, Finding{}, "no call during the fault", verdicts.NotGranting},
		{"a call across the fault", []history.Operation{fault, acq(8, history.Fail)}, Finding{}, "", verdicts.NotGranting},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, ok := availabilityMissing(tt.ops, tt.finding, 0, tt.a)
			if ok != (tt.missing != "") || !strings.Contains(m.What, tt.missing) {
				t.Errorf("availabilityMissing = %+v, %v; want missing %q", m, ok, tt.missing)
			}
		})
	}
}

// TestStalled: a must-hold violation in a run where the harness stalled a
// client inside a hold by more than TTL/2 is inconclusive, naming the
// stall; a shorter stall, or a canary's violation, stays as judged.
func TestStalled(t *testing.T) {
	const ms = 1_000_000
	ops := []history.Operation{
		{Client: 0, Kind: history.Acquire, Depth: 1, Hold: 1, Invoke: 12 * ms, Complete: 13 * ms, Result: history.OK},
	}
	rep := checker.Report{
		Exclusion: checker.Result{Status: checker.Violated, Violations: 1, Message: "1 pair"},
		Resource:  checker.Result{Status: checker.OK},
		Liveness:  checker.Result{Status: checker.OK}, Fencing: checker.Result{Status: checker.Skipped}, Reentrancy: checker.Result{Status: checker.Skipped},
	}
	ttl := 100 * time.Millisecond
	tests := []struct {
		name    string
		exp     verdicts.Expectation
		stall   time.Duration
		changed bool
		outcome string
	}{
		{"must-hold, stall past TTL/2", verdicts.Expectation{Exclusion: verdicts.Hold, Resource: verdicts.Hold, Liveness: verdicts.Hold}, 105 * time.Millisecond, true, results.OutcomeInconclusive},
		{"must-hold, short stall", verdicts.Expectation{Exclusion: verdicts.Hold, Resource: verdicts.Hold, Liveness: verdicts.Hold}, 20 * time.Millisecond, false, results.OutcomeUnexpected},
		{"canary, stall past TTL/2", verdicts.Expectation{Exclusion: verdicts.Break, Resource: verdicts.AtRisk, Liveness: verdicts.Hold}, 105 * time.Millisecond, false, results.OutcomeAsExpected},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := results.Run{Config: results.RunConfig{Clients: 2}}
			Fill(&r, ops, rep, tt.exp, "out")
			if got := Stalled(&r, rep, tt.exp, tt.stall, ttl); got != tt.changed {
				t.Errorf("Stalled = %v, want %v", got, tt.changed)
			}
			if r.Outcome() != tt.outcome {
				t.Errorf("outcome %s, want %s (unexpected %q, inconclusive %q)", r.Outcome(), tt.outcome, r.Unexpected, r.Inconclusive)
			}
			if tt.changed && (r.Verdict.Exclusion != "inconclusive" || !strings.Contains(r.Missing["exclusion"].What, "stalled 105ms")) {
				t.Errorf("verdict %+v, missing %+v", r.Verdict, r.Missing)
			}
		})
	}
}

// TestBusyPartialOrphans: partial orphans of a quorum lock on a busy
// machine are inconclusive (the cleanup may have missed its budget because
// the harness ran late); a quorum orphan, or a quiet machine, stays a
// violation.
func TestBusyPartialOrphans(t *testing.T) {
	const ms = 1_000_000
	ops := []history.Operation{
		{Client: 0, Kind: history.Acquire, Depth: 1, Hold: 1, Invoke: 12 * ms, Complete: 13 * ms, Result: history.OK},
	}
	report := func(quorum bool) checker.Report {
		w := witness.OrphanWitness{Key: "lb:k0", Token: "t1", Nodes: []string{"n4", "n5"}, Quorum: quorum}
		return checker.Report{
			Exclusion: checker.Result{Status: checker.OK}, Resource: checker.Result{Status: checker.OK},
			Liveness: checker.Result{Status: checker.OK}, Fencing: checker.Result{Status: checker.Skipped}, Reentrancy: checker.Result{Status: checker.Skipped},
			Orphans: checker.Result{Status: checker.Violated, Violations: 1, Message: "1 orphan",
				Witnesses: witness.Witnesses{Orphans: []witness.OrphanWitness{w}, Total: witness.WitnessCounts{Orphans: 1}}},
		}
	}
	exp := verdicts.Expectation{Exclusion: verdicts.Hold, Resource: verdicts.Hold, Liveness: verdicts.Hold}
	tests := []struct {
		name    string
		busy    bool
		quorum  bool
		changed bool
		outcome string
	}{
		{"busy, partial", true, false, true, results.OutcomeInconclusive},
		{"busy, quorum", true, true, false, results.OutcomeUnexpected},
		{"quiet, partial", false, false, false, results.OutcomeUnexpected},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := report(tt.quorum)
			r := results.Run{Config: results.RunConfig{Clients: 2}, Noise: &noise.Summary{Busy: tt.busy}}
			Fill(&r, ops, rep, exp, "out")
			if got := BusyPartialOrphans(&r, rep, exp); got != tt.changed {
				t.Errorf("BusyPartialOrphans = %v, want %v", got, tt.changed)
			}
			if r.Outcome() != tt.outcome {
				t.Errorf("outcome %s, want %s (unexpected %q, inconclusive %q)", r.Outcome(), tt.outcome, r.Unexpected, r.Inconclusive)
			}
			if tt.changed && !strings.Contains(r.Missing["orphans"].What, "busy machine") {
				t.Errorf("missing %+v", r.Missing)
			}
		})
	}
}

// safe is the verdict table's safe row: every check must hold.
func safe(reason string) verdicts.Expectation {
	return verdicts.Expectation{Exclusion: verdicts.Hold, Resource: verdicts.Hold, Liveness: verdicts.Hold, Reason: reason}
}

// broken is the verdict table's canary row: exclusion and the resource
// must break; liveness must hold.
func broken(reason string) verdicts.Expectation {
	return verdicts.Expectation{Exclusion: verdicts.Break, Resource: verdicts.Break, Liveness: verdicts.Hold, Reason: reason}
}

// mayBreak is the verdict table's at-risk row: exclusion and the resource
// are at risk; liveness must hold.
func mayBreak(reason string) verdicts.Expectation {
	return verdicts.Expectation{Exclusion: verdicts.AtRisk, Resource: verdicts.AtRisk, Liveness: verdicts.Hold, Reason: reason}
}

// keepsGranting is safe, and the lock must keep granting while the fault
// is on.
func keepsGranting(reason string) verdicts.Expectation {
	e := safe(reason)
	e.DuringFaults = verdicts.Granting
	return e
}
