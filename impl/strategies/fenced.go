package strategies

import (
	"context"
	_ "embed"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/impl"
)

var (
	//go:embed lua/fenced_acquire.lua
	luaFencedAcquireSrc string

	scriptFencedAcquire = redis.NewScript(luaFencedAcquireSrc)
)

// FenceSuffix is appended to a lock key to name its fencing counter
// (fenced strategy): key "k" counts its grants in "k:fence".
const FenceSuffix = ":fence"

// fenced is token-lua plus a fencing token from INCR, in one script.
type fenced struct{}

// Name returns "fenced".
func (fenced) Name() string { return "fenced" }

// Info describes fenced: token-lua whose grants carry fencing tokens.
func (fenced) Info() impl.Info {
	return impl.Info{
		Summary: "acquire: Lua SET k token NX PX ttl and, if set, INCR k" + FenceSuffix + " (the fencing token), atomically; release: Lua compare-and-delete",
		Source:  "Martin Kleppmann, \"How to do distributed locking\" (2016): fencing tokens checked by the protected resource",
		Claims:  impl.Claims{AtomicAcquire: true, TokenRelease: true, Fencing: true},
		Nodes:   1,
	}
}

// New returns a fenced Locker on cfg.Nodes[0] (exactly one node).
func (s fenced) New(cfg impl.Config) (impl.Locker, error) {
	sg, err := newSingle(s.Name(), cfg)
	if err != nil {
		return nil, err
	}
	return &fencedLocker{single: sg}, nil
}

type fencedLocker struct {
	single
}

// Acquire sets the key and increments its fencing counter in one script.
// The lease's Fence is the new counter value (>= 1; strictly increasing
// across grants of the key while the counter survives). It returns
// ErrNotAcquired if the key exists, or an unknown-outcome error.
func (l *fencedLocker) Acquire(ctx context.Context, key string) (*impl.Lease, error) {
	return acquireFenced(ctx, "fenced", l.single, key, key+FenceSuffix)
}

// acquireFenced runs the fenced acquire script on sg's node for key with
// its fencing counter at fenceKey: a lease whose Fence is the new counter
// value, ErrNotAcquired (the key exists), or an unknown-outcome error;
// errors name strategy and carry the token tried.
func acquireFenced(ctx context.Context, strategy string, sg single, key, fenceKey string) (*impl.Lease, error) {
	start := sg.cfg.Now()
	token := sg.tokens.next()
	fence, err := scriptFencedAcquire.Run(ctx, sg.node, []string{key, fenceKey}, token, ms(sg.cfg.TTL)).Int64()
	switch {
	case err != nil:
		return nil, impl.WithToken(impl.WithReason(fmt.Errorf("%s: acquire %q: %w", strategy, key, err), netReason(err)), token)
	case fence == 0:
		return nil, notAcquired(fmt.Errorf("%s: acquire %q: %w", strategy, key, impl.ErrNotAcquired), token)
	}
	return &impl.Lease{Key: key, Token: token, Fence: fence, Start: start, End: sg.cfg.Now()}, nil
}

// Release deletes the key only if it still holds the lease's token: 0 and
// nil, ErrNotHeld, or an unknown-outcome error. The fencing counter stays.
func (l *fencedLocker) Release(ctx context.Context, lease *impl.Lease) (int, error) {
	return 0, releaseToken(ctx, "fenced", l.node, lease)
}

// Close does nothing: fenced has no background work.
func (l *fencedLocker) Close() error { return nil }

// Extend resets the lease's TTL if the key still holds its token
// (impl.Extender; see extendToken). The fencing counter is untouched.
func (l *fencedLocker) Extend(ctx context.Context, lease *impl.Lease) error {
	return extendToken(ctx, "fenced", l.node, lease, l.cfg.TTL)
}
