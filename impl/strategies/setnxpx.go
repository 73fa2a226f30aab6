package strategies

import (
	"context"

	"github.com/lockbench/lockbench/impl"
)

// setNXPXStrategy is SET k v NX PX ttl, released by DEL.
type setNXPXStrategy struct{}

// Name returns "set-nx-px".
func (setNXPXStrategy) Name() string { return "set-nx-px" }

// Info describes set-nx-px: atomic acquire, unchecked release.
func (setNXPXStrategy) Info() impl.Info {
	return impl.Info{
		Summary: "acquire: SET k token NX PX ttl (one command); release: DEL k (no token check: may delete another client's lock)",
		Source:  "the second step in the Chinese articles on Redis locks lockbench grew from (\"SET NX PX\", e.g. \"Redis 分布式锁实现：从 SET NX 到 Redlock 算法\")",
		Claims:  impl.Claims{AtomicAcquire: true},
		Nodes:   1,
	}
}

// New returns a set-nx-px Locker on cfg.Nodes[0] (exactly one node).
func (s setNXPXStrategy) New(cfg impl.Config) (impl.Locker, error) {
	sg, err := newSingle(s.Name(), cfg)
	if err != nil {
		return nil, err
	}
	return &setNXPXLocker{single: sg}, nil
}

type setNXPXLocker struct {
	single
}

// Acquire runs SET key token NX PX ttl: a lease, ErrNotAcquired if the key
// exists, or an unknown-outcome error.
func (l *setNXPXLocker) Acquire(ctx context.Context, key string) (*impl.Lease, error) {
	return acquireToken(ctx, "set-nx-px", l.cfg, l.node, l.tokens, key)
}

// Release runs DEL on the key, whoever holds it: after the lease expired it
// deletes the next holder's lock (the documented flaw). It returns 0 and nil
// if a key was deleted, ErrNotHeld if there was none, or an unknown-outcome
// error.
func (l *setNXPXLocker) Release(ctx context.Context, lease *impl.Lease) (int, error) {
	return 0, releaseDel(ctx, "set-nx-px", l.node, lease)
}

// Close does nothing: set-nx-px has no background work.
func (l *setNXPXLocker) Close() error { return nil }
