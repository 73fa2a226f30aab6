package strategies_test

import (
	"context"
	"errors"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockbench/lockbench/cluster"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/strategies"
	"github.com/lockbench/lockbench/internal/leakcheck"
)

// consensusCases are the consensus strategies with the cluster kind and
// TTL their tests use (etcd leases count whole seconds).
var consensusCases = []struct {
	kind cluster.Kind
	ttl  time.Duration
	strs []string
}{
	{cluster.Etcd, time.Second, []string{"etcd-mutex", "etcd-fenced"}},
	{cluster.ZooKeeper, 500 * time.Millisecond, []string{"zk-lock", "zk-fenced"}},
}

// startConsensus starts a 3-member cluster of kind, stopped at test end;
// the test fails if a server process or goroutines outlive it.
func startConsensus(t *testing.T, kind cluster.Kind) *cluster.Cluster {
	t.Helper()
	leakcheck.AtEnd(t)
	goroutines := runtime.NumGoroutine()
	t.Cleanup(func() { checkGoroutines(t, goroutines) })
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := cluster.Start(ctx, cluster.Topology{Kind: kind}, cluster.Options{})
	if err != nil {
		t.Fatalf("cluster.Start %s: %v", kind, err)
	}
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Errorf("cluster.Stop: %v", err)
		}
	})
	return c
}

