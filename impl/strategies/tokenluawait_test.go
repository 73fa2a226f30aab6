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

// TestDefaultWaitTimeout: TTL/10 between 5 ms and 100 ms.
func TestDefaultWaitTimeout(t *testing.T) {
	for _, tt := range []struct{ ttl, want time.Duration }{
		{10 * time.Millisecond, 5 * time.Millisecond},
		{100 * time.Millisecond, 10 * time.Millisecond},
		{time.Second, 100 * time.Millisecond},
		{30 * time.Second, 100 * time.Millisecond},
	} {
		if got := impl.DefaultWaitTimeout(tt.ttl); got != tt.want {
			t.Errorf("DefaultWaitTimeout(%v) = %v, want %v", tt.ttl, got, tt.want)
		}
	}
}

// TestTokenLuaWait runs token-lua-wait against a real primary with one
// replica: a grant is on the replica as soon as Acquire returns, a second
// owner is refused (taken), a release is gone from the replica as soon as
// it returns; while the replica's replication is held back (CLIENT PAUSE
// on the replica) an acquire is refused with reason unavailable and
// leaves no key, and a release deletes the key but says its outcome is
// unknown. On a primary without a replica nothing is granted.
func TestTokenLuaWait(t *testing.T) {
	if testing.Short() {
		t.Skip("starts redis-server; skipped with -short")
	}
	st, err := strategies.Lookup("token-lua-wait")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := cluster.Start(ctx, cluster.Topology{Kind: cluster.Replicated, Replicas: 1}, cluster.Options{})
	if err != nil {
		t.Fatalf("start replicated:1: %v", err)
	}
	t.Cleanup(func() { c.Stop() })
	nodes := clients(t, c) // primary, replica
	primary, replica := nodes[0], nodes[1]
	// WAIT counts only replicas online: wait for the replica's first sync,
	// so a grant's WAIT does not outlast the client's read timeout.
	for n := int64(0); n < 1; {
		primary.Set(ctx, "warm-up", "1", 0)
		n, _ = primary.Do(ctx, "WAIT", 1, 100).Int64()
		if ctx.Err() != nil {
			t.Fatalf("the replica never came online: %v", ctx.Err())
		}
	}
	// a and b wait long enough for a replica on a loaded machine; short
	// gives up within the hold of replication.
	const wait, long, held = 50 * time.Millisecond, 5 * time.Second, time.Second
	cfg := impl.Config{Nodes: nodes[:1], TTL: 10 * time.Second, Owner: "a", WaitTimeout: long}
	a := newLocker(t, st, cfg)
	cfg.Owner = "b"
	b := newLocker(t, st, cfg)
	cfg.Owner, cfg.WaitTimeout = "s", wait
	short := newLocker(t, st, cfg)
	on := func(node redis.UniversalClient, key string) string {
		v, err := node.Get(ctx, key).Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			t.Fatalf("GET %s: %v", key, err)
		}
		return v
	}
	hold := func(t *testing.T) {
		t.Helper()
		if err := c.Nodes()[1].HoldReplication(ctx, held); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { time.Sleep(held + 50*time.Millisecond) }) // the pause ends by itself
	}

	t.Run("acknowledged", func(t *testing.T) {
		la, err := a.Acquire(ctx, "k1")
		if err != nil {
			t.Fatalf("a.Acquire: %v", err)
		}
		if got := on(replica, "k1"); got != la.Token {
			t.Errorf("replica holds %q right after the grant, want a's token %q (WAIT confirmed it)", got, la.Token)
		}
		_, err = b.Acquire(ctx, "k1")
		if !errors.Is(err, impl.ErrNotAcquired) || impl.Reason(err) != impl.ReasonTaken || impl.TriedToken(err) == "" {
			t.Errorf("b.Acquire while a holds: %v (reason %q, token %q), want not acquired, taken, with b's token", err, impl.Reason(err), impl.TriedToken(err))
		}
		if _, err := a.Release(ctx, la); err != nil {
			t.Fatalf("a.Release: %v", err)
		}
		if got := on(replica, "k1"); got != "" {
			t.Errorf("replica holds %q right after the release, want nothing (WAIT confirmed it)", got)
		}
		_, err = a.Release(ctx, la)
		if !errors.Is(err, impl.ErrNotHeld) || impl.Reason(err) != impl.ReasonExpired {
			t.Errorf("second a.Release: %v (reason %q), want not held, expired", err, impl.Reason(err))
		}
	})

	t.Run("held back: acquire refused", func(t *testing.T) {
		hold(t)
		start := time.Now()
		_, err := short.Acquire(ctx, "k2")
		took := time.Since(start)
		if !errors.Is(err, impl.ErrNotAcquired) || impl.Reason(err) != impl.ReasonUnavailable || impl.TriedToken(err) == "" {
			t.Fatalf("a.Acquire with replication held back: %v (reason %q), want not acquired, unavailable, with its token", err, impl.Reason(err))
		}
		if took < wait {
			t.Errorf("refused after %v, before the %v WAIT timeout", took, wait)
		}
		if got := on(primary, "k2"); got != "" {
			t.Errorf("primary holds %q after the refused acquire, want no key (taken back)", got)
		}
	})

	t.Run("held back: release unknown", func(t *testing.T) {
		la, err := a.Acquire(ctx, "k3")
		if err != nil {
			t.Fatalf("a.Acquire: %v", err)
		}
		hold(t)
		_, err = short.Release(ctx, la) // a release needs the lease, not its Locker
		if err == nil || !unknown(err) || impl.Reason(err) != impl.ReasonUnavailable {
			t.Errorf("a.Release with replication held back: %v (reason %q), want an unknown outcome, unavailable", err, impl.Reason(err))
		}
		if got := on(primary, "k3"); got != "" {
			t.Errorf("primary holds %q after the release, want no key", got)
		}
	})

	t.Run("no replica", func(t *testing.T) {
		_, single := startNodes(t, 1)
		cfg := impl.Config{Nodes: single, TTL: time.Second, Owner: "c", WaitTimeout: wait}
		l := newLocker(t, st, cfg)
		_, err := l.Acquire(ctx, "k4")
		if !errors.Is(err, impl.ErrNotAcquired) || impl.Reason(err) != impl.ReasonUnavailable {
			t.Errorf("Acquire on a primary without replicas: %v (reason %q), want not acquired, unavailable", err, impl.Reason(err))
		}
		if n := exists(t, single, "k4"); n != 0 {
			t.Errorf("key left on the node after the refused acquire")
		}
	})
}
