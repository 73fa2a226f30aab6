package bench

import (
	"context"
	"testing"
	"time"

	"github.com/lockbench/lockbench/checker"
	"github.com/lockbench/lockbench/workload"
)

// TestLibraryAdaptersAgree runs each library adapter and the home-made
// strategy it corresponds to under the same workload, scenario and seed,
// and asserts they show the same verdict per check: redsync ≈ redlock,
// redislock without its refresh loop ≈ token-lua, redislock (refreshing
// every TTL/3, honouring Lost) ≈ watchdog. The pairs are the baseline and
// the canaries where the README says they agree.
func TestLibraryAdaptersAgree(t *testing.T) {
	if testing.Short() {
		t.Skip("runs redis-server")
	}
	off := map[string]string{"redislock-refresh": "off"}
	// The quorum pairs run at a 200 ms TTL for 1.2 s and redsync gets redlock's
	// timeout budget (TTL/10 per call instead of its default 0.05·TTL):
	// on a loaded 2-core machine five parallel calls often miss a 5 ms
	// budget and neither strategy grants. This test compares the
	// algorithms; TestVerdictMatrix runs redsync with its library defaults.
	budget := map[string]string{"redsync-timeout-factor": "0.1"}
	tests := []struct {
		lib, home, scenario string
		settings            map[string]string
	}{
		{"redsync", "redlock", "baseline", budget},
		{"redsync", "redlock", "long-cs", budget},
		{"redsync", "redlock", "gc-pause", budget},
		{"redsync", "redlock", "crash-between", budget},
		{"redsync", "redlock", "node-restart", budget},
		{"redsync", "redlock", "redlock-clock-jump", budget},
		{"redislock", "token-lua", "baseline", off},
		{"redislock", "token-lua", "long-cs", off},
		{"redislock", "token-lua", "gc-pause", off},
		{"redislock", "token-lua", "partition-holder", off},
		{"redislock", "watchdog", "baseline", nil},
		{"redislock", "watchdog", "long-cs", nil},
		{"redislock", "watchdog", "gc-pause", nil},
		{"redislock", "watchdog", "partition-holder", nil},
	}
	w := workload.Config{Clients: 8, TTL: 100 * time.Millisecond, Duration: 500 * time.Millisecond}
	for _, tc := range tests {
		name := tc.lib + "_" + tc.home + "_" + tc.scenario
		for k, v := range tc.settings {
			name += "_" + k + "=" + v
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			w := w
			if tc.home == "redlock" {
				w.TTL, w.Duration = 200*time.Millisecond, 1200*time.Millisecond
			}
			verdict := func(strategy string, set map[string]string) []checker.Status {
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
				defer cancel()
				r, err := Run(ctx, Spec{Strategy: strategy, Scenario: tc.scenario, Seed: 1, Workload: w, OutDir: t.TempDir(), Library: set})
				if err != nil {
					t.Fatalf("%s/%s: %v", strategy, tc.scenario, err)
				}
				if r.Grants == 0 {
					t.Fatalf("%s/%s: no grant", strategy, tc.scenario)
				}
				if tc.scenario == "baseline" && r.Violations != 0 {
					t.Errorf("%s/baseline: %d violations, want 0", strategy, r.Violations)
				}
				v := r.Verdict
				return []checker.Status{v.Exclusion, v.Resource, v.Liveness}
			}
			lib, home := verdict(tc.lib, tc.settings), verdict(tc.home, nil)
			// A check inconclusive on either side (too little evidence,
			// e.g. a busy machine) says nothing either way: only two
			// answers that disagree are a disagreement.
			for i, name := range []string{"exclusion", "resource", "liveness"} {
				if lib[i] == checker.Inconclusive || home[i] == checker.Inconclusive {
					t.Logf("%s: %s inconclusive (%s %s, %s %s): not compared", tc.scenario, name, tc.lib, lib[i], tc.home, home[i])
					continue
				}
				if lib[i] != home[i] {
					t.Errorf("%s: %s (%v) shows %s %s; %s shows %s", tc.scenario, tc.lib, tc.settings, name, lib[i], tc.home, home[i])
				}
			}
		})
	}
}
