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
	if c := o.Cells[3]; c.Verdict != "unexpected" || c.Observed["error"] != 1 || c.Kept == "" {
		t.Errorf("cell: %+v", c)
	}
	for _, c := range o.Cells {
		var runs []results.Run
		for _, r := range f.Runs {
			if r.Strategy == c.Strategy && r.Scenario == c.Scenario {
				runs = append(runs, r)
			}
		}
		if want := results.Kept(runs); c.Kept != want {
			t.Errorf("%s/%s kept %q, want %q", c.Strategy, c.Scenario, c.Kept, want)
		}
	}
	want := "4 runs, 3 as expected, 1 unexpected (redlock/gc-pause seed 1); report: out/report.md (also index.html)"
	if got := o.VerdictLine(); got != want {
		t.Errorf("VerdictLine = %q, want %q", got, want)
	}
}
