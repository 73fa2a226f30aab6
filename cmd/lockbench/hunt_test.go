package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/hunt"
	"github.com/lockbench/lockbench/internal/leakcheck"
)

// TestHuntFindsMutant: a short real hunt of a mutant of the zoo (a
// reentrant lock whose acquire script runs twice after a lost reply)
// draws lost replies only, finds the reentrancy surprise, shrinks it to
// one lost reply, and the schedule file it writes replays it: lockbench
// run --schedule exits 1 on the same check. No hand-written scenario
// names the fault.
//
// It takes 40-50 s on a busy 2-core machine (the hunt itself about 35 s:
// ~20 runs of 2 s), more than make test's budget allows for one test, so
// it runs only with LOCKBENCH_HUNT=1:
//
//	LOCKBENCH_HUNT=1 go test -run TestHuntFindsMutant ./cmd/lockbench
func TestHuntFindsMutant(t *testing.T) {
	if os.Getenv("LOCKBENCH_HUNT") == "" {
		t.Skip("a real hunt of 35 s: set LOCKBENCH_HUNT=1 to run it")
	}
	leakcheck.AtEnd(t, append(leakcheck.Servers, "lockbench-mutant")...)
	dir := t.TempDir()
	adapter := filepath.Join(dir, "lockbench-mutant")
	if out, err := exec.Command("go", "build", "-o", adapter, "../../mutants/testdata/adapter").CombinedOutput(); err != nil {
		t.Fatalf("go build the zoo's adapter: %v\n%s", err, out)
	}
	strategy := "exec:" + adapter + " --lock reentrant --bug reentrant-retry-counts-twice"
	out := filepath.Join(dir, "hunt")
	start := time.Now()
	code, text := run(t, nil, "hunt", "--strategy", strategy, "--primitives", "lost-reply", "--op-timeout", "1s",
		"--duration", "1s", "--budget", "40s", "--stop-after", "1", "--seed", "1", "--out", out)
	t.Logf("hunt took %v", time.Since(start).Round(time.Second))
	if code != 1 || !strings.Contains(text, "SURPRISE 1: reentrancy must hold") {
		t.Fatalf("hunt: exit %d, want 1 with a reentrancy surprise:\n%s", code, text)
	}
	rep, err := hunt.LoadReport(filepath.Join(out, hunt.ReportJSON))
	if err != nil {
		t.Fatal(err)
	}
	s := rep.Surprises[0]
	if s.Check != "reentrancy" || len(s.Minimal.Schedule.Steps) != 1 || s.Minimal.Schedule.Steps[0].Fault != "lost-reply" || s.Tally.Tried == 0 {
		t.Fatalf("surprise %+v: want reentrancy shrunk to one lost reply", s)
	}
	for _, f := range []string{hunt.ReportMarkdown, hunt.ReportHTML, s.ScheduleFile} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
	if !strings.Contains(s.Command, "--schedule") {
		t.Fatalf("replay command %q", s.Command)
	}
	replay := filepath.Join(dir, "replay")
	code, text = run(t, nil, "run", "--strategy", strategy, "--schedule", filepath.Join(out, s.ScheduleFile), "--clients", "2",
		"--ttl", "200ms", "--op-timeout", "1s", "--duration", "1s", "--seed", "7", "--out", replay)
	if code != 1 || !strings.Contains(text, "reentrancy must hold but is violated") {
		t.Errorf("replay of %s: exit %d:\n%s", s.ScheduleFile, code, text)
	}
}
