package bench

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/lockbench/lockbench/workload"
)

func TestParseCommandStats(t *testing.T) {
	info := "# Server\r\nredis_version:7.0.15\r\nrun_id:abc\r\n# Replication\r\nrole:master\r\n# Commandstats\r\n" +
		"cmdstat_set:calls=10,usec=40,usec_per_call=4.00,rejected_calls=2,failed_calls=1\r\n" +
		"cmdstat_evalsha:calls=5,usec=40,usec_per_call=8.00,rejected_calls=0,failed_calls=0\r\n" +
		"cmdstat_info:calls=7,usec=40,usec_per_call=5.00,rejected_calls=0,failed_calls=0\r\n" +
		"cmdstat_client|setinfo:calls=3,usec=4,usec_per_call=1.00,rejected_calls=0,failed_calls=0\r\n" +
		"cmdstat_hello:calls=3,usec=4,usec_per_call=1.00,rejected_calls=0,failed_calls=0\r\n"
	got := parseCommandStats(info)
	if got != (nodeCalls{runID: "abc", role: "master", calls: 17}) {
		t.Errorf("parseCommandStats = %+v, want run_id abc, role master, 17 calls (set 10+2 rejected, evalsha 5; info, client, hello left out)", got)
	}
	m := func(id, role string, n int64) nodeCalls { return nodeCalls{id, role, n} }
	tests := []struct {
		name          string
		before, after []nodeCalls
		want          int64
		ok            bool
	}{
		{"two primaries", []nodeCalls{m("a", "master", 10), m("b", "master", 0)}, []nodeCalls{m("a", "master", 110), m("b", "master", 50)}, 150, true},
		{"a replica repeats its primary's commands", []nodeCalls{m("a", "master", 0), m("b", "slave", 0)}, []nodeCalls{m("a", "master", 40), m("b", "slave", 40)}, 40, true},
		{"restarted node", []nodeCalls{m("a", "master", 10)}, []nodeCalls{m("a2", "master", 3)}, 0, false},
		{"promoted replica", []nodeCalls{m("a", "master", 0), m("b", "slave", 0)}, []nodeCalls{m("a", "master", 10), m("b", "master", 30)}, 0, false},
		{"node missing", []nodeCalls{m("a", "master", 0)}, nil, 0, false},
	}
	for _, tt := range tests {
		n, ok := commandsBetween(tt.before, tt.after)
		if n != tt.want || ok != tt.ok {
			t.Errorf("%s: commandsBetween = %d, %v; want %d, %v", tt.name, n, ok, tt.want, tt.ok)
		}
	}
}

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
	run := func(strategy string) (server, client float64) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		w := workload.Config{Clients: 4, TTL: 100 * time.Millisecond, Duration: 300 * time.Millisecond}
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
	s, c := run("set-nx-px")
	if math.Abs(s-c)/c > 0.1 || s < 2 {
		t.Errorf("set-nx-px: server %.3f vs client %.3f commands per grant: want equal within 10%% and at least 2 (SET NX PX, DEL)", s, c)
	}
	s, c = run("token-lua")
	if s <= c {
		t.Errorf("token-lua: server %.3f ≤ client %.3f commands per grant: the release script's inner calls are missing", s, c)
	}
	s, c = run("redlock")
	if s < 10 || math.Abs(s-c)/c > 1.5 {
		t.Errorf("redlock: server %.3f, client %.3f commands per grant: want at least 10 (SET and release on 5 nodes)", s, c)
	}
}
