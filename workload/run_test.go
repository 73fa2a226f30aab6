package workload

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/cluster"
	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/impl"
)

// TestRunRecordsHistory runs token-lua clients against a real redis-server
// and checks the recorded history's shape: every grant has a hold id, the
// resource's final value equals the accepted writes, and the probe finds
// the key free.
func TestRunRecordsHistory(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := cluster.Start(ctx, cluster.Topology{Kind: cluster.Single}, cluster.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Stop() })
	st, err := impl.Lookup("token-lua")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "h.jsonl")
	hw, err := history.Create(path, history.Header{Strategy: "token-lua", Scenario: "baseline", TTLMs: 100, Fencing: "off"})
	if err != nil {
		t.Fatal(err)
	}
	res := NewResource(FencingOff)
	env := Env{
		Strategy: st,
		Nodes: func(int) ([]redis.UniversalClient, error) {
			return []redis.UniversalClient{redis.NewClient(&redis.Options{Addr: c.Nodes()[0].Addr(), MaxRetries: -1})}, nil
		},
		History: hw, Clock: history.NewClock(), IDs: &history.IDs{}, Resource: res,
	}
	cfg := Config{Clients: 4, TTL: 100 * time.Millisecond, Duration: 300 * time.Millisecond, Seed: 1}
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
	if stats.Grants == 0 || len(stats.LatenciesMs) != stats.Grants {
		t.Fatalf("grants %d, latencies %d", stats.Grants, len(stats.LatenciesMs))
	}
	_, ops, err := history.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	holds := map[int64]bool{}
	writes, probes := 0, 0
	for _, op := range ops {
		switch op.Kind {
		case history.Acquire:
			if op.Result == history.OK {
				if op.Hold == 0 || holds[op.Hold] {
					t.Fatalf("grant with missing or reused hold id: %+v", op)
				}
				holds[op.Hold] = true
			}
		case history.Write:
			if !holds[op.Hold] {
				t.Fatalf("write outside a recorded hold: %+v", op)
			}
			if op.Result == history.OK {
				writes++
			}
		case history.Probe:
			probes++
			if op.Result != history.OK || op.Value != -2 {
				t.Errorf("probe: %+v, want ok on a free key (PTTL -2)", op)
			}
		}
		if op.Complete < op.Invoke {
			t.Fatalf("complete before invoke: %+v", op)
		}
	}
	if len(holds) != stats.Grants {
		t.Errorf("%d holds in history, %d grants counted", len(holds), stats.Grants)
	}
	full, _ := cfg.WithDefaults()
	if got := res.Value(full.Key(0)); got != int64(writes) {
		t.Errorf("resource value %d, accepted writes %d", got, writes)
	}
	if probes != 1 {
		t.Errorf("%d probes, want 1", probes)
	}
}
