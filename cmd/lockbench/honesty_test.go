package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lockbench/lockbench/results"
)

// shellWords returns the words a POSIX shell makes of line.
func shellWords(t *testing.T, line string) []string {
	t.Helper()
	out, err := exec.Command("sh", "-c", "printf '%s\\n' "+line).Output()
	if err != nil {
		t.Fatalf("sh of %q: %v", line, err)
	}
	return strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
}

// TestReproduceCommandsQuoted: a --out with a space and a quote is written
// into results.json (the file's command and each run's) and report.md so
// that a shell gives it back as one argument; plain arguments stay bare.
func TestReproduceCommandsQuoted(t *testing.T) {
	out := filepath.Join(t.TempDir(), "sp ace", "o'ut")
	for _, args := range [][]string{
		{"run", "--strategy", "token-lua", "--ttl", "50ms", "--duration", "200ms", "--clients", "2", "--repeat", "2", "--out", out, "--quiet"},
		{"bench", "--strategies", "token-lua", "--scenarios", "baseline", "--out", out, "--quiet"},
	} {
		if code, text := run(t, nil, args...); code != 0 {
			t.Fatalf("%v: exit %d:\n%s", args, code, text)
		}
		f, err := results.Load(filepath.Join(out, results.FileName))
		if err != nil {
			t.Fatal(err)
		}
		md, err := os.ReadFile(filepath.Join(out, results.ReportMarkdown))
		if err != nil {
			t.Fatal(err)
		}
		cmds := []string{f.Command}
		for _, r := range f.Runs {
			cmds = append(cmds, r.Command)
		}
		for _, c := range cmds {
			if !strings.HasPrefix(c, "lockbench ") {
				t.Fatalf("command %q does not start with lockbench", c)
			}
			words := shellWords(t, strings.TrimPrefix(c, "lockbench "))
			// run --repeat: the per-seed commands write to OUT/seed-S.
			want := out
			if args[0] == "run" && c != f.Command {
				want = filepath.Join(out, "seed-"+words[len(words)-3])
			}
			if args[0] == "run" && !containsWord(words, want) {
				t.Errorf("%s: command %q: the shell splits it into %q, want %q as one word", args[0], c, words, want)
			}
			if !strings.Contains(c, "--ttl 50ms") && args[0] == "run" {
				t.Errorf("plain arguments were quoted: %q", c)
			}
		}
		if args[0] == "bench" && !containsWord(shellWords(t, strings.TrimPrefix(f.Command, "lockbench ")), out) {
			t.Errorf("bench command %q does not give back --out %q", f.Command, out)
		}
		if !strings.Contains(string(md), f.Command) {
			t.Errorf("report.md does not hold the quoted command %q", f.Command)
		}
	}
}

func containsWord(words []string, w string) bool {
	for _, x := range words {
		if x == w {
			return true
		}
	}
	return false
}

// TestAfterSignal: once the signal context is cancelled, a command that
// finished anyway (or with an unexpected verdict) exits 130 with the
// interrupted message saying its results were written; without a signal
// the outcome is unchanged.
func TestAfterSignal(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tt := range []struct {
		name     string
		ctx      context.Context
		err      error
		code     int
		contains string
	}{
		{"no signal, ok", context.Background(), nil, 0, ""},
		{"no signal, unexpected", context.Background(), errUnexpected, 1, "unexpected"},
		{"signal after the work", cancelled, nil, 130, "after the workload had ended"},
		{"signal, then an unexpected verdict", cancelled, fmt.Errorf("%w: x", errUnexpected), 130, "results were written"},
		{"signal during the work", cancelled, context.Canceled, 130, "interrupted"},
		{"signal, library error", cancelled, errors.New("docker: cut short"), 130, "interrupted"},
	} {
		code, msg := exitCode(afterSignal(tt.ctx, tt.err), false)
		if code != tt.code || !strings.Contains(msg, tt.contains) {
			t.Errorf("%s: exit %d, %q; want %d and %q", tt.name, code, msg, tt.code, tt.contains)
		}
	}
}

