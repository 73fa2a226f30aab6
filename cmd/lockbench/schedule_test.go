package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/internal/leakcheck"
	"github.com/lockbench/lockbench/results"
)

// TestSlowAdapterSchedule: an adapter that sleeps 1.5 s before it
// answers (the shipped Go adapter started behind `sleep 1.5`), under
// latency with the default duration, is judged on a fault window its
// clients called through: the schedule starts at the readiness barrier
// (every client's first call), so the run is as expected, or at worst
// inconclusive with "no call during the fault", never "granted nothing"
// (before the barrier the whole window passed before the first call:
// exit 1 for a correct lock).
func TestSlowAdapterSchedule(t *testing.T) {
	if testing.Short() {
		t.Skip("runs redis-server")
	}
	leakcheck.AtEnd(t, append(leakcheck.Servers, "lockbench-adapt")...)
	dir := t.TempDir()
	adapter := filepath.Join(dir, "lockbench-adapter-go")
	if out, err := exec.Command("go", "build", "-o", adapter, "../../adapters/go").CombinedOutput(); err != nil {
		t.Fatalf("go build adapters/go: %v\n%s", err, out)
	}
	strategy := "exec:sh -c 'sleep 1.5; exec " + adapter + " --strategy token-lua'"
	out := filepath.Join(dir, "out")
	code, text := run(t, nil, "run", "--strategy", strategy, "--scenario", "latency", "--seed", "7", "--out", out)
	if strings.Contains(text, "granted nothing") || (code != 0 && !(code == 4 && strings.Contains(text, "no call during the fault"))) {
		t.Fatalf("exit %d, output:\n%s\nwant exit 0 (or 4, no call during the fault), never granted nothing", code, text)
	}
	b, err := os.ReadFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f results.File
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	r := f.Runs[0]
	if len(r.Faults) != 1 || r.Liveness.GrantsDuringFaults == 0 {
		t.Errorf("faults %+v, %d grants during them: want the latency window with grants in it", r.Faults, r.Liveness.GrantsDuringFaults)
	}
}
