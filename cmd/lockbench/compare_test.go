package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/figures"
	"github.com/lockbench/lockbench/results"
)

// redlockLongCS runs redlock under long-cs, a must-hold pair that holds only
// because the client checks its validity before writing; extra flags are
// appended. It returns the results folder. A run that wants exit 0 may
// also end inconclusive (exit 4: on a busy machine redlock's 10 ms
// per-node budget leaves it few holds): it is no less healthy for compare,
// which never gates an inconclusive run.
func redlockLongCS(t *testing.T, wantCode int, extra ...string) string {
	t.Helper()
	out := t.TempDir()
	args := append([]string{"run", "--strategy", "redlock", "--scenario", "long-cs", "--ttl", "100ms", "--duration", "600ms", "--clients", "4", "--out", out}, extra...)
	code, text := run(t, nil, args...)
	if code == exitInconclusive && wantCode == exitOK {
		t.Logf("lockbench %s: inconclusive (exit 4):\n%s", strings.Join(args, " "), text)
		return out
	}
	if code != wantCode {
		t.Fatalf("lockbench %s: exit %d, want %d:\n%s", strings.Join(args, " "), code, wantCode, text)
	}
	return out
}

// TestCompareHealthyRunsExit0: two real healthy runs of the same must-hold
// pair compare clean (one run a side: performance is reported, not gated).
func TestCompareHealthyRunsExit0(t *testing.T) {
	oldDir, newDir := redlockLongCS(t, 0), redlockLongCS(t, 0)
	code, out := run(t, nil, "compare", oldDir, filepath.Join(newDir, "results.json"))
	if code != 0 {
		t.Fatalf("compare of two healthy runs: exit %d, want 0:\n%s", code, out)
	}
	if !strings.Contains(out, "redlock   long-cs") && !strings.Contains(out, "redlock") || !strings.Contains(out, "no regression") {
		t.Errorf("compare output lacks the cell or the verdict:\n%s", out)
	}
}

// TestCompareExits1OnPolicyOverrideViolation: NEW is a real run of the
// must-hold pair redlock/long-cs with its validity check switched off
// (--policy none), so the slow holder writes after its lease expired and
// exclusion is violated; compare must flag the new violation and exit 1.
func TestCompareExits1OnPolicyOverrideViolation(t *testing.T) {
	oldDir := redlockLongCS(t, 0)
	newDir := redlockLongCS(t, 0, "--policy", "none") // a custom policy is not gated by run itself
	code, out := run(t, nil, "compare", oldDir, newDir)
	if code != 1 {
		t.Fatalf("compare with a must-hold pair broken: exit %d, want 1:\n%s", code, out)
	}
	if !strings.Contains(out, "FAIL redlock/long-cs: new violation: exclusion ok in every OLD run") {
		t.Errorf("compare output does not name the new violation:\n%s", out)
	}
	code, js := run(t, nil, "compare", "--json", oldDir, newDir)
	var c struct {
		Gated int `json:"gated"`
		Cells []struct {
			Findings []struct{ Kind string } `json:"findings"`
		} `json:"cells"`
	}
	if err := json.Unmarshal([]byte(js[:strings.LastIndex(js, "}")+1]), &c); code != 1 || err != nil || c.Gated == 0 || c.Cells[0].Findings[0].Kind != "new-violation" {
		t.Errorf("compare --json: exit %d, err %v, parsed %+v:\n%s", code, err, c, js)
	}
}

