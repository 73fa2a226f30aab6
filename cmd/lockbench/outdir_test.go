package main

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/lockbench/lockbench/results"
)

// TestOutFolderNotLockbenchs: run, bench and perf refuse (exit 2) an
// --out holding a results.json lockbench did not write, or a report with
// no lockbench results.json beside it, and leave the file as it was.
func TestOutFolderNotLockbenchs(t *testing.T) {
	for _, cmd := range [][]string{
		{"run", "--strategy", "token-lua", "--duration", "200ms"},
		{"bench", "--strategies", "token-lua", "--scenarios", "baseline"},
		{"perf", "--clients", "1"},
	} {
		for _, f := range []struct{ name, text string }{
			{results.FileName, `{"my":"data"}`},
			{results.ReportMarkdown, "# my notes\n"},
			{results.ReportHTML, "<p>mine</p>"},
		} {
			dir := t.TempDir()
			p := filepath.Join(dir, f.name)
			if err := os.WriteFile(p, []byte(f.text), 0o644); err != nil {
				t.Fatal(err)
			}
			code, out := run(t, nil, append(cmd, "--out", dir)...)
			if code != 2 || !strings.Contains(out, p) || !strings.Contains(out, "choose another --out") {
				t.Errorf("%s into a folder with my %s: exit %d, output %q; want exit 2 naming the file and another --out", cmd[0], f.name, code, out)
			}
			if data, _ := os.ReadFile(p); string(data) != f.text {
				t.Errorf("%s overwrote my %s: %q", cmd[0], f.name, data)
			}
		}
	}
}

// TestOutOnlySpaces: an --out of spaces names no folder (exit 2), and
// each command suggests its own default.
func TestOutOnlySpaces(t *testing.T) {
	for _, tt := range []struct {
		args []string
		def  string
	}{
		{[]string{"run", "--strategy", "token-lua"}, "lockbench-out/run"},
		{[]string{"bench"}, "lockbench-out/bench"},
		{[]string{"perf"}, "lockbench-out/perf"},
	} {
		for _, out := range []string{" ", "   ", ""} {
			code, text := run(t, nil, append(tt.args, "--out", out)...)
			if code != 2 || !strings.Contains(text, "--out must not be empty or only spaces") || !strings.Contains(text, "e.g. --out "+tt.def) {
				t.Errorf("%s --out %q: exit %d, output %q; want exit 2 suggesting %s", tt.args[0], out, code, text, tt.def)
			}
			if out != "" {
				if _, err := os.Stat(out); err == nil {
					os.Remove(out)
					t.Errorf("%s --out %q made a folder named by spaces", tt.args[0], out)
				}
			}
		}
	}
}

// perfFolder returns a folder holding a perf run's results.json.
func perfFolder(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := results.Write(dir, &results.File{Tool: "lockbench test", Profile: "perf", Started: "2026-01-01T00:00:00Z"}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestPerfChecksBeforeReplacing: perf checks its options and finds
// redis-server and redis-benchmark before it removes an earlier perf run.
func TestPerfChecksBeforeReplacing(t *testing.T) {
	for _, tt := range []struct {
		name string
		env  []string
		args []string
		code int
		want string
	}{
		{"negative sweep duration", nil, []string{"--sweep", "--sweep-duration", "-1s"}, 2, "--sweep-duration"},
		{"no redis binaries", []string{"PATH=" + t.TempDir()}, nil, 3, "not found on PATH"},
	} {
		dir := perfFolder(t)
		code, out := run(t, tt.env, append(append([]string{"perf", "--clients", "1"}, tt.args...), "--out", dir)...)
		if code != tt.code || !strings.Contains(out, tt.want) {
			t.Errorf("%s: exit %d, output %q; want exit %d and %q", tt.name, code, out, tt.code, tt.want)
		}
		if _, err := os.Stat(filepath.Join(dir, results.FileName)); err != nil {
			t.Errorf("%s: the earlier perf run was removed: %v", tt.name, err)
		}
	}
}

// TestRunIntoPerfFolderWording: run refuses a perf folder naming the
// profile, not calling it a bench.
func TestRunIntoPerfFolderWording(t *testing.T) {
	code, out := run(t, nil, "run", "--strategy", "token-lua", "--out", perfFolder(t))
	if code != 2 || !strings.Contains(out, "holds the results of profile perf") || strings.Contains(out, "a bench") {
		t.Errorf("exit %d, output %q; want exit 2 and \"holds the results of profile perf\"", code, out)
	}
}

// TestInterruptedBenchBeforeAnyRun: a bench interrupted before its first
// run finished still names the INCOMPLETE report it wrote, on stderr and
// in the --json error object.
func TestInterruptedBenchBeforeAnyRun(t *testing.T) {
	out := t.TempDir()
	text, stdout, err := signalAt(t, "[1/3]", syscall.SIGTERM, "bench", "-v", "--json", "--strategies", "token-lua", "--scenarios", "baseline", "--repeat", "3", "--out", out)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("exit %v, want 130:\n%s", err, text)
	}
	report := filepath.Join(out, results.ReportMarkdown)
	if !strings.Contains(text, "partial results (stopped after 0 of 3 runs") || !strings.Contains(text, report) {
		t.Errorf("stderr does not name the partial report %s:\n%s", report, text)
	}
	var je jsonError
	if err := json.Unmarshal([]byte(stdout), &je); err != nil || je.PartialReport != report || je.ExitCode != 130 {
		t.Errorf("--json error object %q (%v): want partial_report %s and exit_code 130", stdout, err, report)
	}
}

// TestInterruptedHistoryReplaced: check notes an interrupted history
// (Ctrl-C or SIGTERM), and a later run into its folder removes it.
func TestInterruptedHistoryReplaced(t *testing.T) {
	dir := t.TempDir()
	args := []string{"run", "--strategy", "token-lua", "--ttl", "50ms", "--duration", "200ms", "--clients", "2", "--out", dir}
	if code, out := run(t, nil, args...); code != 0 {
		t.Fatalf("run: exit %d: %s", code, out)
	}
	data, err := os.ReadFile(filepath.Join(dir, "histories", "token-lua-baseline-1.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	end := strings.TrimSuffix(lines[len(lines)-1], "}") + `,"interrupted":true}`
	stale := filepath.Join(dir, "histories", "token-lua-baseline-7.jsonl")
	if err := os.WriteFile(stale, []byte(strings.Join(append(lines[:len(lines)-1], end), "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mine := filepath.Join(dir, "histories", "notes.txt")
	if err := os.WriteFile(mine, []byte(end+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out := run(t, nil, "check", stale); !strings.Contains(out, "interrupted (Ctrl-C or SIGTERM)") {
		t.Errorf("check of an interrupted history: exit %d, output %q; want the note naming Ctrl-C or SIGTERM", code, out)
	}
	code, out := run(t, nil, args...)
	if code != 0 || !strings.Contains(out, "interrupted runs") {
		t.Errorf("second run: exit %d, output %q; want a note on the interrupted history removed", code, out)
	}
	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the interrupted history is still there: %v", err)
	}
	if _, err := os.Stat(mine); err != nil {
		t.Errorf("a file that is not a history was removed: %v", err)
	}
}
