package workload

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/cluster"
	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/strategies"
	"github.com/lockbench/lockbench/resource"
)

// TestRunRecordsHistory runs token-lua clients against a real redis-server
// and checks the recorded history's shape: every grant has a hold id, the
// resource's final value equals the accepted writes, and the probe finds
// the key free.
func TestRunRecordsHistory(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, st := startSingle(ctx, t, "token-lua")
	path := filepath.Join(t.TempDir(), "h.jsonl")
	hw, err := history.Create(path, history.Header{Strategy: "token-lua", Scenario: "baseline", TTLMs: 100, Fencing: "off"})
	if err != nil {
		t.Fatal(err)
	}
	res := resource.New(resource.FencingOff)
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
			// token-lua states why an acquire failed and the token it tried.
			if op.Result == history.Fail && (op.Reason != history.ReasonTaken || op.Token == "" || op.Hold != 0) {
				t.Errorf("failed acquire %+v: want reason taken, the token tried and no hold", op)
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

// TestProbeShortOpTimeout: a 1 ns OpTimeout (every lock call of the run
// times out) does not make the probe time out on a free key: it acquires
// it (no false deadlock).
func TestProbeShortOpTimeout(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, st := startSingle(ctx, t, "token-lua")
	rec := &collect{}
	env := Env{
		Strategy: st,
		Nodes: func(int) ([]redis.UniversalClient, error) {
			return []redis.UniversalClient{redis.NewClient(&redis.Options{Addr: c.Nodes()[0].Addr(), MaxRetries: -1, ContextTimeoutEnabled: true})}, nil
		},
		History: rec, Clock: history.NewClock(), IDs: &history.IDs{},
	}
	cfg := Config{TTL: 100 * time.Millisecond, Duration: time.Second, OpTimeout: time.Nanosecond}
	if err := Probe(ctx, cfg, env); err != nil {
		t.Fatal(err)
	}
	if len(rec.ops) != 1 || rec.ops[0].Result != history.OK || rec.ops[0].Value != -2 {
		t.Errorf("probe: %+v, want one ok on a free key (PTTL -2)", rec.ops)
	}
}

// collect is a Recorder that keeps every operation in memory.
type collect struct {
	mu  sync.Mutex
	ops []history.Operation
}

func (c *collect) Record(op history.Operation) {
	c.mu.Lock()
	c.ops = append(c.ops, op)
	c.mu.Unlock()
}

// TestOwnKeysAndNoHistory: with OwnKeys every client locks only its own key
// (so no acquire fails), and NoHistory records nothing even when a
// recorder is given; a nil History without NoHistory is refused.
func TestOwnKeysAndNoHistory(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, st := startSingle(ctx, t, "set-nx-px")
	cfg := Config{Clients: 4, OwnKeys: true, TTL: 100 * time.Millisecond, Duration: 150 * time.Millisecond, CS: CSDist{Kind: "fixed"}, Seed: 1}
	for _, tc := range []struct {
		name      string
		noHistory bool
		nilRec    bool
		wantErr   bool
	}{
		{"recorded", false, false, false},
		{"unrecorded", true, false, false},
		{"nil recorder refused", false, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &collect{}
			env := Env{
				Strategy: st,
				Nodes: func(int) ([]redis.UniversalClient, error) {
					return []redis.UniversalClient{redis.NewClient(&redis.Options{Addr: c.Nodes()[0].Addr(), MaxRetries: -1})}, nil
				},
				History: rec, NoHistory: tc.noHistory, Clock: history.NewClock(), IDs: &history.IDs{},
			}
			if tc.nilRec {
				env.History = nil
			}
			stats, err := Run(ctx, cfg, env)
			if tc.wantErr {
				if err == nil {
					t.Fatal("Run with a nil History succeeded, want an error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if stats.Grants == 0 || stats.Attempts[history.Fail] != 0 {
				t.Fatalf("grants %d, failed acquires %d: want grants and no contention", stats.Grants, stats.Attempts[history.Fail])
			}
			if tc.noHistory {
				if len(rec.ops) != 0 {
					t.Fatalf("%d operations recorded with NoHistory", len(rec.ops))
				}
				return
			}
			full, _ := cfg.WithDefaults()
			for _, op := range rec.ops {
				if op.Key != full.Key(op.Client) {
					t.Fatalf("client %d used key %q, want its own %q", op.Client, op.Key, full.Key(op.Client))
				}
			}
		})
	}
}

// startSingle starts one redis-server (stopped when the test ends) and looks
// up strategy; it fails the test on any error.
func startSingle(ctx context.Context, t *testing.T, strategy string) (*cluster.Cluster, impl.Strategy) {
	t.Helper()
	c, err := cluster.Start(ctx, cluster.Topology{Kind: cluster.Single}, cluster.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Stop() })
	st, err := strategies.Lookup(strategy)
	if err != nil {
		t.Fatal(err)
	}
	return c, st
}
