package validate

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/checker"
	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/history/measure"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/verdicts"
)

// plenty is evidence that clears every rule: 100 holds, each met by
// another client, no unknown outcome, one fault landed.
var plenty = measure.Evidence{Holds: 100, Keys: 1, Clients: 16, ChancesToOverlap: 100,
	Acquires: measure.OutcomeCounts{OK: 100, Fail: 900}, Faults: 1, FaultsLanded: 1}

// TestMissing: each evidence rule, with the triggering evidence, the
// missing evidence it names and the fix, for a canary (every rule
// applies) and, where they differ, a must-hold pair (a missed fault is
// the lock doing its job).
func TestMissing(t *testing.T) {
	ok := checker.Result{Status: checker.OK}
	with := func(f func(*measure.Evidence)) measure.Evidence {
		e := plenty
		f(&e)
		return e
	}
	for _, tt := range []struct {
		name     string
		scenario string
		ev       measure.Evidence
		finding  Finding
		want     string // "" for nothing missing, else MissingEvidence.String of exclusion
	}{
		{"enough", "gc-pause", plenty, Finding{}, ""},
		{"enough without faults", "baseline", with(func(e *measure.Evidence) { e.Faults, e.FaultsLanded = 0, 0 }), Finding{}, ""},
		{"few holds", "baseline", with(func(e *measure.Evidence) { e.Holds, e.ChancesToOverlap = 2, 0 }), Finding{},
			"2 holds, 0 chances to overlap (need ≥ 10): run longer (--duration) or with more clients (--clients)"},
		{"one hold", "baseline", with(func(e *measure.Evidence) { e.Holds, e.ChancesToOverlap = 1, 1 }), Finding{},
			"1 hold, 1 chance to overlap (need ≥ 10): run longer (--duration) or with more clients (--clients)"},
		{"few holds of a starved strategy", "baseline", with(func(e *measure.Evidence) { e.Holds, e.ChancesToOverlap = 2, 2 }), Finding{Text: "granted 2 times", Fix: fixTimeouts},
			"2 holds, 2 chances to overlap (need ≥ 10): " + fixTimeouts},
		{"holds without contention", "baseline", with(func(e *measure.Evidence) { e.ChancesToOverlap = 4 }), Finding{},
			"100 holds, 4 chances to overlap (need ≥ 10): contend more: more clients per key (more --clients or fewer --keys)"},
		{"most outcomes unknown", "baseline", with(func(e *measure.Evidence) { e.Acquires = measure.OutcomeCounts{OK: 100, Fail: 4, Info: 714} }), Finding{},
			"714 of 818 acquires unknown (87%; at most 50%): " + fixTimeouts},
		{"half unknown is enough", "baseline", with(func(e *measure.Evidence) { e.Acquires = measure.OutcomeCounts{OK: 100, Fail: 100, Info: 200} }), Finding{}, ""},
		{"every fault missed", "gc-pause", with(func(e *measure.Evidence) { e.Faults, e.FaultsLanded, e.FaultsMissed = 3, 0, 3 }), Finding{},
			"no fault landed (3 injected, 3 missed): rerun with another --seed"},
		{"every fault missed, must hold: the lock did its job", "long-cs", with(func(e *measure.Evidence) { e.Faults, e.FaultsLanded, e.FaultsMissed = 3, 0, 3 }), Finding{}, ""},
		{"no fault injected, must hold", "long-cs", with(func(e *measure.Evidence) { e.Faults, e.FaultsLanded = 0, 0 }), Finding{},
			"no fault injected: " + fixTrigger},
		{"a fault that cannot tell counts as landed", "gc-pause", with(func(e *measure.Evidence) { e.Faults, e.FaultsLanded, e.FaultsMissed = 3, 0, 2 }), Finding{}, ""},
		{"no fault injected", "gc-pause", with(func(e *measure.Evidence) { e.Faults, e.FaultsLanded = 0, 0 }), Finding{},
			"no fault injected: " + fixTrigger},
		{"a fault in an unknown scenario", "someone-elses", with(func(e *measure.Evidence) { e.FaultsLanded, e.FaultsMissed = 0, 1 }), Finding{},
			"no fault landed (1 injected, 1 missed): rerun with another --seed"},
		{"everything short", "gc-pause", measure.Evidence{Holds: 1, ChancesToOverlap: 1, Acquires: measure.OutcomeCounts{OK: 1, Fail: 4, Info: 714}, Faults: 1, FaultsMissed: 1}, Finding{},
			"1 hold, 1 chance to overlap (need ≥ 10); 714 of 719 acquires unknown (99%; at most 50%); no fault landed (1 injected, 1 missed): " +
				fixLonger + "; " + fixTimeouts + "; " + fixSeed},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rep := checker.Report{Exclusion: ok, Resource: ok, Fencing: ok, Evidence: tt.ev}
			exp := broken("canary") // a canary: every rule applies
			if strings.Contains(tt.name, "must hold") {
				exp = safe("must hold")
			}
			m := Missing(tt.scenario, rep, exp, tt.finding, Unknowns{})
			got, listed := m["exclusion"]
			switch {
			case tt.want == "" && listed:
				t.Errorf("exclusion lacks %q, want nothing missing", got)
			case tt.want != "" && got.String() != tt.want:
				t.Errorf("exclusion lacks\n %q\nwant %q", got, tt.want)
			}
			if _, res := m["resource"]; res != listed {
				t.Errorf("resource listed %v, exclusion %v: the two rest on the same evidence", res, listed)
			}
		})
	}
}

