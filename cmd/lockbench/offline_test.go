package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/figures"
	"github.com/lockbench/lockbench/perf"
	"github.com/lockbench/lockbench/results"
)

// TestReportFilePath: report given DIR/results.json takes DIR; given
// another file it says what it wants.
func TestReportFilePath(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile(filepath.Join("..", "..", "results", "testdata", "schema-v4.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "results.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, text := run(t, nil, "report", filepath.Join(dir, "results.json")); code != 0 || !strings.Contains(text, filepath.Join(dir, "report.md")) {
		t.Errorf("report DIR/results.json: exit %d, output %q; want exit 0 and the report in DIR", code, text)
	}
	other := filepath.Join(dir, "report.md")
	if code, text := run(t, nil, "report", other); code != 2 || !strings.Contains(text, "report takes the directory holding results.json (did you mean "+dir+"?)") {
		t.Errorf("report FILE: exit %d, output %q; want exit 2 naming the directory", code, text)
	}
	hist := filepath.Join(dir, "histories", "a-b-1.jsonl")
	if err := os.MkdirAll(filepath.Dir(hist), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hist, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, text := run(t, nil, "report", hist); code != 2 || !strings.Contains(text, "(did you mean "+dir+"?); to check a history, lockbench check "+hist) {
		t.Errorf("report HISTORY: exit %d, output %q; want exit 2 naming the results folder and check", code, text)
	}
}

// TestCheckTruncatedHistory: a history cut mid-line is a usage error
// naming the file, the line and the fix.
func TestCheckTruncatedHistory(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "checker", "testdata", "clean-sequential.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(t.TempDir(), "cut.jsonl")
	if err := os.WriteFile(cut, data[:len(data)*2/3], 0o644); err != nil {
		t.Fatal(err)
	}
	code, text := run(t, nil, "check", cut)
	// check judges histories of any tool: the fix names the format too.
	for _, want := range []string{cut + ": history: corrupt file: line ", "rerun the run that wrote it", "if another tool did, docs/history-format.md has the format"} {
		if code != 2 || !strings.Contains(text, want) {
			t.Errorf("exit %d, output %q; want exit 2 and %q", code, text, want)
		}
	}
}

// TestReportDistrustsEditedVerdicts: hand edits of results.json that
// lockbench cannot have written are reported, each with a warning naming
// the run: a run marked as expected although its stored verdict
// contradicts its expectation, or with a verdict value lockbench never
// writes ("banana"), is shown as unexpected; a run marked unexpected with
// no reason stays unexpected, and the warning says the file gives none.
func TestReportDistrustsEditedVerdicts(t *testing.T) {
	out := t.TempDir()
	if code, text := run(t, nil, "run", "--strategy", "token-lua", "--ttl", "1s", "--cs-min", "5ms", "--retry", "exponential:1ms:10ms", "--duration", "200ms", "--clients", "2", "--out", out); code != 0 {
		t.Fatalf("run: exit %d:\n%s", code, text)
	}
	path := filepath.Join(out, results.FileName)
	orig, err := results.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		edit func(r *results.Run)
		want string
	}{
		{"contradiction", func(r *results.Run) { r.Verdict.Exclusion = "violated" }, // as_expected stays true
			"token-lua/baseline seed 1 is marked as expected in results.json, but exclusion must hold but is violated"},
		{"unknown verdict", func(r *results.Run) { r.Verdict.Exclusion = "banana" },
			`token-lua/baseline seed 1 has exclusion verdict "banana" is none of ok, violated, inconclusive, skipped in results.json`},
		{"unexpected without reason", func(r *results.Run) { r.AsExpected = false; r.Unexpected = nil },
			"token-lua/baseline seed 1 is marked unexpected in results.json without saying why"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := *orig
			f.Runs = append([]results.Run(nil), orig.Runs...)
			tt.edit(&f.Runs[0])
			if err := figures.Write(out, &f); err != nil {
				t.Fatal(err)
			}
			code, text := run(t, nil, "report", out)
			if code != 0 || !strings.Contains(text, "warning: "+tt.want) {
				t.Errorf("report: exit %d, output %q; want exit 0 and a warning %q", code, text, tt.want)
			}
			md, err := os.ReadFile(filepath.Join(out, results.ReportMarkdown))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(md), "1 run: 0 as expected, 1 unexpected.") {
				t.Errorf("report.md does not show the edited run as unexpected:\n%.400s", md)
			}
		})
	}
}

// TestMissingPathsNameTheFix: check and report of a path that does not
// exist (or a folder without results.json) exit 2 naming what to give,
// as compare does, not a bare "open ...: no such file".
func TestMissingPathsNameTheFix(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nonexist")
	empty := t.TempDir()
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"check", missing}, missing + " does not exist: give a history file"},
		{[]string{"report", missing}, missing + " does not exist: give a results folder"},
		{[]string{"report", empty}, empty + " holds no results.json: give a results folder"},
		{[]string{"compare", missing, empty}, "OLD: " + missing + " does not exist: give a results folder or its results.json"},
	} {
		code, text := run(t, nil, tt.args...)
		if code != 2 || !strings.Contains(text, tt.want) {
			t.Errorf("lockbench %s: exit %d, output %q; want exit 2 and %q", strings.Join(tt.args, " "), code, text, tt.want)
		}
		// The path once: not also in "open PATH: no such file or directory".
		if strings.Contains(text, "no such file") {
			t.Errorf("lockbench %s: %q repeats the path in the open error", strings.Join(tt.args, " "), text)
		}
	}
}

// TestReportRefusesPerfResults: perf's results measure lockbench itself;
// report (which renders lock verdicts) refuses them with exit 2.
func TestReportRefusesPerfResults(t *testing.T) {
	dir := t.TempDir()
	if err := perf.Write(dir, &perf.File{Tool: "lockbench test", Strategy: perf.Strategy}); err != nil {
		t.Fatal(err)
	}
	if code, text := run(t, nil, "report", dir); code != 2 || !strings.Contains(text, "holds the results of lockbench perf") {
		t.Errorf("report on perf results: exit %d, output %q; want exit 2 naming perf", code, text)
	}
}
