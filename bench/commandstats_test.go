package bench

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/lockbench/lockbench/workload"
)

// TestServerCommandCount runs real baseline runs and compares the server-side
// count (INFO commandstats) with the client-side hook: equal within 10% for
// set-nx-px, which runs no script (every command the clients send reaches
// the server in a fault-free run, but for a few that time out on a loaded
// machine before they are written); above it for token-lua, whose release
// script's GET and DEL Redis counts too; and for redlock about five times
// a single-node strategy's, from all five nodes.
func TestServerCommandCount(t *testing.T) {
	if testing.Short() {
		t.Skip("runs redis-server")
	}
	out := t.TempDir()
	run := func(strategy string, ttl time.Duration) (server, client float64) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		w := workload.Config{Clients: 4, TTL: ttl, Duration: 3 * ttl}
		r, err := Run(ctx, Spec{Strategy: strategy, Scenario: "baseline", Seed: 1, Workload: w, OutDir: out})
		if err != nil {
			t.Fatal(err)
		}
		if r.Grants == 0 || r.RoundTripsPerGrant == 0 || r.ClientCommandsPerGrant == 0 {
			t.Fatalf("%s: %d grants, server %v, client %v commands per grant: want all known", strategy, r.Grants, r.RoundTripsPerGrant, r.ClientCommandsPerGrant)
		}
		t.Logf("%s: %d grants, server %.2f, client %.2f commands per grant", strategy, r.Grants, r.RoundTripsPerGrant, r.ClientCommandsPerGrant)
		return r.RoundTripsPerGrant, r.ClientCommandsPerGrant
	}
	s, c := run("set-nx-px", 100*time.Millisecond)
	if math.Abs(s-c)/c > 0.1 || s < 2 {
		t.Errorf("set-nx-px: server %.3f vs client %.3f commands per grant: want equal within 10%% and at least 2 (SET NX PX, DEL)", s, c)
	}
	s, c = run("token-lua", 100*time.Millisecond)
	if s <= c {
		t.Errorf("token-lua: server %.3f ≤ client %.3f commands per grant: the release script's inner calls are missing", s, c)
	}
	// Redlock's per-node timeout is TTL/10: at 100 ms (10 ms) a loaded
	// machine can leave it without a grant, so it runs at 300 ms.
	s, c = run("redlock", 300*time.Millisecond)
	if s < 10 || math.Abs(s-c)/c > 1.5 {
		t.Errorf("redlock: server %.3f, client %.3f commands per grant: want at least 10 (SET and release on 5 nodes)", s, c)
	}
}
