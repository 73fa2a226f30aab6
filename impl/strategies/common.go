package strategies

import (
	"context"
	"crypto/rand"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/impl"
)

// Lua shared by the token strategies.
var (
	//go:embed lua/release.lua
	luaReleaseSrc string
	//go:embed lua/renew.lua
	luaRenewSrc string

	// scriptRelease deletes KEYS[1] if its value is ARGV[1]; returns 1,
	// 0 (another owner's) or -1 (no key).
	scriptRelease = redis.NewScript(luaReleaseSrc)
	// scriptRenew sets KEYS[1]'s TTL to ARGV[2] ms if its value is ARGV[1];
	// returns 1, 0 (another owner's) or -1 (no key).
	scriptRenew = redis.NewScript(luaRenewSrc)
)

// validate checks the required fields. nodes is the exact node count the
// strategy needs, or 0 for "at least one".
func validate(c impl.Config, strategy string, nodes int) error {
	switch {
	case len(c.Nodes) == 0:
		return fmt.Errorf("%s: config: no Redis nodes", strategy)
	case nodes > 0 && len(c.Nodes) != nodes:
		return fmt.Errorf("%s: config: needs %d Redis node(s), got %d", strategy, nodes, len(c.Nodes))
	case c.TTL < time.Millisecond:
		return fmt.Errorf("%s: config: TTL %v is below 1ms", strategy, c.TTL)
	case c.Owner == "":
		return fmt.Errorf("%s: config: empty Owner", strategy)
	case c.DriftFactor < 0 || c.NodeTimeout < 0 || c.RenewEvery < 0 || c.WaitTimeout < 0:
		return fmt.Errorf("%s: config: negative DriftFactor, NodeTimeout, RenewEvery or WaitTimeout", strategy)
	}
	for i, n := range c.Nodes {
		if n == nil {
			return fmt.Errorf("%s: config: node %d is nil", strategy, i)
		}
	}
	return nil
}

// prepare validates cfg and applies its defaults.
func prepare(strategy string, cfg impl.Config, nodes int) (impl.Config, error) {
	if err := validate(cfg, strategy, nodes); err != nil {
		return impl.Config{}, err
	}
	return cfg.WithDefaults(), nil
}

// single is the state every single-node Locker shares: its validated
// config, its one node and its token source.
type single struct {
	cfg    impl.Config
	node   redis.UniversalClient
	tokens *tokens
}

// newSingle validates cfg for a single-node strategy (exactly one node),
// applies the defaults and builds the shared state.
func newSingle(strategy string, cfg impl.Config) (single, error) {
	cfg, err := prepare(strategy, cfg, 1)
	if err != nil {
		return single{}, err
	}
	t, err := newTokens(cfg.Owner)
	if err != nil {
		return single{}, err
	}
	return single{cfg: cfg, node: cfg.Nodes[0], tokens: t}, nil
}

// tokens makes the owner tokens of one Locker: "owner:nonce:n" with a random
// nonce per Locker and n counting grants, so tokens never repeat, not even
// for a client restarted under the same Owner.
type tokens struct {
	prefix string
	n      atomic.Uint64
}

// newTokens returns a token source for owner.
func newTokens(owner string) (*tokens, error) {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, fmt.Errorf("impl: token nonce: %w", err)
	}
	return &tokens{prefix: owner + ":" + hex.EncodeToString(b[:])}, nil
}

// next returns a fresh token.
func (t *tokens) next() string {
	return t.prefix + ":" + strconv.FormatUint(t.n.Add(1), 10)
}

// ms formats d as whole milliseconds for PX and PEXPIRE arguments.
func ms(d time.Duration) int64 { return d.Milliseconds() }

// setNXPX runs SET key value NX PX ttl: true if set, false if the key exists.
func setNXPX(ctx context.Context, c redis.UniversalClient, key, value string, ttl time.Duration) (bool, error) {
	err := c.Do(ctx, "SET", key, value, "NX", "PX", ms(ttl)).Err()
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, redis.Nil):
		return false, nil
	default:
		return false, err
	}
}

// compareAndDelete runs the release script: true if key held token and was
// deleted, false if it held something else or nothing.
func compareAndDelete(ctx context.Context, c redis.Scripter, key, token string) (bool, error) {
	n, err := scriptRelease.Run(ctx, c, []string{key}, token).Int64()
	if err != nil {
		return false, err
	}
	return n == 1, nil
}

