package impl

import (
	"context"
	"errors"
	"fmt"

	"github.com/bsm/redislock"
)

// redislockAdapter runs github.com/bsm/redislock on one node.
type redislockAdapter struct{}

// Name returns "redislock".
func (redislockAdapter) Name() string { return "redislock" }

// Info describes the redislock adapter.
func (redislockAdapter) Info() Info {
	return Info{
		Summary: "library bsm/redislock: Client.Obtain without retry (Lua SET k token NX PX ttl); release: Lock.Release (Lua compare-and-delete)",
		Source:  "github.com/bsm/redislock v0.9.4",
		Claims:  Claims{AtomicAcquire: true, TokenRelease: true},
		Nodes:   1,
	}
}

// New returns a redislock Locker on cfg.Nodes[0] (exactly one node). Tokens
// are the library's random ones: its obtain script treats a stored value
// that starts with the caller's token as the caller's own lock, so
// prefix-sharing tokens like "owner:nonce:1" and "owner:nonce:12" must not
// be given to it.
func (s redislockAdapter) New(cfg Config) (Locker, error) {
	cfg, err := prepare(s.Name(), cfg, 1)
	if err != nil {
		return nil, err
	}
	return &redislockLocker{cfg: cfg, client: redislock.New(cfg.Nodes[0])}, nil
}

type redislockLocker struct {
	cfg    Config
	client *redislock.Client
}

// Acquire calls Obtain once (NoRetry): a lease, ErrNotAcquired for the
// library's ErrNotObtained, or an unknown-outcome error.
func (l *redislockLocker) Acquire(ctx context.Context, key string) (*Lease, error) {
	start := l.cfg.Now()
	lock, err := l.client.Obtain(ctx, key, l.cfg.TTL, &redislock.Options{RetryStrategy: redislock.NoRetry()})
	switch {
	case errors.Is(err, redislock.ErrNotObtained):
		return nil, fmt.Errorf("redislock: acquire %q: %v: %w", key, err, ErrNotAcquired)
	case err != nil:
		return nil, fmt.Errorf("redislock: acquire %q: %w", key, err)
	}
	return &Lease{Key: key, Token: lock.Token(), Start: start, End: l.cfg.Now(), state: lock}, nil
}

// Release calls Lock.Release: 0 and nil, ErrNotHeld for the library's
// ErrLockNotHeld, or an unknown-outcome error.
func (l *redislockLocker) Release(ctx context.Context, lease *Lease) (int, error) {
	lock, _ := leaseState[*redislock.Lock](lease)
	if lock == nil {
		return 0, fmt.Errorf("redislock: release of a lease redislock did not grant: %w", ErrNotHeld)
	}
	switch err := lock.Release(ctx); {
	case errors.Is(err, redislock.ErrLockNotHeld):
		return 0, fmt.Errorf("redislock: release %q: %v: %w", lease.Key, err, ErrNotHeld)
	case err != nil:
		return 0, fmt.Errorf("redislock: release %q: %w", lease.Key, err)
	}
	return 0, nil
}

// Close does nothing: the adapter starts no background work.
func (l *redislockLocker) Close() error { return nil }
