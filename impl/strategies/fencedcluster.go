package strategies

import (
	"context"
	"errors"
	"fmt"

	"github.com/lockbench/lockbench/impl"
)

// fencedCluster is fenced on a Redis Cluster: the same script (SET NX PX
// and, if set, INCR of the fencing counter) through go-redis's cluster
// client. A script must touch one hash slot, so the counter of key k is
// "k:fence{k}" (fenceKeyInCluster): its hash tag is k, the same slot as k,
// and it keeps the run's key prefix. As token-lua-cluster, a script the
// client retried after an attempt that may have run is an unknown
// outcome (it may also have taken a fencing number: tokens still
// increase).
type fencedCluster struct{}

// Name returns "fenced-cluster".
func (fencedCluster) Name() string { return "fenced-cluster" }

// Info describes fenced-cluster: fenced through a cluster client on
// redis-cluster:3+3.
func (fencedCluster) Info() impl.Info {
	return impl.Info{
		Summary: "fenced on a Redis Cluster (3 primaries + 3 replicas) through go-redis's cluster client: acquire Lua SET k token NX PX ttl and, if set, INCR k:fence{k} (the fencing token; the hash tag puts it in k's slot), atomically on the primary of k's slot; release Lua compare-and-delete there; MOVED and ASK are followed",
		Source:  "Martin Kleppmann, \"How to do distributed locking\" (2016): fencing tokens checked by the protected resource; on a Redis Cluster (redis.io cluster specification: hash tags keep keys in one slot, asynchronous replication)",
		Claims:  impl.Claims{AtomicAcquire: true, TokenRelease: true, Fencing: true},
		Nodes:   1,
		Cluster: true,
	}
}

// fenceKeyInCluster names the fencing counter of key on a Redis Cluster
// (fenced-cluster): key + FenceSuffix + "{" + key + "}", in key's slot.
func fenceKeyInCluster(key string) string { return key + FenceSuffix + "{" + key + "}" }

// New returns a fenced-cluster Locker on cfg.Nodes[0], a cluster client
// (or any client, on which it is fenced with another counter name).
func (s fencedCluster) New(cfg impl.Config) (impl.Locker, error) {
	l, err := tokenLuaCluster{}.New(cfg)
	if err != nil {
		return nil, err
	}
	tl := l.(*tokenLuaClusterLocker)
	tl.name = s.Name()
	return &fencedClusterLocker{tl: tl}, nil
}

type fencedClusterLocker struct {
	tl *tokenLuaClusterLocker
}

// Acquire runs the fenced acquire script on the primary of key's slot: a
// lease whose Fence is the new counter value, ErrNotAcquired, or an
// unknown-outcome error (also when the client retried the script after
// an attempt that may have run and the retry found the key taken).
func (l *fencedClusterLocker) Acquire(ctx context.Context, key string) (*impl.Lease, error) {
	ctx, a := withAttempts(ctx)
	lease, err := acquireFenced(ctx, l.tl.Name(), l.tl.single, key, fenceKeyInCluster(key))
	if lease != nil || !errors.Is(err, impl.ErrNotAcquired) {
		return lease, err
	}
	if maybe := a.maybeRan(); maybe != nil {
		return nil, impl.WithToken(impl.WithReason(fmt.Errorf("%s: acquire %q: the cluster client retried the script after an attempt that may have run (%v), and the retry found the key taken, perhaps by that attempt: outcome unknown", l.tl.Name(), key, maybe), impl.ReasonUnavailable), impl.TriedToken(err))
	}
	return nil, err
}

// Release is token-lua-cluster's release: 0 and nil, ErrNotHeld, or an
// unknown-outcome error. The fencing counter stays.
func (l *fencedClusterLocker) Release(ctx context.Context, lease *impl.Lease) (int, error) {
	return l.tl.Release(ctx, lease)
}

// Close does nothing: no background work.
func (l *fencedClusterLocker) Close() error { return nil }
