package diff

import (
	"reflect"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/checker"
	"github.com/lockbench/lockbench/checker/witness"
	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/internal/noise"
	"github.com/lockbench/lockbench/results"
)

// runs returns n runs of scenario sc; violated of them break exclusion
// (with a witness), and each sends cmds commands per grant.
func runs(sc string, n, violated int, cmds float64) []results.Run {
	var out []results.Run
	for i := range n {
		r := results.Run{Scenario: sc, Seed: int64(i + 1), ScenarioKind: "none", AsExpected: true, RoundTripsPerGrant: cmds + float64(i)/10,
			Verdict: results.Verdict{Exclusion: checker.OK, Resource: checker.OK, Liveness: checker.OK}}
		if i < violated {
			r.Verdict.Exclusion = checker.Violated
			r.Witnesses.Exclusion = []witness.Overlap{{Key: "k"}}
			r.Violations = 1
			r.AsExpected, r.Unexpected = false, []string{"exclusion must hold but is violated"}
		}
		out = append(out, r)
	}
	return out
}

// TestCompare: B violating in every run against none of A is gated (4
// runs a side suffice), with B's witnesses, worst first; 3 runs a side
// are not enough (p = 1/20) and say how many would be; a lock against
// itself shows nothing; ten times the commands per grant is a gated cost
// regression.
func TestCompare(t *testing.T) {
	o := Options{A: "a", B: "b", Scenarios: []string{"baseline"}, Repeat: 4, MaxRegression: 0.1}
	rep := Compare(o, runs("baseline", 4, 0, 3), runs("baseline", 4, 4, 3))
	if !rep.Failed() || rep.Findings[0].Figure != "exclusion violated" || !rep.Findings[0].Gated || len(rep.Findings[0].WitnessesB) == 0 {
		t.Errorf("4 of 4 against 0 of 4: %+v, want exclusion gated first with B's witnesses", rep.Findings)
	}
	o.Repeat = 3
	rep = Compare(o, runs("baseline", 3, 0, 3), runs("baseline", 3, 3, 3))
	if rep.Failed() {
		t.Errorf("3 of 3 against 0 of 3 is p = 0.05, not below it: %s", rep.Headline())
	}
	if v := rep.Findings[len(rep.Findings)-1].Verdict; !strings.Contains(rep.Findings[0].Verdict, "needs 4 runs a side") {
		t.Errorf("3 runs a side: %q (last %q), want the runs needed", rep.Findings[0].Verdict, v)
	}
	o.A, o.B, o.Repeat = "x", "x", 4
	rep = Compare(o, runs("baseline", 4, 0, 3), runs("baseline", 4, 0, 3))
	if rep.Failed() || !strings.Contains(rep.Headline(), "no difference shown at 4 runs") {
		t.Errorf("a lock against itself: %s", rep.Headline())
	}
	rep = Compare(o, runs("baseline", 4, 0, 3), runs("baseline", 4, 0, 30))
	if !rep.Failed() || !strings.Contains(rep.Findings[0].Figure, "commands per grant") {
		t.Errorf("ten times the commands: %s", rep.Headline())
	}
}

// TestChecksCoverVerdict: every check that gates a run, each
// checker.Status field of results.Verdict, is a figure of the diff, read
// from that field: a run with only that field violated shows it, one
// with the field OK does not. A check added to Verdict and not to the
// diff fails here (the contract checks once did: a mutant killed by its
// orphans alone differed from its twin only in "gate failed").
func TestChecksCoverVerdict(t *testing.T) {
	vt := reflect.TypeOf(results.Verdict{})
	for i := range vt.NumField() {
		fld := vt.Field(i)
		if fld.Type != reflect.TypeOf(checker.Status("")) {
			continue
		}
		t.Run(fld.Name, func(t *testing.T) {
			var c *check
			for j := range checks {
				if checks[j].field == fld.Name {
					c = &checks[j]
				}
			}
			if c == nil {
				t.Fatalf("results.Verdict.%s gates a run but no diff check reads it: add it to checks", fld.Name)
			}
			var r results.Run
			reflect.ValueOf(&r.Verdict).Elem().Field(i).Set(reflect.ValueOf(checker.Violated))
			if !c.shows(r) {
				t.Errorf("%q does not show a run with %s violated", c.name, fld.Name)
			}
			reflect.ValueOf(&r.Verdict).Elem().Field(i).Set(reflect.ValueOf(checker.OK))
			if c.shows(r) {
				t.Errorf("%q shows a run with %s ok", c.name, fld.Name)
			}
		})
	}
}

