package tokenlock_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"example.com/tokenlock"
	"github.com/lockbench/lockbench/locktest"
)

// lock is tokenlock.Lock in locktest's terms.
type lock struct{ *tokenlock.Lock }

func (l lock) Acquire(ctx context.Context, key string) (locktest.Lease, error) {
	token, err := l.Lock.Acquire(ctx, key)
	if errors.Is(err, tokenlock.ErrTaken) {
		err = fmt.Errorf("%w: %w", locktest.ErrNotAcquired, err)
	}
	return locktest.Lease{Token: token}, err
}

func (l lock) Release(ctx context.Context, lease locktest.Lease) error {
	err := l.Lock.Release(ctx, lease.Key, lease.Token)
	if errors.Is(err, tokenlock.ErrNotHeld) {
		err = fmt.Errorf("%w: %w", locktest.ErrNotHeld, err)
	}
	return err
}

func testLock(t *testing.T, unchecked bool) {
	locktest.Run(t, func(c locktest.Clients) (locktest.Lock, error) {
		l := tokenlock.New(c.Redis[0], c.TTL)
		l.Unchecked = unchecked
		return lock{l}, nil
	}, locktest.Claims{AtomicAcquire: true, TokenRelease: true})
}

func TestLock(t *testing.T) { testLock(t, false) }
