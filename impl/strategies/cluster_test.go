package strategies_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/cluster"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/strategies"
)

// TestClusterLocks runs token-lua-wait-cluster and redislock-cluster on a
// real redis-cluster:3+3: grants land on the primary of the key's slot
// (and, for token-lua-wait-cluster, on its replica before Acquire
// returns), a second owner is refused, a grant is refused (unavailable,
// no key left) while the slot's replica is held back (CLIENT PAUSE), and
// after the slot moves to another primary behind the clients' backs the
// stale clients follow MOVED: a release still deletes the key, an acquire
// still finds it taken, then gets it.
func TestClusterLocks(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a six-node Redis Cluster; skipped with -short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := cluster.Start(ctx, cluster.Topology{Kind: cluster.RedisCluster}, cluster.Options{})
	if err != nil {
		t.Fatalf("start redis-cluster:3+3: %v", err)
	}
	t.Cleanup(func() { c.Stop() })
	if err := c.WaitClusterOK(ctx); err != nil {
		t.Fatal(err)
	}
	newClient := func() redis.UniversalClient {
		cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs(), MaxRetries: -1, MaxRedirects: 3,
			DialTimeout: time.Second, ReadTimeout: 5 * time.Second, WriteTimeout: time.Second})
		t.Cleanup(func() { _ = cc.Close() })
		return cc
	}
	// node reads key on n, a primary or (READONLY) a replica.
	node := func(n *cluster.Node, key string) string {
		rc := redis.NewClient(&redis.Options{Addr: n.Addr(), MaxRetries: -1,
			OnConnect: func(ctx context.Context, cn *redis.Conn) error { return cn.ReadOnly(ctx).Err() }})
		defer rc.Close()
		v, err := rc.Get(ctx, key).Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			t.Fatalf("GET %s on %s: %v", key, n.Name(), err)
		}
		return v
	}
	slotOf := func(key string) (int, *cluster.Node, *cluster.Node) {
		slot, err := c.KeySlot(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		p, reps, err := c.SlotPrimary(ctx, slot)
		if err != nil || len(reps) == 0 {
			t.Fatalf("slot %d of %s: primary %v, replicas %v: %v", slot, key, p, reps, err)
		}
		return slot, p, reps[0]
	}
	// move migrates key's slot to another primary, behind every client.
	move := func(key string) *cluster.Node {
		slot, from, _ := slotOf(key)
		ps, err := c.Primaries(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, to := range ps {
			if to != from {
				if _, _, err := c.MigrateSlot(ctx, slot, to); err != nil {
					t.Fatalf("migrate slot %d of %s to %s: %v", slot, key, to.Name(), err)
				}
				return to
			}
		}
		t.Fatalf("no other primary than %s", from.Name())
		return nil
	}

	for _, name := range []string{"token-lua-wait-cluster", "redislock-cluster"} {
		t.Run(name, func(t *testing.T) {
			st, err := strategies.Lookup(name)
			if err != nil {
				t.Fatal(err)
			}
			waits := st.Info().Claims.ReplicaAck
			cfg := impl.Config{Nodes: []redis.UniversalClient{newClient()}, TTL: 10 * time.Second, Owner: "a", WaitTimeout: 2 * time.Second}
			a := newLocker(t, st, cfg)
			cfg.Nodes, cfg.Owner = []redis.UniversalClient{newClient()}, "b"
			b := newLocker(t, st, cfg)
			k1, k2, k3 := name+":k1", name+":k2", name+":k3"

			la, err := a.Acquire(ctx, k1)
			if err != nil {
				t.Fatalf("a.Acquire: %v", err)
			}
			_, p, r := slotOf(k1)
			if got := node(p, k1); got != la.Token {
				t.Errorf("primary %s holds %q, want a's token %q", p.Name(), got, la.Token)
			}
			if got := node(r, k1); waits && got != la.Token {
				t.Errorf("replica %s holds %q right after the grant, want a's token %q (WAIT confirmed it)", r.Name(), got, la.Token)
			}
			if _, err := b.Acquire(ctx, k1); !errors.Is(err, impl.ErrNotAcquired) {
				t.Errorf("b.Acquire while a holds: %v, want not acquired", err)
			}
			if _, err := a.Release(ctx, la); err != nil {
				t.Fatalf("a.Release: %v", err)
			}
			if got := node(p, k1); got != "" {
				t.Errorf("primary %s holds %q after the release, want nothing", p.Name(), got)
			}

			if waits {
				t.Run("held back: acquire refused", func(t *testing.T) {
					_, p, r := slotOf(k2)
					const held = time.Second
					cc := newClient()
					// Load its slot map first: a paused replica would answer
					// its CLUSTER SLOTS only once the pause ends.
					if err := cc.(*redis.ClusterClient).ForEachShard(ctx, func(ctx context.Context, n *redis.Client) error { return n.Ping(ctx).Err() }); err != nil {
						t.Fatal(err)
					}
					short := newLocker(t, st, impl.Config{Nodes: []redis.UniversalClient{cc}, TTL: 10 * time.Second, Owner: "s", WaitTimeout: 50 * time.Millisecond})
					if err := r.HoldReplication(ctx, held); err != nil {
						t.Fatal(err)
					}
					defer time.Sleep(held + 50*time.Millisecond) // the pause ends by itself
					_, err := short.Acquire(ctx, k2)
					if !errors.Is(err, impl.ErrNotAcquired) || impl.Reason(err) != impl.ReasonUnavailable || impl.TriedToken(err) == "" {
						t.Fatalf("Acquire with the slot's replica held back: %v (reason %q), want not acquired, unavailable, with its token", err, impl.Reason(err))
					}
					if got := node(p, k2); got != "" {
						t.Errorf("primary %s holds %q after the refused acquire, want no key (taken back)", p.Name(), got)
					}
				})
			}

			t.Run("slot moved: MOVED followed", func(t *testing.T) {
				la, err := a.Acquire(ctx, k3)
				if err != nil {
					t.Fatalf("a.Acquire: %v", err)
				}
				to := move(k3)
				if got := node(to, k3); got != la.Token {
					t.Fatalf("new primary %s holds %q after the move, want a's token %q", to.Name(), got, la.Token)
				}
				if _, err := b.Acquire(ctx, k3); !errors.Is(err, impl.ErrNotAcquired) {
					t.Errorf("b.Acquire (stale slot map) while a holds: %v, want not acquired", err)
				}
				if _, err := a.Release(ctx, la); err != nil {
					t.Fatalf("a.Release (stale slot map): %v", err)
				}
				if got := node(to, k3); got != "" {
					t.Errorf("new primary %s holds %q after the release, want nothing", to.Name(), got)
				}
				lb, err := b.Acquire(ctx, k3)
				if err != nil {
					t.Fatalf("b.Acquire after the release: %v", err)
				}
				if got := node(to, k3); got != lb.Token {
					t.Errorf("new primary %s holds %q, want b's token %q", to.Name(), got, lb.Token)
				}
				if _, err := b.Release(ctx, lb); err != nil {
					t.Errorf("b.Release: %v", err)
				}
			})
		})
	}
}
