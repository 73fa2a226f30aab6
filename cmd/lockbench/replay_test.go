package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/results"
)

// TestRunSchedule: lockbench run --schedule replays a schedule file: each
// step is a nemesis window named after its primitive and step, the run
// is judged by the schedule's expectation (a pause before the write puts
// exclusion at risk: no gate), and lockbench check of the history agrees.
func TestRunSchedule(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "replay.json")
	os.WriteFile(file, []byte(`{"schedule": 1, "name": "replay", "steps": [
  {"fault": "lost-reply", "target": "holder", "on": "before-acquire", "depth": 2, "at": 1},
  {"fault": "client-pause", "target": "holder", "on": "before-write", "with": 1, "for": 2}
]}`), 0o644)
	out := filepath.Join(dir, "out")
	code, text := run(t, nil, "run", "--strategy", "reentrant", "--schedule", file, "--reentrancy", "2",
		"--ttl", "100ms", "--duration", "1s", "--clients", "4", "--out", out)
	if code != 0 {
		t.Fatalf("run --schedule: exit %d:\n%s", code, text)
	}
	f, err := results.Load(filepath.Join(out, results.FileName))
	if err != nil {
		t.Fatal(err)
	}
	r := f.Runs[0]
	if r.Scenario != "schedule:replay" || r.ExpectedChecks["exclusion"] != "at-risk" || r.ExpectedChecks["liveness"] != "hold" {
		t.Errorf("scenario %s, expected %v: want schedule:replay with exclusion at risk (gc-pause) and liveness must hold", r.Scenario, r.ExpectedChecks)
	}
	var names []string
	for _, w := range r.Faults {
		names = append(names, w.Name)
	}
	if got := strings.Join(names, ","); got != "lost-reply (step 1),client-pause (step 2)" {
		t.Errorf("fault windows %q, want the lost reply, then the pause of the same hold", got)
	}
	code, text = run(t, nil, "check", filepath.Join(out, r.History))
	if code != 0 || !strings.Contains(text, "schedule:replay") {
		t.Errorf("check of the schedule's history: exit %d:\n%s", code, text)
	}

	code, text = run(t, nil, "run", "--strategy", "token-lua", "--scenario", "gc-pause", "--schedule", file, "--out", filepath.Join(dir, "o2"))
	if code != 2 || !strings.Contains(text, "one or the other") {
		t.Errorf("--scenario with --schedule: exit %d:\n%s", code, text)
	}
	os.WriteFile(file, []byte(`{"schedule": 1, "name": "bad", "steps": [{"fault": "node-pause", "target": "holder", "on": "acquired", "for": 1}]}`), 0o644)
	code, text = run(t, nil, "run", "--strategy", "token-lua", "--schedule", file, "--out", filepath.Join(dir, "o3"))
	if code != 2 || !strings.Contains(text, "step 1 (node-pause): target") {
		t.Errorf("a bad schedule file: exit %d:\n%s", code, text)
	}
}
