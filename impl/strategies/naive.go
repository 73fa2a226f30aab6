package strategies

import (
	"context"
	"errors"
	"fmt"

	"github.com/lockbench/lockbench/impl"
)

// naive is SETNX then PEXPIRE in two round trips, released by DEL.
type naive struct{}

// Name returns "naive".
func (naive) Name() string { return "naive" }

// Info describes naive: it claims nothing; its crash point is between
// SETNX and PEXPIRE.
func (naive) Info() impl.Info {
	return impl.Info{
		Summary:    "acquire: SETNX k token, then PEXPIRE k ttl (two round trips); release: DEL k (no token check)",
		Source:     "the first attempt in the Chinese articles on Redis locks lockbench grew from (\"SETNX + EXPIRE\", e.g. \"Redis 分布式锁：从 SETNX 到 Redlock 的完整指南\")",
		Nodes:      1,
		CrashPoint: impl.PointAfterSetNX,
	}
}

// New returns a naive Locker on cfg.Nodes[0] (exactly one node).
func (s naive) New(cfg impl.Config) (impl.Locker, error) {
	sg, err := newSingle(s.Name(), cfg)
	if err != nil {
		return nil, err
	}
	return &naiveLocker{single: sg}, nil
}

type naiveLocker struct {
	single
}

// Acquire runs SETNX, calls the Hook at PointAfterSetNX, then PEXPIRE. A
// crash at the hook (ErrCrashed) leaves the key without a TTL: a deadlock.
// A failed PEXPIRE returns an unknown-outcome error: the key is set but may
// have no TTL, and the client does not believe it holds the lock.
func (l *naiveLocker) Acquire(ctx context.Context, key string) (*impl.Lease, error) {
	start := l.cfg.Now()
	token := l.tokens.next()
	set, err := l.node.Do(ctx, "SETNX", key, token).Int64()
	if err != nil {
		return nil, impl.WithToken(impl.WithReason(fmt.Errorf("naive: acquire %q: SETNX: %w", key, err), netReason(err)), token)
	}
	if set != 1 {
		return nil, notAcquired(fmt.Errorf("naive: acquire %q: %w", key, impl.ErrNotAcquired), token)
	}
	if l.cfg.Hook != nil {
		if err := l.cfg.Hook(ctx, impl.PointAfterSetNX); errors.Is(err, impl.ErrCrashed) {
			return nil, impl.WithToken(impl.ErrCrashed, token)
		} else if err != nil {
			return nil, impl.WithToken(fmt.Errorf("naive: acquire %q: hook after SETNX (key left without TTL): %w", key, err), token)
		}
	}
	// The result is ignored, as naive code does: 0 means someone deleted
	// the key in between, which this strategy does not notice.
	if err := l.node.PExpire(ctx, key, l.cfg.TTL).Err(); err != nil {
		return nil, impl.WithToken(impl.WithReason(fmt.Errorf("naive: acquire %q: PEXPIRE after SETNX (key may have no TTL): %w", key, err), netReason(err)), token)
	}
	return &impl.Lease{Key: key, Token: token, Start: start, End: l.cfg.Now()}, nil
}

// Release runs DEL on the key, whoever holds it. It returns 0 and nil if a
// key was deleted, ErrNotHeld if there was none, or an unknown-outcome error.
func (l *naiveLocker) Release(ctx context.Context, lease *impl.Lease) (int, error) {
	return 0, releaseDel(ctx, "naive", l.node, lease)
}

// Close does nothing: naive has no background work.
func (l *naiveLocker) Close() error { return nil }
