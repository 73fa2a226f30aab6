package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

var bin string

// TestMain builds the lockbench binary once; the tests run it as a user would.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "lockbench-cmd-")
	if err != nil {
		panic(err)
	}
	bin = filepath.Join(dir, "lockbench")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// run runs lockbench with args and env (appended to os.Environ unless
// noEnv), returning its exit code and combined output.
func run(t *testing.T, env []string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, out.String()
	case errors.As(err, &ee):
		return ee.ExitCode(), out.String()
	}
	t.Fatalf("run %v: %v", args, err)
	return -1, ""
}

// redisUnder returns the redis-server processes whose working folder is
// under marker (lockbench's cluster folders are temp folders).
func redisUnder(t *testing.T, marker string) []string {
	t.Helper()
	return serversUnder("redis-server", marker)
}

func TestUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--strategy", "nope"}, `unknown strategy "nope" (valid: naive, set-nx-px, token-lua`},
		{[]string{"run", "--strategy", "token-lua", "--scenario", "nope"}, `unknown scenario "nope" (valid: baseline`},
		{[]string{"run"}, "--strategy is required"},
		{[]string{"run", "--strategy", "token-lua", "--ttl", "0s"}, "must be positive"},
		{[]string{"run", "--strategy", "token-lua", "--retry", "sometimes"}, "bad retry policy"},
		{[]string{"run", "--strategy", "token-lua", "--fencing", "maybe"}, "unknown fencing mode"},
		{[]string{"run", "--strategy", "token-lua", "--cs-tail", "2"}, "--cs-tail 2"},
		{[]string{"run", "--strategy", "token-lua", "--bogus"}, "unknown flag: --bogus"},
		{[]string{"run", "--strategy", "token-lua", "--clients", "100000"}, "give 1 to 10000 clients (--clients)"},
		{[]string{"run", "--strategy", "token-lua", "--backend", "process", "--clock-skew", "50ms"}, "--clock-skew goes with --backend external"},
		{[]string{"run", "--strategy", "token-lua", "--backend", "external", "--redis-addrs", "127.0.0.1:1", "--clock-skew", "-50ms"}, "give the other lockbench --clock-skew 50ms"},
		{[]string{"bench", "--profile", "huge"}, `unknown profile "huge" (valid: ci, full, cost, adapters, consensus-seeds, verdicts-sweep)`},
		{[]string{"check", "/no/such/file.jsonl"}, "/no/such/file.jsonl does not exist"},
		{[]string{"report", "/no/such/dir"}, "/no/such/dir does not exist"},
	} {
		code, out := run(t, nil, tc.args...)
		if code != 2 || !strings.Contains(out, tc.want) {
			t.Errorf("lockbench %s: exit %d, output %q; want exit 2 and %q", strings.Join(tc.args, " "), code, out, tc.want)
		}
	}
}

func TestNoRedisServerIsEnvironmentError(t *testing.T) {
	empty := t.TempDir()
	code, out := run(t, []string{"PATH=" + empty}, "run", "--strategy", "token-lua", "--duration", "200ms", "--out", t.TempDir())
	if code != 3 || !strings.Contains(out, "apt-get install redis-server") {
		t.Fatalf("exit %d, output %q; want exit 3 and an install hint", code, out)
	}
	// Besides the progress line ("running ..." on stderr, not a terminal).
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if !strings.HasPrefix(l, "running ") {
			lines = append(lines, l)
		}
	}
	if len(lines) != 1 {
		t.Errorf("want a one-line error, got %q", out)
	}
}

// TestRunThenCheck runs a canary, then re-checks its saved history offline:
// the verdicts must agree; a corrupt line must be named.
func TestRunThenCheck(t *testing.T) {
	out := t.TempDir()
	code, text := run(t, nil, "run", "--strategy", "token-lua", "--scenario", "gc-pause", "--ttl", "50ms", "--duration", "400ms", "--clients", "8", "--out", out)
	if code != 0 || !strings.Contains(text, "exclusion violated, resource violated") {
		t.Fatalf("run: exit %d, output %q", code, text)
	}
	hist := filepath.Join(out, "histories", "token-lua-gc-pause-1.jsonl")
	code, text = run(t, nil, "check", hist)
	if code != 0 || !strings.Contains(text, "exclusion  violated") || !strings.Contains(text, "resource   violated") {
		t.Fatalf("check: exit %d, output %q", code, text)
	}
	if _, err := os.Stat(filepath.Join(out, "histories", "token-lua-gc-pause-1.html")); err != nil {
		t.Errorf("no porcupine visualisation next to the history: %v", err)
	}

	b, err := os.ReadFile(hist)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	lines[4] = `{"client":1,"kind":"acquire",` // truncated JSON on line 5
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	os.WriteFile(bad, []byte(strings.Join(lines, "\n")), 0o644)
	code, text = run(t, nil, "check", bad)
	if code != 2 || !strings.Contains(text, "line 5") {
		t.Errorf("corrupt history: exit %d, output %q; want exit 2 naming line 5", code, text)
	}
}

// TestInterruptLeavesNoRedis sends SIGINT to a running bench and checks that
// every redis-server it started is gone and the exit code is 130.
func TestInterruptLeavesNoRedis(t *testing.T) {
	tmp := t.TempDir()
	cmd := exec.Command(bin, "run", "--strategy", "redlock", "--duration", "30s", "--out", t.TempDir())
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(redisUnder(t, tmp)) < 5 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := len(redisUnder(t, tmp)); n < 5 {
		cmd.Process.Kill()
		t.Fatalf("only %d redis-server processes started", n)
	}
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Errorf("exit after SIGINT: %v, want 130", err)
	}
	if left := redisUnder(t, tmp); len(left) > 0 {
		t.Errorf("redis-server left running after SIGINT: %v", left)
	}
}

