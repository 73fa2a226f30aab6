package bench

import (
	"context"
	"strings"
	"testing"
	"time"

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
	tests := []struct {
		lib, home, scenario string
		settings            map[string]string
	}{
		{"redsync", "redlock", "baseline", nil},
		{"redsync", "redlock", "long-cs", nil},
		{"redsync", "redlock", "gc-pause", nil},
		{"redsync", "redlock", "crash-between", nil},
		{"redislock", "token-lua", "baseline", off},
		{"redislock", "token-lua", "long-cs", off},
		{"redislock", "token-lua", "gc-pause", off},
		{"redislock", "token-lua", "partition-holder", off},
		{"redislock", "watchdog", "baseline", nil},
		{"redislock", "watchdog", "long-cs", nil},
		{"redislock", "watchdog", "gc-pause", nil},
		{"redislock", "watchdog", "partition-holder", nil},
	}
	w := workload.Config{Clients: 8, TTL: 50 * time.Millisecond, Duration: 400 * time.Millisecond}
	for _, tc := range tests {
		name := tc.lib + "_" + tc.home + "_" + tc.scenario
		if tc.settings != nil {
			name += "_refresh-off"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			verdict := func(strategy string, set map[string]string) string {
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
				return strings.Join([]string{"exclusion " + v.Exclusion, "resource " + v.Resource, "liveness " + v.Liveness}, ", ")
			}
			lib, home := verdict(tc.lib, tc.settings), verdict(tc.home, nil)
			if lib != home {
				t.Errorf("%s: %s (%v) shows %s; %s shows %s", tc.scenario, tc.lib, tc.settings, lib, tc.home, home)
			}
		})
	}
}
