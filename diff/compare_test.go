package diff

import (
	"strings"
	"testing"

	"github.com/lockbench/lockbench/checker"
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
			r.Witnesses.Exclusion = []checker.Overlap{{Key: "k"}}
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
