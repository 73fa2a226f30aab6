package bench

import (
	"strings"
	"testing"

	"github.com/lockbench/lockbench/results"
)

// TestOutcomeOf: the --json summary counts runs, names each unexpected run
// with what contradicted it, its history and rerun command, and the verdict
// line names it too.
func TestOutcomeOf(t *testing.T) {
	f := sampleReportFile()
	f.Runs[3].Error = "machine too busy"
	o := OutcomeOf(f, "out")
	if o.OK || o.Runs != 4 || o.AsExpected != 3 || o.Unexpected != 1 || len(o.Cells) != 4 {
		t.Fatalf("outcome counts: %+v", o)
	}
	u := o.UnexpectedRuns[0]
	if u.Strategy != "redlock" || u.Scenario != "gc-pause" || u.History != "out/histories/redlock-gc-pause-1.jsonl" ||
		u.Visualization != "out/histories/redlock-gc-pause-1.html" || len(u.Why) != 2 || u.Why[0] != "error: machine too busy" ||
		!strings.HasPrefix(u.Command, "lockbench run --strategy redlock") {
		t.Errorf("unexpected run: %+v", u)
	}
	if c := o.Cells[3]; c.Verdict != "unexpected" || c.Observed["error"] != 1 || c.ObservedSafety == "" {
		t.Errorf("cell: %+v", c)
	}
	for _, c := range o.Cells {
		var runs []results.Run
		for _, r := range f.Runs {
			if r.Strategy == c.Strategy && r.Scenario == c.Scenario {
				runs = append(runs, r)
			}
		}
		if want := results.ObservedSafety(runs); c.ObservedSafety != want {
			t.Errorf("%s/%s observed safety %q, want %q", c.Strategy, c.Scenario, c.ObservedSafety, want)
		}
	}
	want := "4 runs, 3 as expected, 1 unexpected (redlock/gc-pause seed 1); report: out/report.md (also index.html)"
	if got := o.VerdictLine(); got != want {
		t.Errorf("VerdictLine = %q, want %q", got, want)
	}
}

// TestOutcomeWarnings: a run whose acquires mostly had an unknown outcome
// is named in the Outcome's warnings, without making it unexpected.
func TestOutcomeWarnings(t *testing.T) {
	f := sampleReportFile()
	if o := OutcomeOf(f, "out"); len(o.Warnings) != 0 {
		t.Fatalf("warnings of a sample without unknown outcomes: %q", o.Warnings)
	}
	f.Runs[0].Acquires = map[string]int{"ok": 2, "fail": 0, "info": 8}
	o := OutcomeOf(f, "out")
	want := f.Runs[0].Strategy + "/" + f.Runs[0].Scenario + " seed 1: 8 of 10 acquires"
	if len(o.Warnings) != 1 || !strings.HasPrefix(o.Warnings[0], want) || o.Unexpected != 1 {
		t.Errorf("warnings %q (unexpected %d); want one starting %q and the same unexpected count", o.Warnings, o.Unexpected, want)
	}
}
