package strategies

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/impl"
)

// tokenLua is SET k token NX PX ttl, released by a Lua compare-and-delete.
type tokenLua struct{}

// Name returns "token-lua".
func (tokenLua) Name() string { return "token-lua" }

// Info describes token-lua: atomic acquire, token-checked release.
func (tokenLua) Info() impl.Info {
	return impl.Info{
		Summary: "acquire: SET k token NX PX ttl; release: Lua compare-and-delete (GET == token then DEL)",
		Source:  "redis.io distlock page, single-instance section; the \"basic correct\" lock of the articles lockbench grew from",
		Claims:  impl.Claims{AtomicAcquire: true, TokenRelease: true},
		Nodes:   1,
	}
}

// New returns a token-lua Locker on cfg.Nodes[0] (exactly one node).
func (s tokenLua) New(cfg impl.Config) (impl.Locker, error) {
	sg, err := newSingle(s.Name(), cfg)
	if err != nil {
		return nil, err
	}
	return &tokenLuaLocker{single: sg}, nil
}

type tokenLuaLocker struct {
	single
}

// Acquire runs SET key token NX PX ttl: a lease, ErrNotAcquired if the key
// exists, or an unknown-outcome error.
func (l *tokenLuaLocker) Acquire(ctx context.Context, key string) (*impl.Lease, error) {
	return acquireToken(ctx, "token-lua", l.cfg, l.node, l.tokens, key)
}

// Release deletes the key only if it still holds the lease's token: 0 and
// nil, ErrNotHeld (expired or taken by another owner), or an unknown-outcome
// error.
func (l *tokenLuaLocker) Release(ctx context.Context, lease *impl.Lease) (int, error) {
	return 0, releaseToken(ctx, "token-lua", l.node, lease)
}

// Close does nothing: token-lua has no background work.
func (l *tokenLuaLocker) Close() error { return nil }

// Extend resets the lease's TTL if the key still holds its token
// (impl.Extender; the watchdog's compare-and-PEXPIRE, run when asked): nil,
// ErrNotHeld with reason expired (no key) or taken (another owner's), or
// an unknown-outcome error.
func (l *tokenLuaLocker) Extend(ctx context.Context, lease *impl.Lease) error {
	return extendToken(ctx, "token-lua", l.node, lease, l.cfg.TTL)
}

// extendToken is Extend for the single-node token strategies: the renew
// script on lease's key and token.
func extendToken(ctx context.Context, strategy string, node redis.Scripter, lease *impl.Lease, ttl time.Duration) error {
	if lease == nil {
		return fmt.Errorf("%s: extend of a nil lease: %w", strategy, impl.ErrNotHeld)
	}
	n, err := scriptRenew.Run(ctx, node, []string{lease.Key}, lease.Token, ms(ttl)).Int64()
	switch {
	case err != nil:
		return impl.WithReason(fmt.Errorf("%s: extend %q: %w", strategy, lease.Key, err), netReason(err))
	case n != 1:
		return impl.WithReason(fmt.Errorf("%s: extend %q: %w", strategy, lease.Key, impl.ErrNotHeld), notHeldReason(n))
	}
	return nil
}

// acquireToken runs SET key token NX PX ttl for a fresh token. Its
// errors carry the token tried (TriedToken): ErrNotAcquired with reason
// taken; ErrNotAcquired with reason unavailable when the command never
// reached the server (notSent); else an unknown outcome with netReason's.
func acquireToken(ctx context.Context, strategy string, cfg impl.Config, node redis.UniversalClient, t *tokens, key string) (*impl.Lease, error) {
	start := cfg.Now()
	token := t.next()
	ok, err := setNXPX(ctx, node, key, token, cfg.TTL)
	switch {
	case notSent(err):
		// The command provably never reached the server (a refused dial, a
		// closed client, no free connection): a certain "no", as Redlock
		// counts such a node (tally), not an unknown outcome.
		return nil, impl.WithToken(impl.WithReason(fmt.Errorf("%s: acquire %q: %w: %w", strategy, key, impl.ErrNotAcquired, err), impl.ReasonUnavailable), token)
	case err != nil:
		return nil, impl.WithToken(impl.WithReason(fmt.Errorf("%s: acquire %q: %w", strategy, key, err), netReason(err)), token)
	case !ok:
		return nil, notAcquired(fmt.Errorf("%s: acquire %q: %w", strategy, key, impl.ErrNotAcquired), token)
	}
	return &impl.Lease{Key: key, Token: token, Start: start, End: cfg.Now()}, nil
}