// TestMissingPerCheck: only checks that found no violation need evidence;
// fencing needs holds but no overlap; a porcupine timeout is missing
// evidence, a checker disagreement is not (it is a bug, judged
// unexpected); a skipped check that does not apply is left alone.
func TestMissingPerCheck(t *testing.T) {
	ok := checker.Result{Status: checker.OK}
	bad := checker.Result{Status: checker.Violated}
	skip := checker.Result{Status: checker.Skipped}
	timedOut := checker.Result{Status: checker.Inconclusive, TimedOut: true, Message: "porcupine timed out after 10s on 5000 holds; the sweep-line found no overlap"}
	bug := checker.Result{Status: checker.Inconclusive, Message: "checker disagreement (bug)"}
	noChances := plenty
	noChances.ChancesToOverlap = 0
	for _, tt := range []struct {
		name string
		rep  checker.Report
		want []string // checks listed, in order exclusion, resource, fencing
	}{
		{"violations need no minimum", checker.Report{Exclusion: bad, Resource: bad, Fencing: bad, Evidence: measure.Evidence{Holds: 2}}, nil},
		{"fencing needs holds, not overlap", checker.Report{Exclusion: ok, Resource: ok, Fencing: ok, Evidence: noChances}, []string{"exclusion", "resource"}},
		{"fencing short of holds", checker.Report{Exclusion: bad, Resource: bad, Fencing: ok, Evidence: measure.Evidence{Holds: 3, Acquires: measure.OutcomeCounts{OK: 3}}}, []string{"fencing"}},
		{"no holds: exclusion and resource skipped", checker.Report{Exclusion: skip, Resource: skip, Fencing: skip, Evidence: measure.Evidence{Acquires: measure.OutcomeCounts{Info: 188}}}, []string{"exclusion", "resource"}},
		{"no fencing tokens", checker.Report{Exclusion: ok, Resource: ok, Fencing: skip, Evidence: plenty}, nil},
		{"porcupine timeout", checker.Report{Exclusion: timedOut, Resource: ok, Fencing: skip, Evidence: plenty}, []string{"exclusion"}},
		{"checker disagreement", checker.Report{Exclusion: bug, Resource: ok, Fencing: skip, Evidence: plenty}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := Missing("baseline", tt.rep, safe("r"), Finding{}, Unknowns{})
			var got []string
			for _, c := range []string{"exclusion", "resource", "fencing"} {
				if _, ok := m[c]; ok {
					got = append(got, c)
				}
			}
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Errorf("missing evidence for %v, want %v (%v)", got, tt.want, m)
			}
			if tt.rep.Exclusion.TimedOut && m["exclusion"].Fix != fixCheckTime {
				t.Errorf("porcupine timeout: fix %q, want %q", m["exclusion"].Fix, fixCheckTime)
			}
		})
	}
}