// TestCompareContractChecks: a B that breaks only a contract check in
// every run, against an A that never does, fails the diff on that
// check's own figure (not just "gate failed"), with B's witness.
func TestCompareContractChecks(t *testing.T) {
	tests := []struct {
		name   string
		figure string
		breaks func(*results.Run)
	}{
		{"orphans", "orphans violated", func(r *results.Run) {
			r.Verdict.Orphans, r.Witnesses.Orphans = checker.Violated, []witness.OrphanWitness{{Key: "k"}}
		}},
		{"lost", "lost signals violated", func(r *results.Run) {
			r.Verdict.Lost, r.Witnesses.Lost = checker.Violated, []witness.LostWitness{{Key: "k", Kind: witness.LostAfterRelease, Lost: &history.Operation{}, Release: &history.Operation{}}}
		}},
		{"extends", "extends violated", func(r *results.Run) {
			r.Verdict.Extends, r.Witnesses.Extends = checker.Violated, []witness.ExtendWitness{{Key: "k", Release: &history.Operation{}, Extend: &history.Operation{}}}
		}},
		{"reasons", "reasons violated", func(r *results.Run) {
			r.Verdict.Reasons, r.Witnesses.Reasons = checker.Violated, []witness.ReasonWitness{{Key: "k", Call: &history.Operation{}}}
		}},
	}
	o := Options{A: "twin", B: "mutant", Scenarios: []string{"baseline"}, Repeat: 4, MaxRegression: 0.1}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := runs("baseline", 4, 0, 3)
			for i := range b {
				tt.breaks(&b[i])
				b[i].AsExpected, b[i].Unexpected = false, []string{tt.name + " must hold but is violated"}
			}
			rep := Compare(o, runs("baseline", 4, 0, 3), b)
			if !rep.Failed() || !strings.HasPrefix(rep.Findings[0].Figure, tt.figure) || rep.Findings[0].Class != ClassContract {
				t.Fatalf("%s in 4 of 4 runs of B: worst %+v, want %q gated first", tt.name, rep.Findings[0], tt.figure)
			}
			if len(rep.Findings[0].WitnessesB) == 0 || len(rep.Findings[0].WitnessesA) != 0 {
				t.Errorf("witnesses A %q, B %q: want B's only", rep.Findings[0].WitnessesA, rep.Findings[0].WitnessesB)
			}
		})
	}
}

// TestCompareGrantsPerFaultWindowBusy: grants in a fault window are a
// rate, lowered by a busy machine: 13% fewer for B is gated on a quiet
// machine and not on a busy one (a twin against a mutant whose only bug
// is a false reason was once gated so, at load average 25).
func TestCompareGrantsPerFaultWindowBusy(t *testing.T) {
	side := func(grants int, busy bool) []results.Run {
		rs := runs("long-cs", 6, 0, 3)
		for i := range rs {
			rs[i].ScenarioKind = "client"
			rs[i].Noise = &noise.Summary{Busy: busy}
			for w := range 3 {
				rs[i].Availability = append(rs[i].Availability, results.AvailabilityWindow{Fault: "long-cs", Acquires: 80, Grants: grants + i + w})
			}
		}
		return rs
	}
	o := Options{A: "a", B: "b", Scenarios: []string{"long-cs"}, Repeat: 6, MaxRegression: 0.1}
	for _, tt := range []struct {
		busy  bool
		gated bool
	}{{false, true}, {true, false}} {
		rep := Compare(o, side(55, tt.busy), side(48, tt.busy))
		for _, f := range rep.Findings {
			if strings.HasPrefix(f.Figure, "grants per fault window") && (f.Gated != tt.gated || !f.Worse) {
				t.Errorf("busy %v: %+v, want worse and gated %v", tt.busy, f, tt.gated)
			}
		}
	}
}
