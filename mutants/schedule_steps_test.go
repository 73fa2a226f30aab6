package mutants_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/internal/leakcheck"
	"github.com/lockbench/lockbench/mutants"
)

// TestScheduleSteps: schedule steps strike as their scenarios do, with no
// scenario named (what a hunt draws). A schedule kills the mutant its
// scenario kills (exit 1) and passes the unmutated lock (exit 0):
//   - slow-reply at an acquire kills validity-from-end (slow-node's);
//   - cancel kills cancel-leaves-key (cancel's);
//   - client-clock-step (the holder's adapter clock stepped back 2×TTL at
//     its read) with slow-cs on the same hold (2×TTL) kills
//     validity-wall-clock: its check says valid and it writes over the
//     next owner, where the unmutated lock's monotonic check stops the
//     write (the schedule's expectation, the weakest of client-clock-step's
//     and long-cs's for a lock that checks its validity, is must-hold);
//   - a slow reply at a renewal lands on the built-in watchdog (its extend
//     ran on n1 while the answer was held back: renewals an adapter makes
//     on its own raise no lock event) and the lock still passes.
//
// Each step's window is in results.json, landed or not.
func TestScheduleSteps(t *testing.T) {
	if testing.Short() {
		t.Skip("runs redis-server")
	}
	p, err := programs()
	if err != nil {
		t.Fatal(err)
	}
	leakcheck.AtEnd(t, leakcheck.Servers...)
	dir := t.TempDir()
	single := []string{"--ttl", "200ms", "--op-timeout", "1s", "--clients", "8", "--duration", "3s"}
	slowAcquire := `{"fault": "slow-reply", "target": "holder", "on": "before-acquire", "at": 2, "size": 1.5}`
	cancel := `{"fault": "cancel", "target": "holder", "on": "before-acquire", "at": 2}`
	clock := `{"fault": "client-clock-step", "target": "holder", "on": "in-cs", "at": 1, "size": 2},
  {"fault": "slow-cs", "target": "holder", "on": "in-cs", "with": 1, "for": 2}`
	clockArgs := []string{"--ttl", "200ms", "--op-timeout", "1s", "--clients", "8", "--duration", "2s"}
	for _, tc := range []struct {
		name, strategy, steps string
		args                  []string
		want                  int
		window, landed        string // a window's note must hold window; a landed one landed too
	}{
		{"slow-acquire/mutant", mutants.Strategy(p.Adapter, "token-validity", "validity-from-end"), slowAcquire, single, 1, "slow-reply (step 1)", ""},
		{"slow-acquire/twin", mutants.Strategy(p.Adapter, "token-validity", "none"), slowAcquire, single, 0, "slow-reply (step 1)", ""},
		{"cancel/mutant", mutants.Strategy(p.Adapter, "token-lua", "cancel-leaves-key"), cancel, single, 1, "cancel (step 1)", ""},
		{"cancel/twin", mutants.Strategy(p.Adapter, "token-lua", "none"), cancel, single, 0, "cancel (step 1)", ""},
		{"clock-step/mutant", mutants.Strategy(p.Python, "local-validity", "validity-wall-clock"), clock, clockArgs, 1, "client-clock-step (step 1)", ""},
		{"clock-step/twin", mutants.Strategy(p.Python, "local-validity", "none"), clock, clockArgs, 0, "client-clock-step (step 1)", ""},
		{"slow-renewal/built-in", "watchdog", `{"fault": "slow-reply", "target": "holder", "on": "renew", "at": 2, "size": 0.6}`,
			[]string{"--ttl", "300ms", "--op-timeout", "1s", "--clients", "4", "--cs-min", "500ms", "--duration", "3s"}, 0, "slow-reply (step 1)", "while its reply was held back"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := strings.ReplaceAll(tc.name, "/", "-")
			file := filepath.Join(dir, base+".json")
			if err := os.WriteFile(file, []byte(`{"schedule": 1, "name": "step", "steps": [`+tc.steps+`]}`), 0o644); err != nil {
				t.Fatal(err)
			}
			// An inconclusive run (exit 4: a busy machine stalled a
			// client past the TTL) is no answer: the next seed is tried,
			// at most three in all.
			var out string
			var b []byte
			code := 0
			for seed := 1; seed <= 3; seed++ {
				out = filepath.Join(dir, fmt.Sprintf("%s-%d", base, seed))
				args := append([]string{"run", "--strategy", tc.strategy, "--schedule", file, "--seed", fmt.Sprint(seed), "--out", out, "--quiet"}, tc.args...)
				var err error
				b, err = exec.Command(p.Lockbench, args...).CombinedOutput()
				code = 0
				var ee *exec.ExitError
				if errors.As(err, &ee) {
					code = ee.ExitCode()
				} else if err != nil {
					t.Fatal(err)
				}
				if code != 4 {
					break
				}
				t.Logf("seed %d inconclusive:\n%s", seed, b)
			}
			if code != tc.want {
				t.Errorf("exit %d, want %d:\n%s", code, tc.want, b)
			}
			notes := stringsIn(t, filepath.Join(out, "results.json"), tc.window)
			if len(notes) == 0 {
				t.Fatalf("results.json has no window of %s", tc.window)
			}
			if tc.landed != "" && !slices.ContainsFunc(notes, func(n string) bool { return strings.Contains(n, tc.landed) }) {
				t.Errorf("no window of %s says %q: %q", tc.window, tc.landed, notes)
			}
		})
	}
}

// stringsIn returns the strings anywhere in a JSON file that contain sub.
func stringsIn(t *testing.T, path, sub string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		case string:
			if strings.Contains(x, sub) {
				out = append(out, x)
			}
		}
	}
	walk(doc)
	return out
}