// TestMissingContract: the orphan check's evidence rules: tokens the lock
// reported among those read, and reads after at least MinObservedShare of
// the failed acquires; a violation and a skipped check need none.
func TestMissingContract(t *testing.T) {
	ok := checker.Result{Status: checker.OK}
	bad := checker.Result{Status: checker.Violated}
	skip := checker.Result{Status: checker.Skipped}
	read := func(fail, observed, tokens, known int) measure.Evidence {
		e := plenty
		e.Acquires.Fail, e.FailedAcquiresObserved, e.ObservedTokens, e.ObservedKnownTokens = fail, observed, tokens, known
		e.Observations = measure.OutcomeCounts{OK: 50}
		return e
	}
	for _, tt := range []struct {
		name    string
		orphans checker.Result
		ev      measure.Evidence
		want    string // "" nothing missing, else a part of MissingEvidence.String
	}{
		{"enough", ok, read(100, 90, 20, 20), ""},
		{"half is enough", ok, read(100, 50, 20, 20), ""},
		{"few failed acquires observed", ok, read(100, 49, 20, 20), "only 49 of 100 failed acquires were followed within TTL/2 by a read of their key that a majority of the nodes answered (need ≥ 50%): " + fixObserve},
		{"no failed acquire: nothing to observe", ok, read(0, 0, 20, 20), ""},
		{"tokens are not the stored values", ok, read(100, 90, 4, 0), "none of the 4 tokens read on the servers is one the lock returned or stated it tried: its tokens are not the values it stores: " + fixTokens},
		{"no token read: nothing to match", ok, read(100, 90, 0, 0), ""},
		{"a violation needs no minimum", bad, read(100, 1, 4, 0), ""},
		{"not observed", skip, read(100, 0, 0, 0), ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rep := checker.Report{Exclusion: ok, Resource: ok, Fencing: skip, Orphans: tt.orphans, Evidence: tt.ev}
			m, listed := Missing("baseline", rep, safe("r"), Finding{}, Unknowns{})["orphans"]
			switch {
			case tt.want == "" && listed:
				t.Errorf("orphans lacks %q, want nothing missing", m)
			case tt.want != "" && !strings.Contains(m.String(), tt.want):
				t.Errorf("orphans lacks\n %q\nwant %q", m, tt.want)
			}
		})
	}
}

// TestLivenessFinding: the finding with its cause, derived from the
// evidence counts, for each cause, and the cases that are no finding.
func TestLivenessFinding(t *testing.T) {
	for _, tt := range []struct {
		name       string
		clients    int
		ev         measure.Evidence
		deadlocked bool
		want       string // "" no finding
		fix        string
	}{
		{"no grant: whole-call and per-node timeouts", 256, measure.Evidence{Acquires: measure.OutcomeCounts{Info: 188}, AcquireTimeouts: 188,
			NodeAcquires: measure.OutcomeCounts{Info: 940}, NodeTimeouts: 931, Nodes: 5}, false,
			"granted 0 times to 256 clients in 188 acquires: 188 acquires timed out (100%); per-node: 931 of 940 timed out", fixTimeouts},
		{"one grant, timeouts and contention", 16, measure.Evidence{Acquires: measure.OutcomeCounts{OK: 1, Fail: 4, Info: 714}, AcquireTimeouts: 714}, false,
			"granted once to 16 clients in 719 acquires: 714 acquires timed out (99%), 4 acquires refused as held by another client (contention)", fixTimeouts},
		{"split votes", 16, measure.Evidence{Acquires: measure.OutcomeCounts{OK: 3, Fail: 50, Info: 2}, AcquireTimeouts: 2, SplitVotes: 50, Nodes: 5,
			NodeAcquires: measure.OutcomeCounts{OK: 120, Fail: 150, Info: 5}, NodeTimeouts: 5}, false,
			"granted 3 times to 16 clients in 55 acquires: 2 acquires timed out (3%), 50 split votes (some nodes but fewer than a quorum of 3 said yes), 50 acquires refused as held by another client (contention); per-node: 5 of 275 timed out", fixSplit},
		{"unknown for another reason", 4, measure.Evidence{Acquires: measure.OutcomeCounts{Info: 30}}, false,
			"granted 0 times to 4 clients in 30 acquires: 30 acquires unknown for another reason (e.g. a refused connection)", fixTimeouts},
		{"nothing but contention, no grant", 16, measure.Evidence{Acquires: measure.OutcomeCounts{Fail: 500}}, false,
			"granted 0 times to 16 clients in 500 acquires: 500 acquires refused as held by another client (contention)", fixContended},
		{"contention with grants is no finding", 256, measure.Evidence{Acquires: measure.OutcomeCounts{OK: 150, Fail: 3000, Info: 5}}, false, "", ""},
		{"as many grants as clients", 16, measure.Evidence{Acquires: measure.OutcomeCounts{OK: 16, Info: 900}, AcquireTimeouts: 900}, false, "", ""},
		{"a deadlock is its own finding", 16, measure.Evidence{Acquires: measure.OutcomeCounts{OK: 3, Fail: 700}}, true, "", ""},
		{"no attempt", 16, measure.Evidence{}, false, "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := LivenessFinding(tt.clients, tt.ev, Unknowns{}, tt.deadlocked)
			if f.Text != tt.want || f.Fix != tt.fix {
				t.Errorf("finding\n %q (fix %q)\nwant %q (fix %q)", f.Text, f.Fix, tt.want, tt.fix)
			}
		})
	}
}

