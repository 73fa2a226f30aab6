package impl

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// tokenLua is SET k token NX PX ttl, released by a Lua compare-and-delete.
type tokenLua struct{}

// Name returns "token-lua".
func (tokenLua) Name() string { return "token-lua" }

// Info describes token-lua: atomic acquire, token-checked release.
func (tokenLua) Info() Info {
	return Info{
		Summary: "acquire: SET k token NX PX ttl; release: Lua compare-and-delete (GET == token then DEL)",
		Source:  "redis.io distlock page, single-instance section; the \"basic correct\" lock of the articles lockbench grew from",
		Claims:  Claims{AtomicAcquire: true, TokenRelease: true},
		Nodes:   1,
	}
}

// New returns a token-lua Locker on cfg.Nodes[0] (exactly one node).
func (s tokenLua) New(cfg Config) (Locker, error) {
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
func (l *tokenLuaLocker) Acquire(ctx context.Context, key string) (*Lease, error) {
	return acquireToken(ctx, "token-lua", l.cfg, l.node, l.tokens, key)
}

// Release deletes the key only if it still holds the lease's token: 0 and
// nil, ErrNotHeld (expired or taken by another owner), or an unknown-outcome
// error.
func (l *tokenLuaLocker) Release(ctx context.Context, lease *Lease) (int, error) {
	return 0, releaseToken(ctx, "token-lua", l.node, lease)
}

// Close does nothing: token-lua has no background work.
func (l *tokenLuaLocker) Close() error { return nil }

// acquireToken runs SET key token NX PX ttl for a fresh token.
func acquireToken(ctx context.Context, strategy string, cfg Config, node redis.UniversalClient, t *tokens, key string) (*Lease, error) {
	start := cfg.Now()
	token := t.next()
	ok, err := setNXPX(ctx, node, key, token, cfg.TTL)
	switch {
	case err != nil:
		return nil, fmt.Errorf("%s: acquire %q: %w", strategy, key, err)
	case !ok:
		return nil, fmt.Errorf("%s: acquire %q: %w", strategy, key, ErrNotAcquired)
	}
	return &Lease{Key: key, Token: token, Start: start, End: cfg.Now()}, nil
}
