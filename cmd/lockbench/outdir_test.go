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

	"github.com/lockbench/lockbench/perf"
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

// perfFolder returns a folder holding a perf run's perf.json.
func perfFolder(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := perf.Write(dir, &perf.File{Tool: "lockbench test", Started: "2026-01-01T00:00:00Z"}); err != nil {
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
		if _, err := os.Stat(filepath.Join(dir, perf.FileName)); err != nil {
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
	text, stdout, err := signalAt(t, "[1/", syscall.SIGTERM, "bench", "-v", "--json", "--strategies", "token-lua", "--scenarios", "baseline", "--repeat", "3", "--out", out)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("exit %v, want 130:\n%s", err, text)
	}
	report := filepath.Join(out, results.ReportMarkdown)
	if !strings.Contains(text, "partial results (stopped after 0 of ") || !strings.Contains(text, report) {
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
	args := []string{"run", "--strategy", "token-lua", "--ttl", "1s", "--cs-min", "5ms", "--retry", "exponential:1ms:10ms", "--duration", "200ms", "--clients", "2", "--out", dir}
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

// TestOutReplacesEarlierRun: a run into a folder that holds an earlier run
// says so and leaves only its own history there; a refused run (bad input)
// leaves the earlier run in place.
func TestOutReplacesEarlierRun(t *testing.T) {
	out := t.TempDir()
	common := []string{"--ttl", "1s", "--cs-min", "5ms", "--retry", "exponential:1ms:10ms", "--duration", "200ms", "--clients", "2", "--out", out}
	if code, text := run(t, nil, append([]string{"run", "--strategy", "token-lua"}, common...)...); code != 0 {
		t.Fatalf("first run: exit %d:\n%s", code, text)
	}
	first := filepath.Join(out, "histories", "token-lua-baseline-1.jsonl")
	if _, err := os.Stat(first); err != nil {
		t.Fatalf("first run's history: %v", err)
	}
	if code, text := run(t, nil, append([]string{"run", "--strategy", "naive", "--backend", "external", "--redis-addrs", "127.0.0.1:1"}, common...)...); code == 0 {
		t.Fatalf("run against an unreachable server: exit 0:\n%s", text)
	}
	if _, err := os.Stat(first); err != nil {
		t.Fatalf("a refused run removed the earlier run's history: %v", err)
	}
	code, text := run(t, nil, append([]string{"run", "--strategy", "naive"}, common...)...)
	if code != 0 {
		t.Fatalf("second run: exit %d:\n%s", code, text)
	}
	if !strings.Contains(text, "held an earlier run") {
		t.Errorf("second run did not say it replaced the earlier run:\n%s", text)
	}
	entries, err := os.ReadDir(filepath.Join(out, "histories"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if len(names) != 1 || names[0] != "naive-baseline-1.jsonl" {
		t.Errorf("histories after the second run: %v, want only naive-baseline-1.jsonl", names)
	}
}

// TestMissingRedisServerKeepsEarlierRun: with no redis-server to start,
// run and bench exit 3 before touching --out: an earlier run there stays.
func TestMissingRedisServerKeepsEarlierRun(t *testing.T) {
	out := t.TempDir()
	if code, text := run(t, nil, "run", "--strategy", "token-lua", "--ttl", "1s", "--cs-min", "5ms", "--retry", "exponential:1ms:10ms", "--duration", "200ms", "--clients", "2", "--out", out); code != 0 {
		t.Fatalf("first run: exit %d:\n%s", code, text)
	}
	for _, args := range [][]string{
		{"run", "--strategy", "fenced", "--backend", "process", "--out", out},
		{"bench", "--strategies", "fenced", "--scenarios", "baseline", "--backend", "process", "--out", out},
	} {
		code, text := run(t, []string{"PATH=/nonexistent"}, args...)
		if code != 3 || !strings.Contains(text, "redis-server not found on PATH") || strings.Contains(text, "held an earlier run") {
			t.Errorf("%s without redis-server: exit %d, output %q; want exit 3 before replacing anything", args[0], code, text)
		}
		if _, err := os.Stat(filepath.Join(out, "histories", "token-lua-baseline-1.jsonl")); err != nil {
			t.Errorf("%s without redis-server removed the earlier run's history: %v", args[0], err)
		}
	}
}

// TestOutputsNotWritten: results that cannot be written after the runs (a
// file named plots, a folder named results.json) exit 3 naming the folder
// and the fix, after the verdict of the checks that ran; so does report.
func TestOutputsNotWritten(t *testing.T) {
	plotsFile := func(t *testing.T) string {
		d := t.TempDir()
		if err := os.WriteFile(filepath.Join(d, "plots"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		return d
	}
	resultsDir := func(t *testing.T) string {
		d := t.TempDir()
		if err := os.Mkdir(filepath.Join(d, "results.json"), 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	short := []string{"--ttl", "50ms", "--duration", "200ms", "--clients", "2", "--quiet"}
	for _, tt := range []struct {
		name string
		dir  func(*testing.T) string
		args []string
	}{
		{"run, plots is a file", plotsFile, append([]string{"run", "--strategy", "token-lua"}, short...)},
		{"run, results.json is a folder", resultsDir, append([]string{"run", "--strategy", "token-lua"}, short...)},
		{"bench, results.json is a folder", resultsDir, []string{"bench", "--strategies", "token-lua", "--scenarios", "baseline", "--quiet"}},
	} {
		d := tt.dir(t)
		code, text := run(t, nil, append(tt.args, "--out", d)...)
		if code != 3 || !strings.Contains(text, "cannot write the results into "+d) || !strings.Contains(text, "choose another --out") ||
			!strings.Contains(text, "1 run, 1 as expected, 0 unexpected;") || !strings.Contains(text, "; not written") {
			t.Errorf("%s: exit %d, output:\n%s\nwant exit 3, the verdict, the folder and the fix", tt.name, code, text)
		}
	}
	d := t.TempDir()
	if code, text := run(t, nil, append([]string{"run", "--strategy", "token-lua", "--out", d}, short...)...); code != 0 {
		t.Fatalf("run: exit %d: %s", code, text)
	}
	if err := os.RemoveAll(filepath.Join(d, "plots")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d, "plots"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	code, text := run(t, nil, "report", d)
	if code != 3 || !strings.Contains(text, "cannot write the results into "+d) || !strings.Contains(text, "run lockbench report on the copy") {
		t.Errorf("report with a file named plots: exit %d, output:\n%s\nwant exit 3, the folder and the fix", code, text)
	}
}