// TestInterruptDuringChecks: SIGINT after the workload ended (its servers
// are stopped before the checks) still exits 130.
func TestInterruptDuringChecks(t *testing.T) {
	tmp := t.TempDir()
	cmd := exec.Command(bin, "run", "--strategy", "token-lua", "--clients", "64", "--keys", "64", "--retry", "spin",
		"--duration", "1500ms", "--out", t.TempDir())
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	deadline := time.Now().Add(10 * time.Second)
	for len(redisUnder(t, tmp)) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	for len(redisUnder(t, tmp)) > 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGINT)
	var err error
	select {
	case err = <-done:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatal("no exit 60 s after SIGINT")
	}
	var ee *exec.ExitError
	switch {
	case err == nil && !strings.Contains(out.String(), "interrupted"):
		t.Skipf("the run ended before the signal arrived:\n%s", out.String())
	case !errors.As(err, &ee) || ee.ExitCode() != 130 || !strings.Contains(out.String(), "after the workload had ended"):
		t.Errorf("SIGINT during the checks: %v, want exit 130 saying the results were written:\n%s", err, out.String())
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
			!strings.Contains(text, "1 run, 1 as expected, 0 unexpected; not written") {
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

// TestBenchSkippedPairsSaid: every pair a bench skips gets an n/a line
// with its reason, whatever made it n/a (the verdict table or the
// backend), and a named scenario none of whose pairs can run is refused
// (exit 2) naming it, as a named strategy that cannot run is.
func TestBenchSkippedPairsSaid(t *testing.T) {
	addr, _ := startRedis(t)
	for _, tt := range []struct {
		name string
		args []string
		want []string
	}{
		{"n/a by the verdict table", []string{"--scenarios", "redlock-clock-jump", "--strategies", "token-lua"},
			[]string{"n/a token-lua/redlock-clock-jump: not applicable: ", "--scenarios redlock-clock-jump: none of the selected strategies can run it"}},
		{"n/a on the external backend", []string{"--backend", "external", "--redis-addrs", addr, "--scenarios", "baseline,node-restart"},
			[]string{"n/a node-restart for naive, set-nx-px, token-lua, watchdog, reentrant, fenced, redsync-single, redislock: scenario node-restart cannot run on the external backend", "--scenarios node-restart: none of the selected strategies can run it on the external backend"}},
	} {
		out := t.TempDir()
		code, text := run(t, nil, append(append([]string{"bench"}, tt.args...), "--out", out)...)
		if code != 2 {
			t.Errorf("%s: exit %d, want 2:\n%s", tt.name, code, text)
		}
		for _, w := range tt.want {
			if !strings.Contains(text, w) {
				t.Errorf("%s: output lacks %q:\n%s", tt.name, w, text)
			}
		}
		if _, err := os.Stat(filepath.Join(out, results.FileName)); err == nil {
			t.Errorf("%s: a refused bench wrote results", tt.name)
		}
	}
}

// TestLongUserCSNotGated: a workload whose own critical sections reach
// TTL/2 (--ttl 20ms --cs-min 10ms) or exceed the TTL (--cs-min 30ms;
// the reason says which) breaks the verdict table's assumption
// for token-lua: the run is reported at-risk, not gated, with the reason,
// and lockbench check of its history agrees.
func TestLongUserCSNotGated(t *testing.T) {
	tests := []struct {
		csMin, why string
	}{
		{"30ms", "critical sections of up to 30ms exceed the TTL (TTL 20ms"},
		{"10ms", "critical sections of up to 10ms reach TTL/2 or more (TTL 20ms"},
	}
	for _, tt := range tests {
		t.Run(tt.csMin, func(t *testing.T) {
			out := t.TempDir()
			code, text := run(t, nil, "run", "--strategy", "token-lua", "--ttl", "20ms", "--cs-min", tt.csMin,
				"--duration", "300ms", "--clients", "4", "--out", out)
			if code != 0 || !strings.Contains(text, "expected at-risk") || !strings.Contains(text, "not gated: "+tt.why) {
				t.Fatalf("run: exit %d, output:\n%s\nwant exit 0, at-risk and %q", code, text, tt.why)
			}
			code, text = run(t, nil, "check", filepath.Join(out, "histories", "token-lua-baseline-1.jsonl"))
			if code != 0 || !strings.Contains(text, "expected at-risk ("+tt.why) {
				t.Errorf("check: exit %d, output:\n%s\nwant exit 0 and the same reason", code, text)
			}
		})
	}
}