// TestLowEvidenceRecordings replays two recorded runs with almost no
// evidence (redsync granting once at TTL 50 ms, redlock granting nothing
// to 256 clients): each must end inconclusive, never unexpected, with the
// missing evidence and the liveness finding named.
func TestLowEvidenceRecordings(t *testing.T) {
	for _, tt := range []struct {
		file         string
		inconclusive []string // parts of out.Inconclusive, in order
		finding      string
	}{
		// redsync at TTL 50 ms under gc-pause, seed 100: one grant in 2 s,
		// 714 of 719 acquires unknown; the canary had nothing to break.
		{"redsync-gc-pause-ttl50ms-one-grant.jsonl", []string{
			"exclusion must break: inconclusive: 1 hold, 1 chance to overlap (need ≥ 10); 714 of 719 acquires unknown (99%; at most 50%): " + fixTimeouts,
			"resource must break: inconclusive: 1 hold",
		}, "granted once to 16 clients in 719 acquires: 714 acquires timed out (99%), 4 acquires refused as held by another client (contention)"},
		// redlock with 256 clients on 16 keys: no grant in 3 s.
		{"redlock-256-clients-no-grant.jsonl", []string{
			"exclusion must hold: inconclusive: 0 holds, 0 chances to overlap (need ≥ 10); 188 of 188 acquires unknown (100%; at most 50%): " + fixTimeouts,
			"resource must hold: inconclusive: 0 holds",
		}, "granted 0 times to 256 clients in 188 acquires: 188 acquires timed out (100%); per-node: 940 of 940 timed out"},
	} {
		t.Run(strings.TrimSuffix(tt.file, ".jsonl"), func(t *testing.T) {
			h, ops, err := history.Load(filepath.Join("..", "checker", "testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			rep := checker.Check(h, ops, checker.Options{})
			r := results.Run{Strategy: h.Strategy, Scenario: h.Scenario, Config: results.RunConfig{Clients: h.Clients}}
			Fill(&r, ops, rep, verdicts.For(h.Strategy, h.Scenario, h.NotGated), t.TempDir())
			if r.Outcome() != results.OutcomeInconclusive || r.AsExpected || len(r.Unexpected) > 0 {
				t.Errorf("outcome %s (as expected %v), unexpected %q; want inconclusive and nothing unexpected", r.Outcome(), r.AsExpected, r.Unexpected)
			}
			if r.Verdict.Exclusion != "inconclusive" || r.Verdict.Resource != "inconclusive" {
				t.Errorf("verdicts %+v, want exclusion and resource inconclusive", r.Verdict)
			}
			if len(r.Inconclusive) != len(tt.inconclusive) {
				t.Fatalf("inconclusive %q, want %d lines", r.Inconclusive, len(tt.inconclusive))
			}
			for i, w := range tt.inconclusive {
				if !strings.Contains(r.Inconclusive[i], w) {
					t.Errorf("inconclusive line\n %q\nwant it to contain\n %q", r.Inconclusive[i], w)
				}
			}
			if r.LivenessFinding != tt.finding {
				t.Errorf("liveness finding\n %q\nwant %q", r.LivenessFinding, tt.finding)
			}
		})
	}
}

// TestRerunHelps: a rerun can supply holds, chances and faults, not a
// share of unknown outcomes nor porcupine's time.
func TestRerunHelps(t *testing.T) {
	few := results.MissingEvidence{What: "2 holds, 0 chances to overlap (need ≥ 10)", Fix: fixLonger}
	for _, tt := range []struct {
		name string
		r    results.Run
		want bool
	}{
		{"too few holds", results.Run{Missing: map[string]results.MissingEvidence{"exclusion": few}, Evidence: plenty}, true},
		{"most outcomes unknown", results.Run{Missing: map[string]results.MissingEvidence{"exclusion": few},
			Evidence: measure.Evidence{Acquires: measure.OutcomeCounts{OK: 2, Info: 700}}}, false},
		{"porcupine timed out", results.Run{Missing: map[string]results.MissingEvidence{"exclusion": {What: "porcupine timed out", Fix: fixCheckTime}}, Evidence: plenty}, false},
		{"nothing missing", results.Run{Evidence: plenty}, false},
	} {
		if got := RerunHelps(tt.r); got != tt.want {
			t.Errorf("%s: RerunHelps = %v, want %v", tt.name, got, tt.want)
		}
	}
}
