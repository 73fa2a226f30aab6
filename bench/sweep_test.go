package bench

import (
	"testing"
	"time"

	"github.com/lockbench/lockbench/workload"
)

// TestScaleCells: a profile with Scales runs every cell at each scale
// with the scale's seeds, locks on etcd and ZooKeeper at their own
// scales, each run with a history of its own, and --repeat overrides the
// seeds.
func TestScaleCells(t *testing.T) {
	p := VerdictsSweepProfile()
	p.Strategies, p.Scenarios = []string{"token-lua", "zk-lock"}, []string{"baseline"}
	specs, err := scaleCells(p, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	histories := map[string]bool{}
	for _, s := range specs {
		count[s.Strategy+" "+s.Workload.TTL.String()+" "+s.Workload.Duration.String()]++
		h := taggedHistoryName(s.Strategy, s.Scenario, s.Seed, s.HistoryTag)
		if histories[h] {
			t.Errorf("two runs write history %s: a scale overwrites another's", h)
		}
		histories[h] = true
	}
	want := map[string]int{
		"token-lua 100ms 2s": 1, "token-lua 1s 6s": 1, "token-lua 5s 15s": 1,
		"zk-lock 1s 8s": 1, "zk-lock 5s 20s": 1, "zk-lock 15s 45s": 1,
	}
	for k, n := range want {
		if count[k] != n {
			t.Errorf("%s: %d runs, want %d (plan: %v)", k, count[k], n, count)
		}
	}
	if specs, _ = scaleCells(p, 1, 2); len(specs) != 12 {
		t.Errorf("--repeat 2: %d runs, want 12 (two per strategy and scale)", len(specs))
	}
}

// TestNodePauseBudgetScales: node-pause's lock calls wait 3×TTL (the
// pause, 2×TTL from TTL/10 after the grant, must not outlast an acquire
// queued in it), never less than the Redis default, unless --op-timeout
// says otherwise; other scenarios keep the default.
func TestNodePauseBudgetScales(t *testing.T) {
	for _, c := range []struct {
		scenario string
		ttl, op  time.Duration
		want     time.Duration
	}{
		{"node-pause", 100 * time.Millisecond, 0, 500 * time.Millisecond},
		{"node-pause", time.Second, 0, 3 * time.Second},
		{"node-pause", 5 * time.Second, 0, 15 * time.Second},
		{"node-pause", 5 * time.Second, 200 * time.Millisecond, 200 * time.Millisecond},
		{"baseline", 5 * time.Second, 0, 500 * time.Millisecond},
	} {
		s := Spec{Strategy: "set-nx-px", Scenario: c.scenario, Seed: 1,
			Workload: workload.Config{Clients: 4, Keys: 1, TTL: c.ttl, Duration: time.Second, OpTimeout: c.op}}
		_, _, _, w, err := s.Resolved()
		if err != nil {
			t.Fatal(err)
		}
		if w.OpTimeout != c.want {
			t.Errorf("%s at TTL %v, --op-timeout %v: op timeout %v, want %v", c.scenario, c.ttl, c.op, w.OpTimeout, c.want)
		}
		adj, _ := s.Adjustments()
		listed := false
		for _, a := range adj {
			listed = listed || a.Flag == "--op-timeout"
		}
		if want := c.op == 0 && c.want != 500*time.Millisecond; listed != want {
			t.Errorf("%s at TTL %v, --op-timeout %v: adjustment listed %v, want %v (%v)", c.scenario, c.ttl, c.op, listed, want, adj)
		}
	}
}