// TestCompareExits1OnTamperedCopy: NEW is a copy of a real healthy
// results.json with the exclusion verdict switched to violated (and the
// run's own canary-free expectation left as is).
func TestCompareExits1OnTamperedCopy(t *testing.T) {
	oldDir := t.TempDir()
	// TTL 1 s with 5 ms critical sections and TTL 50 ms's retry: at TTL
	// 50 ms a busy machine that stalls a client longer than the TTL makes
	// the run inconclusive (exit 4); the same at every test that wants a
	// must-hold run to end as expected.
	if code, text := run(t, nil, "run", "--strategy", "token-lua", "--ttl", "1s", "--cs-min", "5ms", "--retry", "exponential:1ms:10ms", "--duration", "300ms", "--clients", "4", "--out", oldDir); code != 0 {
		t.Fatalf("healthy run: exit %d:\n%s", code, text)
	}
	data, err := os.ReadFile(filepath.Join(oldDir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f map[string]any
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	r := f["runs"].([]any)[0].(map[string]any)
	r["verdict"].(map[string]any)["exclusion"] = "violated"
	tampered, _ := json.Marshal(f)
	newPath := filepath.Join(t.TempDir(), "results.json")
	if err := os.WriteFile(newPath, tampered, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out := run(t, nil, "compare", oldDir, newPath); code != 1 || !strings.Contains(out, "new-violation") {
		t.Errorf("compare with a tampered copy: exit %d, want 1 naming new-violation:\n%s", code, out)
	}
}

// TestCompareBadInputsExit2: a v1 file, a truncated one, a missing folder
// and a bad threshold are usage errors (exit 2) naming the problem.
func TestCompareBadInputsExit2(t *testing.T) {
	fixtures := filepath.Join("..", "..", "results", "testdata")
	good := filepath.Join(fixtures, "schema-v4.json")
	tests := []struct {
		name    string
		args    []string
		mention string
	}{
		{"older schema", []string{filepath.Join(fixtures, "schema-v1.json"), good}, "schema version 1, this lockbench reads 4"},
		{"truncated", []string{good, filepath.Join(fixtures, "truncated.json")}, "is truncated"},
		{"missing", []string{good, filepath.Join(t.TempDir(), "nothing")}, "does not exist"},
		{"bad threshold", []string{good, good, "--max-regression", "ten"}, "not a number"},
		{"threshold above 100%", []string{good, good, "--max-regression", "150%"}, "valid range is 0-100%"},
		{"one argument", []string{good}, "want two arguments"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out := run(t, nil, append([]string{"compare"}, tt.args...)...)
			if code != 2 || !strings.Contains(out, tt.mention) {
				t.Errorf("exit %d, want 2 with %q:\n%s", code, tt.mention, out)
			}
		})
	}
	if code, out := run(t, nil, "compare", good, good); code != 0 {
		t.Errorf("a file compared with itself: exit %d:\n%s", code, out)
	}
}

// TestCompareNoRunsExit2: a results.json that holds no runs (a bench that
// ran nothing) cannot be a baseline, nor be compared against one.
func TestCompareNoRunsExit2(t *testing.T) {
	dir := t.TempDir()
	f := &results.File{SchemaVersion: results.SchemaVersion, Profile: "ci", Incomplete: "stopped after 0 of 4 runs: environment error"}
	if err := figures.Write(dir, f); err != nil {
		t.Fatal(err)
	}
	code, out := run(t, nil, "compare", dir, dir)
	if code != 2 || !strings.Contains(out, "holds no runs (stopped after 0 of 4 runs") {
		t.Errorf("exit %d, want 2 naming the empty file:\n%s", code, out)
	}
}

// TestReportOldSchemaExit2: lockbench report on a folder whose results.json
// is schema 1 (a real file from lockbench 0.1.0) or truncated exits 2 and
// says what to do.
func TestReportOldSchemaExit2(t *testing.T) {
	for _, tt := range []struct{ fixture, mention string }{
		{"schema-v1.json", "rerun lockbench bench"},
		{"truncated.json", "is truncated"},
	} {
		dir := t.TempDir()
		data, err := os.ReadFile(filepath.Join("..", "..", "results", "testdata", tt.fixture))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "results.json"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		if code, out := run(t, nil, "report", dir); code != 2 || !strings.Contains(out, tt.mention) || strings.Count(strings.TrimSpace(out), "\n") > 0 {
			t.Errorf("report on %s: exit %d, want 2 with one line mentioning %q:\n%s", tt.fixture, code, tt.mention, out)
		}
	}
}

// TestDocsQuoteSchemaError: docs/results-format.md's example of an old
// results.json is what lockbench prints (the folder named "old").
func TestDocsQuoteSchemaError(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "old")
	data, err := os.ReadFile(filepath.Join("..", "..", "results", "testdata", "schema-v1.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "results.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "results-format.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, out := run(t, nil, "report", dir)
	quoted := strings.ReplaceAll(strings.TrimSpace(out), filepath.Dir(dir)+string(filepath.Separator), "")
	if !strings.Contains(string(doc), "\n"+quoted+"\n") {
		t.Errorf("docs/results-format.md does not quote what lockbench report prints for a schema-1 file:\n%s", quoted)
	}
}
