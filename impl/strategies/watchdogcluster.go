package strategies

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/lockbench/lockbench/impl"
)

// watchdogCluster is watchdog on a Redis Cluster: token-lua-cluster's
// acquire and release (SET NX PX and the compare-and-delete on the
// primary of the key's slot, a retried command after an attempt that may
// have run reported as an unknown outcome) plus watchdog's renewal (a
// compare-and-PEXPIRE every TTL/3, Lost when it fails), through go-redis's
// cluster client, which follows MOVED and ASK for the renewal too. A
// renewal retried after an attempt that may have run needs no such care:
// extending twice is extending.
type watchdogCluster struct{}

// Name returns "watchdog-cluster".
func (watchdogCluster) Name() string { return "watchdog-cluster" }

// Info describes watchdog-cluster: watchdog through a cluster client on
// redis-cluster:3+3.
func (watchdogCluster) Info() impl.Info {
	return impl.Info{
		Summary: "watchdog on a Redis Cluster (3 primaries + 3 replicas) through go-redis's cluster client: acquire SET k token NX PX ttl on the primary of k's slot, renew every TTL/3 by Lua compare-and-PEXPIRE there (following MOVED and ASK), Lost when a renewal fails; release Lua compare-and-delete",
		Source:  "Redisson lock watchdog (RedissonBaseLock.renewExpiration, lockWatchdogTimeout/3) on a Redis Cluster (redis.io cluster specification: asynchronous replication, a failover can lose acknowledged writes)",
		Claims:  impl.Claims{AtomicAcquire: true, TokenRelease: true, Renewal: true},
		Policy:  impl.Policy{HonourLost: true},
		Nodes:   1,
		Cluster: true,
	}
}

// New returns a watchdog-cluster Locker on cfg.Nodes[0], a cluster
// client (or any client, on which it is watchdog). It renews every
// cfg.RenewEvery (default TTL/3) and calls cfg.Hook at PointRenew before
// each renewal.
func (s watchdogCluster) New(cfg impl.Config) (impl.Locker, error) {
	l, err := tokenLuaCluster{}.New(cfg)
	if err != nil {
		return nil, err
	}
	tl := l.(*tokenLuaClusterLocker)
	tl.name = s.Name()
	if tl.cfg.RenewEvery <= 0 {
		return nil, fmt.Errorf("%s: config: RenewEvery %v must be positive (TTL too short?)", s.Name(), tl.cfg.RenewEvery)
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &watchdogClusterLocker{tl: tl, ctx: ctx, cancel: cancel}, nil
}

type watchdogClusterLocker struct {
	tl *tokenLuaClusterLocker
	// ctx ends at Close; every renewal goroutine runs under it.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// Acquire is token-lua-cluster's acquire and, on success, starts the
// lease's renewal: a lease with Lost set, ErrNotAcquired, or an
// unknown-outcome error.
func (l *watchdogClusterLocker) Acquire(ctx context.Context, key string) (*impl.Lease, error) {
	if err := l.ctx.Err(); err != nil {
		return nil, fmt.Errorf("watchdog-cluster: acquire %q: locker closed: %w", key, err)
	}
	lease, err := l.tl.Acquire(ctx, key)
	if err != nil {
		return nil, err
	}
	cfg, node := l.tl.cfg, l.tl.node
	impl.StartRenewal(l.ctx, &l.wg, cfg, lease, func(ctx context.Context) (time.Duration, error) {
		return 0, extendToken(ctx, "watchdog-cluster", node, lease, cfg.TTL)
	})
	return lease, nil
}

// Release stops the lease's renewal, then is token-lua-cluster's release:
// 0 and nil, ErrNotHeld, or an unknown-outcome error.
func (l *watchdogClusterLocker) Release(ctx context.Context, lease *impl.Lease) (int, error) {
	if lease != nil {
		lease.StopRenewal()
	}
	return l.tl.Release(ctx, lease)
}

// Close stops every renewal of this Locker and waits for them to end. Held
// keys are not deleted: they expire after their TTL.
func (l *watchdogClusterLocker) Close() error {
	l.cancel()
	l.wg.Wait()
	return nil
}
