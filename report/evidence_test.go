package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/internal/resultstest"
	"github.com/lockbench/lockbench/results"
)

// TestReportEvidence: an inconclusive run is counted apart from the
// unexpected ones, its gate cell is marked "?", and the Evidence section
// names what is missing, the liveness finding and the reruns.
func TestReportEvidence(t *testing.T) {
	f := resultstest.SampleFile()
	r := &f.Runs[3] // set-nx-px × baseline
	r.AsExpected = false
	r.Verdict.Exclusion, r.Verdict.Resource = "inconclusive", "inconclusive"
	few := results.MissingEvidence{What: "2 holds, 0 chances to overlap (need ≥ 10)", Fix: "run longer (--duration) or with more clients (--clients)"}
	r.Missing = map[string]results.MissingEvidence{"exclusion": few, "resource": few}
	r.Inconclusive = []string{"exclusion must hold: inconclusive: " + few.String()}
	r.LivenessFinding = "granted 2 times to 16 clients in 300 acquires: 290 acquires timed out (96%)"
	earlier := *r
	earlier.Seed, earlier.Config.DurationMs = 7, 1000
	r.Seed, r.Config.DurationMs = 8, 2000
	r.Earlier = []results.Run{earlier}
	if got, want := RerunNote(*r), "rerun once: seed 7 (1 s) was inconclusive (exclusion, resource: 2 holds, 0 chances to overlap (need ≥ 10))"; got != want {
		t.Errorf("RerunNote\n %q\nwant %q", got, want)
	}
	dir := t.TempDir()
	if err := WriteReport(dir, f, nil); err != nil {
		t.Fatal(err)
	}
	line := "set-nx-px × baseline seed 8 (inconclusive): inconclusive exclusion, resource: 2 holds, 0 chances to overlap (need ≥ 10): run longer (--duration) or with more clients (--clients). Liveness finding: granted 2 times to 16 clients in 300 acquires: 290 acquires timed out (96%). rerun once: seed 7 (1 s) was inconclusive"
	for _, tt := range []struct {
		name  string
		wants []string
	}{
		{results.ReportMarkdown, []string{
			"7 runs: 5 as expected, 1 unexpected, 1 inconclusive.",
			"inconclusive: exclusion, resource: 2 holds, 0 chances to overlap (need ≥ 10); granted almost nothing",
			"**1 run fell short of evidence (1 inconclusive, 1 liveness finding, 1 rerun)**",
			"(details.md#evidence)",
			"must-hold → inconclusive ?",
			"4 inconclusive (no",
		}},
		{results.DetailsMarkdown, []string{"## Evidence", "1 run fell short of evidence", line}},
		{results.ReportHTML, []string{
			"7 runs: 5 as expected, 1 unexpected, 1 inconclusive.",
			`<p class="verdict unexpected">`,
			`<details id="evidence"><summary>1 run fell short of evidence (1 inconclusive, 1 liveness finding, 1 rerun)</summary>`,
			"Liveness finding: granted 2 times",
		}},
	} {
		data, err := os.ReadFile(filepath.Join(dir, tt.name))
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		if tt.name != results.ReportHTML {
			text = strings.NewReplacer(`\(`, "(", `\)`, ")", `\*`, "*").Replace(text)
		}
		wantIn(t, tt.name, text, tt.wants)
	}
	// Without anything short of evidence there is no section.
	g := resultstest.SampleFile()
	dir = t.TempDir()
	if err := WriteReport(dir, g, nil); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, results.ReportMarkdown))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "fell short of evidence") {
		t.Error("report.md counts runs short of evidence for runs with enough evidence")
	}
}
