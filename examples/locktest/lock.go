// Package tokenlock is a team's Redis lock, the example of testing a Go
// lock from its own go test with lockbench's package locktest (see
// lock_test.go): SET key token NX PX ttl acquires, a Lua
// compare-and-delete releases (with Unchecked, a plain DEL: the release
// that deletes another owner's lock, which the test catches).
package tokenlock

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// Errors of Acquire and Release; any other error leaves the outcome
// unknown.
var (
	// ErrTaken: another owner holds the key.
	ErrTaken = errors.New("tokenlock: taken by another owner")
	// ErrNotHeld: the lock expired or another owner holds it.
	ErrNotHeld = errors.New("tokenlock: not held")
)

// Lock is a lock with a TTL on one Redis server.
type Lock struct {
	rdb redis.UniversalClient
	ttl time.Duration
	// Unchecked makes Release delete the key whoever holds it (the bug).
	Unchecked bool
}

// New returns a Lock on rdb whose grants live ttl.
func New(rdb redis.UniversalClient, ttl time.Duration) *Lock { return &Lock{rdb: rdb, ttl: ttl} }

// compareAndDelete deletes KEYS[1] if it holds ARGV[1]: 1, else 0.
var compareAndDelete = redis.NewScript(`if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) else return 0 end`)

// Acquire takes key once (no retry) and returns the grant's random token,
// ErrTaken, or another error (outcome unknown).
func (l *Lock) Acquire(ctx context.Context, key string) (string, error) {
	token := rand.Text()
	ok, err := l.rdb.SetNX(ctx, key, token, l.ttl).Result()
	switch {
	case err != nil:
		return "", fmt.Errorf("tokenlock: acquire %q: %w", key, err)
	case !ok:
		return "", fmt.Errorf("tokenlock: acquire %q: %w", key, ErrTaken)
	}
	return token, nil
}

// Release deletes key if it still holds token (any holder's with
// Unchecked): nil, ErrNotHeld, or another error (outcome unknown).
func (l *Lock) Release(ctx context.Context, key, token string) error {
	var n int64
	var err error
	if l.Unchecked {
		n, err = l.rdb.Del(ctx, key).Result()
	} else {
		n, err = compareAndDelete.Run(ctx, l.rdb, []string{key}, token).Int64()
	}
	switch {
	case err != nil:
		return fmt.Errorf("tokenlock: release %q: %w", key, err)
	case n == 0:
		return fmt.Errorf("tokenlock: release %q: %w", key, ErrNotHeld)
	}
	return nil
}
