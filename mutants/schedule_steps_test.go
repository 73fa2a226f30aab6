package mutants_test

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/internal/leakcheck"
	"github.com/lockbench/lockbench/mutants"
)

// TestScheduleStepsKill: the slow-reply and cancel schedule steps strike
// as their scenarios do. A schedule of one step, no scenario named,
// kills the mutant its scenario kills (exit 1) and passes the unmutated
// lock (exit 0); a slow reply at a renewal lands on the built-in watchdog
// (its extend ran on n1 while the answer was held back: renewals an
// adapter makes on its own raise no lock event) and the lock still
// passes.
func TestScheduleStepsKill(t *testing.T) {
	if testing.Short() {
		t.Skip("runs redis-server")
	}
	p, err := programs()
	if err != nil {
		t.Fatal(err)
	}
	leakcheck.AtEnd(t, leakcheck.Servers...)
	dir := t.TempDir()
	single := []string{"--ttl", "200ms", "--op-timeout", "1s", "--clients", "8"}
	for _, tc := range []struct {
		name, lock, bug, step string
		args                  []string
		want                  int
		landed                string // a landed window's note must hold it
	}{
		{"slow-acquire/mutant", "token-validity", "validity-from-end", `{"fault": "slow-reply", "target": "holder", "on": "before-acquire", "at": 2, "size": 1.5}`, single, 1, ""},
		{"slow-acquire/twin", "token-validity", "none", `{"fault": "slow-reply", "target": "holder", "on": "before-acquire", "at": 2, "size": 1.5}`, single, 0, ""},
		{"cancel/mutant", "token-lua", "cancel-leaves-key", `{"fault": "cancel", "target": "holder", "on": "before-acquire", "at": 2}`, single, 1, ""},
		{"cancel/twin", "token-lua", "none", `{"fault": "cancel", "target": "holder", "on": "before-acquire", "at": 2}`, single, 0, ""},
		{"slow-renewal/built-in", "", "watchdog", `{"fault": "slow-reply", "target": "holder", "on": "renew", "at": 2, "size": 0.6}`,
			[]string{"--ttl", "300ms", "--op-timeout", "1s", "--clients", "4", "--cs-min", "500ms"}, 0, "while its reply was held back"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(dir, strings.ReplaceAll(tc.name, "/", "-")+".json")
			if err := os.WriteFile(file, []byte(`{"schedule": 1, "name": "step", "steps": [`+tc.step+`]}`), 0o644); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, strings.ReplaceAll(tc.name, "/", "-"))
			strategy := tc.bug // lock "": a built-in strategy
			if tc.lock != "" {
				strategy = mutants.Strategy(p.Adapter, tc.lock, tc.bug)
			}
			args := append([]string{"run", "--strategy", strategy, "--schedule", file,
				"--seed", "1", "--duration", "3s", "--out", out, "--quiet"}, tc.args...)
			b, err := exec.Command(p.Lockbench, args...).CombinedOutput()
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tc.want {
				t.Errorf("exit %d, want %d:\n%s", code, tc.want, b)
			}
			notes := windowNotes(t, filepath.Join(out, "results.json"), "(step 1)")
			if len(notes) == 0 {
				t.Fatalf("results.json has no window of step 1")
			}
			if tc.landed != "" && !slicesAny(notes, func(n string) bool { return strings.Contains(n, tc.landed) }) {
				t.Errorf("no window of step 1 says %q: %q", tc.landed, notes)
			}
		})
	}
}

// windowNotes returns the notes of the fault windows in a results.json
// that contain sub.
func windowNotes(t *testing.T, path, sub string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
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
	var doc any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	walk(doc)
	return out
}

func slicesAny(s []string, f func(string) bool) bool {
	for _, x := range s {
		if f(x) {
			return true
		}
	}
	return false
}
