package workload

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/lockbench/lockbench/cluster"
	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/impl/strategies"
	"github.com/lockbench/lockbench/internal/leakcheck"
	"github.com/lockbench/lockbench/resource"
)

// TestConsensusRunAndProbe runs an etcd and a ZooKeeper strategy's
// clients (which dial Env.Endpoints themselves; Env.Nodes is nil) against
// a real 3-member cluster, then the liveness probe, which reads the
// strategy's KeyLease instead of Redis PTTL: after the run every key is
// free (-2) and acquirable.
func TestConsensusRunAndProbe(t *testing.T) {
	for _, tc := range []struct {
		kind     cluster.Kind
		strategy string
		ttl      time.Duration
	}{
		{cluster.Etcd, "etcd-fenced", time.Second},
		{cluster.ZooKeeper, "zk-fenced", 500 * time.Millisecond},
	} {
		t.Run(tc.strategy, func(t *testing.T) {
			leakcheck.AtEnd(t)
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			c, err := cluster.Start(ctx, cluster.Topology{Kind: tc.kind}, cluster.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Stop()
			st, err := strategies.Lookup(tc.strategy)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "h.jsonl")
			hw, err := history.Create(path, history.Header{Strategy: tc.strategy, Scenario: "baseline", TTLMs: tc.ttl.Milliseconds(), Fencing: "writes"})
			if err != nil {
				t.Fatal(err)
			}
			env := Env{
				Strategy:  st,
				Endpoints: func(int) []string { return c.Addrs() },
				History:   hw, Clock: history.NewClock(), IDs: &history.IDs{}, Resource: resource.New(resource.FencingWrites),
			}
			cfg := Config{Clients: 4, Keys: 2, TTL: tc.ttl, Duration: time.Second, Seed: 1, Fencing: resource.FencingWrites}
			stats, err := Run(ctx, cfg, env)
			if err != nil {
				t.Fatal(err)
			}
			if err := Probe(ctx, cfg, env); err != nil {
				t.Fatal(err)
			}
			if err := hw.Close(); err != nil {
				t.Fatal(err)
			}
			if stats.Grants == 0 {
				t.Fatalf("no grants: attempts %v", stats.Attempts)
			}
			_, ops, err := history.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			probes := 0
			for _, op := range ops {
				if op.Kind == history.Acquire && op.Result == history.OK && op.Fence <= 0 {
					t.Errorf("grant without a fencing token: %+v", op)
				}
				if op.Kind != history.Probe {
					continue
				}
				probes++
				if op.Result != history.OK || op.Value != strategies.NotHeld {
					t.Errorf("probe of %s: %s, value %d, %s; want ok, -2 (free)", op.Key, op.Result, op.Value, op.Error)
				}
			}
			if probes != cfg.Keys {
				t.Errorf("%d probes, want %d", probes, cfg.Keys)
			}
			t.Logf("%s: %d grants in %v, attempts %v", tc.strategy, stats.Grants, stats.Elapsed.Round(time.Millisecond), stats.Attempts)
		})
	}
}