// checkGoroutines fails t when, 3 s after its end, more goroutines run
// than at its start (the Lockers' clients, sessions, keep-alives and
// given-up attempts must all end with Close).
func checkGoroutines(t *testing.T, before int) {
	deadline := time.Now().Add(3 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Errorf("goroutines: %d at start, %d after Close:\n%s", before, runtime.NumGoroutine(), buf[:runtime.Stack(buf, true)])
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// call returns a context for one lock call with deadline d.
func call(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// TestConsensusStrategies runs each etcd and ZooKeeper strategy against a
// real 3-member cluster: acquire, contention, release, a stale (token-
// checked) release that must not free another owner's lock, fencing
// tokens that strictly increase, KeyLease for the liveness probe, and Lost
// (for the held lease only, not for one the same session released) when
// the holder stops sending (its keep-alives or pings blocked at
// PointRenew, as a paused client's) past the TTL while another client
// takes the lock.
func TestConsensusStrategies(t *testing.T) {
	for _, cc := range consensusCases {
		t.Run(string(cc.kind), func(t *testing.T) {
			c := startConsensus(t, cc.kind)
			for _, name := range cc.strs {
				t.Run(name, func(t *testing.T) {
					s, err := strategies.Lookup(name)
					if err != nil {
						t.Fatal(err)
					}
					info := s.Info()
					if info.Server.String() != string(cc.kind) || info.Library == "" || info.Claims.Fencing != (name == "etcd-fenced" || name == "zk-fenced") {
						t.Errorf("Info: server %s, library %q, fencing %v", info.Server, info.Library, info.Claims.Fencing)
					}
					cfg := impl.Config{Endpoints: c.Addrs(), TTL: cc.ttl}
					mk := func(owner string, hook impl.Hook) impl.Locker {
						cfg := cfg
						cfg.Owner, cfg.Hook = owner, hook
						return newLocker(t, s, cfg)
					}
					key := "lb:" + name
					a, b := mk("a", nil), mk("b", nil)
					if st, ok := s.(strategies.ServerTTLer); ok != (cc.kind == cluster.Etcd) || ok && st.ServerTTL(100*time.Millisecond) != time.Second {
						t.Errorf("ServerTTLer %v", ok)
					}
					kl, ok := a.(strategies.KeyLeaser)
					if !ok {
						t.Fatalf("%s's Locker is no KeyLeaser", name)
					}
					if v, err := kl.KeyLease(call(t, 2*time.Second), key); err != nil || v != strategies.NotHeld {
						t.Errorf("KeyLease of a free key = %d, %v; want NotHeld", v, err)
					}

					la, err := a.Acquire(call(t, 2*time.Second), key)
					if err != nil {
						t.Fatalf("a: Acquire: %v", err)
					}
					if la.Lost == nil || !la.Validity.IsZero() || la.Token == "" {
						t.Errorf("lease: Lost %v, Validity %v, Token %q", la.Lost, la.Validity, la.Token)
					}
					if v, err := kl.KeyLease(call(t, 2*time.Second), key); err != nil || v <= 0 || v > cc.ttl.Milliseconds() {
						t.Errorf("KeyLease of a held key = %d ms, %v; want (0, %d]", v, err, cc.ttl.Milliseconds())
					}
					t0 := time.Now()
					if _, err := b.Acquire(call(t, 300*time.Millisecond), key); !errors.Is(err, impl.ErrNotAcquired) {
						t.Fatalf("b: Acquire of a held lock: %v, want ErrNotAcquired", err)
					}
					if d := time.Since(t0); d > time.Second {
						t.Errorf("b: a refused Acquire with a 300ms deadline took %v", d)
					}
					if _, err := a.Release(call(t, 2*time.Second), la); err != nil {
						t.Fatalf("a: Release: %v", err)
					}
					lb, err := b.Acquire(call(t, 2*time.Second), key)
					if err != nil {
						t.Fatalf("b: Acquire after a's release: %v", err)
					}
					// a's stale lease: its release must not free b's lock.
					if _, err := a.Release(call(t, 2*time.Second), la); !errors.Is(err, impl.ErrNotHeld) {
						t.Errorf("a: stale Release = %v, want ErrNotHeld", err)
					}
					if _, err := a.Acquire(call(t, 300*time.Millisecond), key); !errors.Is(err, impl.ErrNotAcquired) {
						t.Errorf("a: Acquire after its stale release: %v, want ErrNotAcquired (b holds)", err)
					}
					if _, err := b.Release(call(t, 2*time.Second), lb); err != nil {
						t.Fatalf("b: Release: %v", err)
					}
					// Free soon: a ZooKeeper attempt that gave up (a's above)
					// leaves its node queued until its turn, then deletes it.
					deadline := time.Now().Add(2 * time.Second)
					for {
						v, err := kl.KeyLease(call(t, 2*time.Second), key)
						if err == nil && v == strategies.NotHeld {
							break
						}
						if time.Now().After(deadline) {
							t.Fatalf("KeyLease 2s after release = %d, %v; want NotHeld", v, err)
						}
						time.Sleep(20 * time.Millisecond)
					}

					// Fencing tokens strictly increase across grants.
					if info.Claims.Fencing {
						last := int64(0)
						for i := range 6 {
							l := []impl.Locker{a, b}[i%2]
							lease, err := l.Acquire(call(t, 2*time.Second), key)
							if err != nil {
								t.Fatalf("grant %d: %v", i, err)
							}
							if lease.Fence <= last {
								t.Errorf("grant %d: fence %d after %d", i, lease.Fence, last)
							}
							last = lease.Fence
							if _, err := l.Release(call(t, 2*time.Second), lease); err != nil {
								t.Fatalf("grant %d: Release: %v", i, err)
							}
						}
					}

					// A holder that sends nothing past the TTL loses its
					// lease (Lost), and another client takes the lock.
					var paused atomic.Bool
					release := make(chan struct{})
					hook := func(ctx context.Context, p impl.Point) error {
						if p == impl.PointRenew && paused.Load() {
							select {
							case <-release:
							case <-ctx.Done():
								return ctx.Err()
							}
						}
						return nil
					}
					p := mk("paused", hook)
					// A lease the same session granted and released first:
					// the session's loss must not reach it (lost check).
					lr, err := p.Acquire(call(t, 2*time.Second), key+":released")
					if err != nil {
						t.Fatalf("paused client: Acquire of a second key: %v", err)
					}
					if _, err := p.Release(call(t, 2*time.Second), lr); err != nil {
						t.Fatalf("paused client: Release of the second key: %v", err)
					}
					lp, err := p.Acquire(call(t, 2*time.Second), key)
					if err != nil {
						t.Fatalf("paused client: Acquire: %v", err)
					}
					paused.Store(true)
					pauseStart := time.Now()
					var other *impl.Lease
					for other == nil && time.Since(pauseStart) < 4*cc.ttl+2*time.Second {
						other, _ = b.Acquire(call(t, 300*time.Millisecond), key)
						if other == nil {
							time.Sleep(50 * time.Millisecond)
						}
					}
					if other == nil {
						t.Fatalf("no other client acquired while the holder was paused for %v", time.Since(pauseStart))
					}
					t.Logf("%s: lock taken over %v after the holder stopped sending (TTL %v)", name, time.Since(pauseStart).Round(time.Millisecond), cc.ttl)
					close(release)
					select {
					case <-lp.Lost:
					case <-time.After(3 * time.Second):
						t.Errorf("Lost not closed 3s after the pause ended")
					}
					if isClosed(lr.Lost) {
						t.Errorf("Lost closed for a lease released before its session was lost")
					}
					if _, err := p.Release(call(t, 2*time.Second), lp); !errors.Is(err, impl.ErrNotHeld) {
						t.Errorf("release of the lost lease = %v, want ErrNotHeld", err)
					}
					if _, err := b.Release(call(t, 2*time.Second), other); err != nil {
						t.Errorf("b: Release: %v", err)
					}
				})
			}
		})
	}
}