// notHeldReason is the reason of a compare-and-X script's "no": taken for
// 0 (another owner's token), expired for -1 (no key).
func notHeldReason(n int64) string {
	if n < 0 {
		return impl.ReasonExpired
	}
	return impl.ReasonTaken
}

// releaseToken is Release for the single-node token strategies: nil if the
// caller's token was deleted, ErrNotHeld if the key held another value
// (reason taken) or nothing (reason expired), another error if the outcome
// is unknown.
func releaseToken(ctx context.Context, strategy string, c redis.Scripter, l *impl.Lease) error {
	if l == nil {
		return fmt.Errorf("%s: release of a nil lease: %w", strategy, impl.ErrNotHeld)
	}
	n, err := scriptRelease.Run(ctx, c, []string{l.Key}, l.Token).Int64()
	switch {
	case err != nil:
		return impl.WithReason(fmt.Errorf("%s: release %q: %w", strategy, l.Key, err), netReason(err))
	case n != 1:
		return impl.WithReason(fmt.Errorf("%s: release %q: %w", strategy, l.Key, impl.ErrNotHeld), notHeldReason(n))
	}
	return nil
}

// releaseDel is Release for the strategies without a token check: DEL key.
// nil if a key was deleted (whoever held it), ErrNotHeld (reason expired)
// if none existed.
func releaseDel(ctx context.Context, strategy string, c redis.Cmdable, l *impl.Lease) error {
	if l == nil {
		return fmt.Errorf("%s: release of a nil lease: %w", strategy, impl.ErrNotHeld)
	}
	n, err := c.Del(ctx, l.Key).Result()
	switch {
	case err != nil:
		return impl.WithReason(fmt.Errorf("%s: release %q: DEL: %w", strategy, l.Key, err), netReason(err))
	case n == 0:
		return impl.WithReason(fmt.Errorf("%s: release %q: DEL found no key: %w", strategy, l.Key, impl.ErrNotHeld), impl.ReasonExpired)
	}
	return nil
}

// netReason is the reason an unknown outcome's error states: cancelled
// when it wraps ErrCancelled, unavailable when the server could not be
// reached or did not answer (a network error: refused, reset, a timeout;
// a closed client; no free connection), else "".
func netReason(err error) string {
	var ne net.Error
	switch {
	case err == nil:
		return ""
	case errors.Is(err, impl.ErrCancelled):
		return impl.ReasonCancelled
	case notSent(err), errors.As(err, &ne), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE), errors.Is(err, context.DeadlineExceeded):
		return impl.ReasonUnavailable
	}
	return ""
}

// notSent reports whether err proves the command never reached the server:
// the dial failed (connection refused, dial timeout), the client is closed,
// or no pooled connection became free. Any other error (a write or read
// failure, a read timeout) leaves the outcome unknown.
func notSent(err error) bool {
	var op *net.OpError
	switch {
	case err == nil:
		return false
	case errors.As(err, &op) && op.Op == "dial":
		return true
	default:
		return errors.Is(err, redis.ErrClosed) || errors.Is(err, redis.ErrPoolTimeout) || errors.Is(err, redis.ErrPoolExhausted)
	}
}

// leaseState returns the lease's strategy-private state as T.
func leaseState[T any](l *impl.Lease) (T, bool) {
	var zero T
	if l == nil {
		return zero, false
	}
	v, ok := l.State.(T)
	return v, ok
}

// notAcquired returns err (wrapping ErrNotAcquired: the key was held)
// with reason taken and the token tried.
func notAcquired(err error, token string) error {
	return impl.WithToken(impl.WithReason(err, impl.ReasonTaken), token)
}

// boolRenew adapts a renewal that says only whether it extended (true),
// found the key gone or another owner's (false, reason: none stated) or
// failed (an error: unknown).
func boolRenew(f func(ctx context.Context) (bool, error)) func(ctx context.Context) (time.Duration, error) {
	return func(ctx context.Context) (time.Duration, error) {
		ok, err := f(ctx)
		if err == nil && !ok {
			err = impl.ErrNotHeld
		}
		return 0, err
	}
}
