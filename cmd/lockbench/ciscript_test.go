package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/internal/leakcheck"
)

// TestCIScript runs scripts/ci-own-lock.sh as docs/ci.md tells a team to:
// an adapter (here adapters/go serving token-lua, built as a team builds
// its own) under two scenarios, twice: the first run passes its gate and
// saves the baseline, the second passes its gate and compares with it.
// --max-regression is 50%: two 1 s runs back to back on a shared machine
// differ by more than the default 10% (the gate itself is compare's, tested
// in compare_test.go).
func TestCIScript(t *testing.T) {
	if testing.Short() {
		t.Skip("runs redis-server")
	}
	leakcheck.AtEnd(t, append(leakcheck.Servers, "lockbench-adapt")...)
	dir := t.TempDir()
	adapterBin := filepath.Join(dir, "my-lock-adapter")
	if out, err := exec.Command("go", "build", "-o", adapterBin, "../../adapters/go").CombinedOutput(); err != nil {
		t.Fatalf("go build adapters/go: %v\n%s", err, out)
	}
	script, err := filepath.Abs("../../scripts/ci-own-lock.sh")
	if err != nil {
		t.Fatal(err)
	}
	baseline := filepath.Join(dir, "ci", "lockbench-baseline")
	run := func() (string, error) {
		cmd := exec.Command(script, adapterBin+" --strategy token-lua", baseline)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "LOCKBENCH_SCENARIOS=baseline,gc-pause", "LOCKBENCH_OUT="+filepath.Join(dir, "out"),
			"LOCKBENCH_BIN="+filepath.Join(dir, "lockbench"), "LOCKBENCH_MAX_REGRESSION=50%")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := run()
	if err != nil || !strings.Contains(out, "bench --strategies 'exec:"+adapterBin+" --strategy token-lua' --scenarios baseline,gc-pause") ||
		!strings.Contains(out, "saving this run there") {
		t.Fatalf("first run: %v, output:\n%s\nwant exit 0, the bench command, the baseline saved", err, out)
	}
	if _, err := os.Stat(filepath.Join(baseline, "results.json")); err != nil {
		t.Fatalf("baseline not saved: %v", err)
	}
	out, err = run()
	if err != nil || !strings.Contains(out, "compare "+baseline) {
		t.Fatalf("second run: %v, output:\n%s\nwant exit 0 and the comparison with the baseline", err, out)
	}
	t.Logf("second run:\n%s", out)
}
