package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/report"
)

// runSplit runs lockbench with args, stdout and stderr apart (both pipes:
// not a terminal), and returns the exit code and both outputs.
func runSplit(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, out.String(), errb.String()
	case errors.As(err, &ee):
		return ee.ExitCode(), out.String(), errb.String()
	}
	t.Fatalf("run %v: %v", args, err)
	return -1, "", ""
}

var verdictLine = regexp.MustCompile(`^\d+ runs?, \d+ as expected, \d+ unexpected(?: \([^)]*\))?(?:; \d+ of \d+ measured on a busy machine \(their costs are not comparable\))?; report: \S+report\.md \(also index\.html\)\n$`)

// decodeOutcome parses stdout as exactly one JSON Outcome and nothing else.
func decodeOutcome(t *testing.T, stdout string) report.Outcome {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.DisallowUnknownFields()
	var o report.Outcome
	if err := dec.Decode(&o); err != nil {
		t.Fatalf("stdout is not an Outcome: %v\n%s", err, stdout)
	}
	if rest := strings.TrimSpace(stdout[dec.InputOffset():]); rest != "" {
		t.Fatalf("stdout has more than the JSON: %q", rest)
	}
	return o
}

// TestRunOutputModes: lockbench run without a terminal prints a progress
// line on stderr (not nothing) and the verdicts on stdout; --quiet only the
// verdict line; --json only the summary as JSON.
func TestRunOutputModes(t *testing.T) {
	args := []string{"run", "--strategy", "token-lua", "--ttl", "1s", "--cs-min", "5ms", "--retry", "exponential:1ms:10ms", "--duration", "300ms", "--clients", "4"}
	code, stdout, stderr := runSplit(t, append(args, "--out", t.TempDir())...)
	if code != 0 || !strings.Contains(stderr, "running token-lua/baseline seed 1") ||
		!strings.Contains(stdout, "token-lua/baseline seed 1: expected must-hold") || !strings.Contains(stdout, "report: ") {
		t.Errorf("default: exit %d\nstdout %q\nstderr %q", code, stdout, stderr)
	}

	code, stdout, stderr = runSplit(t, append(args, "--out", t.TempDir(), "--quiet")...)
	if code != 0 || !verdictLine.MatchString(stdout) || stderr != "" {
		t.Errorf("--quiet: exit %d\nstdout %q (want one verdict line)\nstderr %q (want nothing)", code, stdout, stderr)
	}

	dir := t.TempDir()
	code, stdout, _ = runSplit(t, append(args, "--out", dir, "--json")...)
	if code != 0 {
		t.Fatalf("--json: exit %d", code)
	}
	o := decodeOutcome(t, stdout)
	if !o.OK || o.Runs != 1 || len(o.Cells) != 1 || o.Cells[0].Strategy != "token-lua" || o.Cells[0].Verdict != "as-expected" ||
		o.Paths.HTML != dir+"/index.html" || o.Profile != "run" {
		t.Errorf("--json summary: %+v", o)
	}
	if _, err := os.Stat(o.Paths.Results); err != nil {
		t.Errorf("the summary's results path: %v", err)
	}

	if code, _, stderr := runSplit(t, append(args, "--quiet", "--verbose")...); code != 2 {
		t.Errorf("--quiet --verbose: exit %d, want 2 (stderr %q)", code, stderr)
	}
}

// TestBenchOutputModes: lockbench bench without a terminal prints one line
// per run on stderr; on a terminal (script(1) gives it one) a progress bar
// instead; --json prints only the summary on stdout; --quiet only the
// verdict line.
func TestBenchOutputModes(t *testing.T) {
	args := []string{"bench", "--strategies", "token-lua", "--scenarios", "baseline,gc-pause"}
	code, stdout, stderr := runSplit(t, append(args, "--out", t.TempDir())...)
	if code != 0 || !strings.Contains(stderr, "] token-lua/baseline seed 1\n") || !strings.Contains(stderr, "] token-lua/gc-pause seed 1\n") ||
		!verdictLine.MatchString(stdout) {
		t.Errorf("no terminal: exit %d\nstdout %q\nstderr %q", code, stdout, stderr)
	}

	dir := t.TempDir()
	code, stdout, stderr = runSplit(t, append(args, "--out", dir, "--json", "--quiet")...)
	if code != 0 || stderr != "" {
		t.Fatalf("--json --quiet: exit %d, stderr %q (want nothing)", code, stderr)
	}
	o := decodeOutcome(t, stdout)
	if !o.OK || o.Runs != 2 || o.AsExpected != 2 || len(o.Cells) != 2 || o.Cells[1].Scenario != "gc-pause" || o.Cells[1].Expected != "must-break" ||
		o.Cells[1].Observed["violated"] != 1 || o.Paths.Markdown != dir+"/report.md" {
		t.Errorf("--json summary: %+v", o)
	}

	script, err := exec.LookPath("script")
	if err != nil {
		t.Fatal("script(1) (util-linux, Debian package bsdutils) is needed to give lockbench a terminal")
	}
	cmdline := bin + " " + strings.Join(append(args[:len(args)-1], "baseline", "--out", t.TempDir()), " ")
	tty, err := exec.Command(script, "-qec", cmdline, "/dev/null").CombinedOutput()
	if err != nil {
		t.Fatalf("bench on a terminal: %v\n%s", err, tty)
	}
	if !regexp.MustCompile(`\(\d+/\d+\)`).Match(tty) || regexp.MustCompile(`\[\d+/\d+\] token-lua`).Match(tty) {
		t.Errorf("on a terminal: want a progress bar, not lines; got %q", tty)
	}
}
