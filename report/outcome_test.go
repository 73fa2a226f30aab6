package report

import (
	"strings"
	"testing"

	"github.com/lockbench/lockbench/checker"
	"github.com/lockbench/lockbench/internal/noise"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/stats"
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
		if want := ObservedSafety(runs); c.ObservedSafety != want {
			t.Errorf("%s/%s observed safety %q, want %q", c.Strategy, c.Scenario, c.ObservedSafety, want)
		}
	}
	want := "4 runs, 3 as expected, 1 unexpected (redlock/gc-pause seed 1); report: out/report.md (also index.html)"
	if got := o.VerdictLine(); got != want {
		t.Errorf("VerdictLine = %q, want %q", got, want)
	}
}

// TestOutcomeInconclusive: a run whose gated check lacked evidence is
// counted and named apart from the unexpected ones, with what is missing,
// its liveness finding and its reruns; the verdict line names it.
func TestOutcomeInconclusive(t *testing.T) {
	f := sampleReportFile()
	if o := OutcomeOf(f, "out"); o.Inconclusive != 0 || len(o.InconclusiveRuns) != 0 {
		t.Fatalf("inconclusive runs of a sample with enough evidence: %+v", o.InconclusiveRuns)
	}
	r := &f.Runs[0]
	r.AsExpected = false
	r.Verdict.Exclusion = "inconclusive"
	r.Inconclusive = []string{"exclusion must hold: inconclusive: 2 holds, 0 chances to overlap (need ≥ 10): run longer (--duration) or with more clients (--clients)"}
	r.LivenessFinding = "granted 2 times to 16 clients in 300 acquires: 290 acquires timed out (96%)"
	r.Earlier = []results.Run{{Seed: 7, Config: results.RunConfig{DurationMs: 1000}, Missing: map[string]results.MissingEvidence{"exclusion": {What: "1 hold, 1 chance to overlap (need ≥ 10)"}}}}
	o := OutcomeOf(f, "out")
	if o.OK || o.Unexpected != 1 || o.Inconclusive != 1 || o.AsExpected != 2 {
		t.Fatalf("counts: ok %v, %d unexpected, %d inconclusive, %d as expected; want 1, 1, 2", o.OK, o.Unexpected, o.Inconclusive, o.AsExpected)
	}
	u := o.InconclusiveRuns[0]
	if len(u.Why) != 3 || u.Why[0] != r.Inconclusive[0] || u.Why[1] != "liveness finding: "+r.LivenessFinding ||
		u.Why[2] != "rerun once: seed 7 (1 s) was inconclusive (exclusion: 1 hold, 1 chance to overlap (need ≥ 10))" {
		t.Errorf("inconclusive run's why: %q", u.Why)
	}
	if c := o.Cells[0]; c.Verdict != "inconclusive" || c.Inconclusive != 1 {
		t.Errorf("cell: %+v", c)
	}
	name := r.Strategy + "/" + r.Scenario + " seed 1"
	if want := "4 runs, 2 as expected, 1 unexpected (redlock/gc-pause seed 1), 1 inconclusive (" + name + ")"; o.CountsLine() != want {
		t.Errorf("CountsLine = %q, want %q", o.CountsLine(), want)
	}
}

// TestVerdictLineSingular: one run is "1 run".
func TestVerdictLineSingular(t *testing.T) {
	o := Outcome{Runs: 1, AsExpected: 1, Paths: OutcomePaths{Markdown: "out/report.md", HTML: "out/index.html"}}
	if got, want := o.VerdictLine(), "1 run, 1 as expected, 0 unexpected; report: out/report.md (also index.html)"; got != want {
		t.Errorf("VerdictLine = %q, want %q", got, want)
	}
}

// TestVerdictLineBusy: the verdict line names the runs measured on a busy
// machine, counted from their noise summaries.
func TestVerdictLineBusy(t *testing.T) {
	f := &results.File{Runs: []results.Run{
		{Strategy: "a", Scenario: "baseline", Seed: 1, AsExpected: true, Noise: &noise.Summary{Busy: true}},
		{Strategy: "b", Scenario: "baseline", Seed: 1, AsExpected: true, Noise: &noise.Summary{}},
		{Strategy: "c", Scenario: "baseline", Seed: 1, AsExpected: true},
	}}
	o := OutcomeOf(f, "out")
	if want := "3 runs, 3 as expected, 0 unexpected; 1 of 3 measured on a busy machine (their costs are not comparable)"; o.Busy != 1 || o.CountsLine() != want {
		t.Errorf("busy %d, line %q; want 1, %q", o.Busy, o.CountsLine(), want)
	}
}

// TestDefaultWorkloadsResolve: every pair of every profile, and every pair
// under run's default flags (TTL 100 ms, 2 s, and its shortest sensible
// duration), resolves: the workload checks (a critical section no longer
// than the duration, ...) refuse none of them, including the scenarios

// sampleReportFile is a small bench result: two strategies under the
// baseline and a fault, one unexpected verdict, and a client sweep.
func sampleReportFile() *results.File {
	run := func(strategy, scenario string, tput float64, asExpected bool, verdict checker.Status) results.Run {
		r := results.Run{
			Strategy: strategy, Scenario: scenario, Seed: 1, Expected: "must-hold", AsExpected: asExpected,
			ExpectedChecks: map[string]string{"exclusion": "hold", "resource": "hold", "liveness": "hold"},
			Verdict:        results.Verdict{Exclusion: verdict, Resource: verdict, Liveness: "ok"},
			Grants:         int(tput), ThroughputPerS: tput, RoundTripsPerGrant: 3.2, ClientCommandsPerGrant: 2.4,
			AcquireLatencyMs: stats.Latency{P50: 1.2, P90: 4, P99: 12, P999: 30, Max: 55, Samples: 400},
			Config:           results.RunConfig{Clients: 16, Keys: 1, TTLMs: 100, DurationMs: 1000},
			History:          "histories/" + strategy + "-" + scenario + "-1.jsonl",
			Command:          "lockbench run --strategy " + strategy + " --scenario " + scenario,
		}
		if !asExpected {
			r.Unexpected = []string{"exclusion must hold but is violated: 2 overlapping holds"}
			r.Visualization = "histories/" + strategy + "-" + scenario + "-1.html"
		}
		return r
	}
	f := &results.File{
		SchemaVersion: results.SchemaVersion, Tool: "lockbench test", Profile: "ci", Command: "lockbench bench --profile ci",
		Runs: []results.Run{
			run("token-lua", "baseline", 180, true, "ok"), run("redlock", "baseline", 90, true, "ok"),
			run("token-lua", "gc-pause", 150, true, "ok"), run("redlock", "gc-pause", 70, false, "violated"),
		},
	}
	for _, n := range []int{1, 4, 16, 64, 256} {
		s := run("token-lua", "baseline", 100+float64(n), true, "ok")
		s.Config.Clients = n
		f.Sweep = append(f.Sweep, s)
	}
	return f
}
