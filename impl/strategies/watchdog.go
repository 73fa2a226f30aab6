package strategies

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/impl"
)

// watchdog is token-lua plus a renewal goroutine per lease (Redisson's
// lock watchdog).
type watchdog struct{}

// Name returns "watchdog".
func (watchdog) Name() string { return "watchdog" }

// Info describes watchdog: token-lua with renewal; clients honour Lost.
func (watchdog) Info() impl.Info {
	return impl.Info{
		Summary: "acquire: SET k token NX PX ttl, then renew every TTL/3 by Lua compare-and-PEXPIRE until release; Lost fires when renewal fails; release: Lua compare-and-delete",
		Source:  "Redisson lock watchdog (RedissonBaseLock.renewExpiration, lockWatchdogTimeout/3)",
		Claims:  impl.Claims{AtomicAcquire: true, TokenRelease: true, Renewal: true},
		Policy:  impl.Policy{HonourLost: true},
		Nodes:   1,
	}
}

// New returns a watchdog Locker on cfg.Nodes[0] (exactly one node). It
// renews every cfg.RenewEvery (default TTL/3) and calls cfg.Hook at
// PointRenew before each renewal.
func (s watchdog) New(cfg impl.Config) (impl.Locker, error) {
	cfg, err := prepare(s.Name(), cfg, 1)
	if err != nil {
		return nil, err
	}
	if cfg.RenewEvery <= 0 {
		return nil, fmt.Errorf("watchdog: config: RenewEvery %v must be positive (TTL too short?)", cfg.RenewEvery)
	}
	t, err := newTokens(cfg.Owner)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &watchdogLocker{cfg: cfg, node: cfg.Nodes[0], tokens: t, ctx: ctx, cancel: cancel}, nil
}

type watchdogLocker struct {
	cfg    impl.Config
	node   redis.UniversalClient
	tokens *tokens
	// ctx ends at Close; every renewal goroutine runs under it.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// Acquire runs SET key token NX PX ttl and, on success, starts the lease's
// renewal. It returns a lease with Lost set, ErrNotAcquired, or an
// unknown-outcome error.
func (l *watchdogLocker) Acquire(ctx context.Context, key string) (*impl.Lease, error) {
	if err := l.ctx.Err(); err != nil {
		return nil, fmt.Errorf("watchdog: acquire %q: locker closed: %w", key, err)
	}
	lease, err := acquireToken(ctx, "watchdog", l.cfg, l.node, l.tokens, key)
	if err != nil {
		return nil, err
	}
	impl.StartRenewal(l.ctx, &l.wg, l.cfg, lease, func(ctx context.Context) (time.Duration, error) {
		return 0, extendToken(ctx, "watchdog", l.node, lease, l.cfg.TTL)
	})
	return lease, nil
}

// Release stops the lease's renewal, then deletes the key only if it still
// holds the lease's token: 0 and nil, ErrNotHeld (expired, lost, or taken by
// another owner), or an unknown-outcome error.
func (l *watchdogLocker) Release(ctx context.Context, lease *impl.Lease) (int, error) {
	if lease != nil {
		lease.StopRenewal()
	}
	return 0, releaseToken(ctx, "watchdog", l.node, lease)
}

// Close stops every renewal of this Locker and waits for them to end. Held
// keys are not deleted: they expire after their TTL.
func (l *watchdogLocker) Close() error {
	l.cancel()
	l.wg.Wait()
	return nil
}
