package strategies

import (
	"context"
	_ "embed"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/impl"
)

var (
	//go:embed lua/reentrant_acquire.lua
	luaReentrantAcquireSrc string
	//go:embed lua/reentrant_release.lua
	luaReentrantReleaseSrc string

	scriptReentrantAcquire = redis.NewScript(luaReentrantAcquireSrc)
	scriptReentrantRelease = redis.NewScript(luaReentrantReleaseSrc)
)

// reentrant is Redisson's hash lock: field = owner, value = reentrancy count.
type reentrant struct{}

// Name returns "reentrant".
func (reentrant) Name() string { return "reentrant" }

// Info describes reentrant: a counted, owner-checked hash lock.
func (reentrant) Info() impl.Info {
	return impl.Info{
		Summary: "acquire: Lua on a hash (if free or ours: HINCRBY k owner 1, PEXPIRE k ttl); release: Lua HINCRBY -1 (PEXPIRE while > 0), DEL at 0",
		Source:  "Redisson RedissonLock (tryLockInnerAsync / unlockInnerAsync), without the watchdog",
		Claims:  impl.Claims{AtomicAcquire: true, TokenRelease: true, Reentrant: true},
		Nodes:   1,
	}
}

// New returns a reentrant Locker on cfg.Nodes[0] (exactly one node). Its
// owner field is "Owner:nonce", the same for every acquire of this Locker.
func (s reentrant) New(cfg impl.Config) (impl.Locker, error) {
	cfg, err := prepare(s.Name(), cfg, 1)
	if err != nil {
		return nil, err
	}
	t, err := newTokens(cfg.Owner)
	if err != nil {
		return nil, err
	}
	return &reentrantLocker{cfg: cfg, node: cfg.Nodes[0], field: t.prefix}, nil
}

type reentrantLocker struct {
	cfg   impl.Config
	node  redis.UniversalClient
	field string
}

// Acquire takes the lock if it is free or already held by this Locker, and
// resets its TTL. The lease's Count is the reentrancy count after this
// acquire (1 for an outermost acquire) and its Token the owner field. It
// returns ErrNotAcquired if another owner holds the key, or an
// unknown-outcome error.
func (l *reentrantLocker) Acquire(ctx context.Context, key string) (*impl.Lease, error) {
	start := l.cfg.Now()
	n, err := scriptReentrantAcquire.Run(ctx, l.node, []string{key}, l.field, ms(l.cfg.TTL)).Int64()
	switch {
	case err != nil:
		return nil, impl.WithToken(impl.WithReason(fmt.Errorf("reentrant: acquire %q: %w", key, err), netReason(err)), l.field)
	case n == 0:
		return nil, notAcquired(fmt.Errorf("reentrant: acquire %q: %w", key, impl.ErrNotAcquired), l.field)
	}
	return &impl.Lease{Key: key, Token: l.field, Count: int(n), Start: start, End: l.cfg.Now()}, nil
}

// Release gives back one level: it returns the remaining count (0 when the
// key was deleted), ErrNotHeld if this owner does not hold the key (reason
// expired: no key; taken: another owner's), or an unknown-outcome error. While the count
// stays above 0 the TTL is reset.
func (l *reentrantLocker) Release(ctx context.Context, lease *impl.Lease) (int, error) {
	if lease == nil {
		return 0, fmt.Errorf("reentrant: release of a nil lease: %w", impl.ErrNotHeld)
	}
	n, err := scriptReentrantRelease.Run(ctx, l.node, []string{lease.Key}, lease.Token, ms(l.cfg.TTL)).Int64()
	switch {
	case err != nil:
		return 0, impl.WithReason(fmt.Errorf("reentrant: release %q: %w", lease.Key, err), netReason(err))
	case n == -1:
		return 0, impl.WithReason(fmt.Errorf("reentrant: release %q: %w", lease.Key, impl.ErrNotHeld), impl.ReasonTaken)
	case n < 0:
		return 0, impl.WithReason(fmt.Errorf("reentrant: release %q: %w", lease.Key, impl.ErrNotHeld), impl.ReasonExpired)
	}
	return int(n), nil
}

// Close does nothing: reentrant has no background work.
func (l *reentrantLocker) Close() error { return nil }