// TestKilledLockbenchLeavesNoRedis kills lockbench with SIGKILL (no handler
// runs): Pdeathsig must take its redis-servers down with it.
func TestKilledLockbenchLeavesNoRedis(t *testing.T) {
	tmp := t.TempDir()
	cmd := exec.Command(bin, "run", "--strategy", "token-lua", "--duration", "30s", "--out", t.TempDir())
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(redisUnder(t, tmp)) < 1 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Kill()
	cmd.Wait()
	deadline = time.Now().Add(5 * time.Second)
	for len(redisUnder(t, tmp)) > 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if left := redisUnder(t, tmp); len(left) > 0 {
		t.Errorf("redis-server left running after SIGKILL of lockbench: %v", left)
	}
}

func TestList(t *testing.T) {
	code, out := run(t, nil, "list")
	for _, want := range []string{"token-lua", "redlock", "gc-pause", "crash-between", "ci"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("list: exit %d, missing %q in %q", code, want, out)
		}
	}
}

// TestCustomPolicyIsNotGated: a run that switches off the strategy's own
// usage policy is reported, not judged against the verdict table.
func TestCustomPolicyIsNotGated(t *testing.T) {
	code, out := run(t, nil, "run", "--strategy", "redlock", "--scenario", "long-cs", "--policy", "none",
		"--ttl", "50ms", "--duration", "400ms", "--clients", "8", "--out", t.TempDir())
	if code != 0 || !strings.Contains(out, "expected at-risk") || !strings.Contains(out, "not gated: custom usage policy") {
		t.Fatalf("exit %d, output %q; want exit 0, at-risk, not gated", code, out)
	}
}

// TestCheckJSONHasFigures: check --json fills the workload figures from the history.
func TestCheckJSONHasFigures(t *testing.T) {
	dir := t.TempDir()
	if code, out := run(t, nil, "run", "--strategy", "token-lua", "--ttl", "1s", "--cs-min", "5ms", "--retry", "exponential:1ms:10ms", "--duration", "300ms", "--clients", "4", "--out", dir); code != 0 {
		t.Fatalf("run: exit %d: %s", code, out)
	}
	code, out := run(t, nil, "check", "--json", filepath.Join(dir, "histories", "token-lua-baseline-1.jsonl"))
	// The run's figures, not a window's: on a busy machine a window of a
	// 300 ms run may hold no grant.
	var got struct {
		Grants int `json:"grants"`
		Config struct {
			Clients int `json:"clients"`
		} `json:"config"`
	}
	if err := json.Unmarshal([]byte(out), &got); code != 0 || err != nil || got.Grants == 0 || got.Config.Clients != 4 {
		t.Errorf("check --json: exit %d, %v, grants %d, clients %d; output %s", code, err, got.Grants, got.Config.Clients, out)
	}
}

func TestMatrixListsAllColumns(t *testing.T) {
	code, out := run(t, nil, "list", "--matrix")
	if code != 0 || !strings.Contains(out, "DURING FAULTS") || !strings.Contains(out, "FENCING") {
		t.Errorf("list --matrix: exit %d, output lacks columns", code)
	}
	if code, _ := run(t, nil, "list", "--matrix", "--markdown"); code != 2 {
		t.Errorf("--matrix --markdown together: exit %d, want 2", code)
	}
}

// TestInterruptedBenchNamesPartialReport: a bench interrupted after its
// first run exits 130 and names the partial (INCOMPLETE) report it wrote.
func TestInterruptedBenchNamesPartialReport(t *testing.T) {
	out := t.TempDir()
	text, _, err := signalAt(t, "[2/", syscall.SIGINT, "bench", "-v", "--strategies", "token-lua", "--scenarios", "baseline", "--repeat", "5", "--out", out)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Errorf("exit after SIGINT: %v, want 130", err)
	}
	want := "partial results (stopped after 1 of " // of the 5 runs and the profile's cost runs
	report := filepath.Join(out, "report.md")
	if !strings.Contains(text, want) || !strings.Contains(text, report) {
		t.Errorf("stderr lacks %q and %s:\n%s", want, report, text)
	}
	if _, err := os.Stat(report); err != nil {
		t.Errorf("partial report: %v", err)
	}
}

// signalAt runs lockbench with args, sends it sig once a line of its
// stderr starts with prefix (a progress line, with -v) and returns its
// stderr, its stdout and Wait's error. The test fails when no such line
// came.
func signalAt(t *testing.T, prefix string, sig os.Signal, args ...string) (stderrText, stdoutText string, err error) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var stdout strings.Builder
	cmd.Stdout = &stdout
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	sc := bufio.NewScanner(stderr)
	signalled := false
	for sc.Scan() {
		text.WriteString(sc.Text() + "\n")
		if !signalled && strings.HasPrefix(sc.Text(), prefix) {
			cmd.Process.Signal(sig)
			signalled = true
		}
	}
	err = cmd.Wait()
	if !signalled {
		t.Fatalf("no stderr line started with %q:\n%s", prefix, text.String())
	}
	return text.String(), stdout.String(), err
}
