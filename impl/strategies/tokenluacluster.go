package strategies

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/impl"
)

// tokenLuaCluster is token-lua on a Redis Cluster: the same SET NX PX
// and Lua compare-and-delete, sent through go-redis's cluster client,
// which routes each command to the primary of the key's hash slot and
// follows MOVED and ASK. A strategy of its own (rather than token-lua on
// another topology) because its client differs (one cluster client over
// every node, not one client of one node), and so do its faults: the
// scenarios written for it (chaos.Scenario.OnCluster) act on the slot's
// primary, its replica and the slot's owner.
type tokenLuaCluster struct{}

// Name returns "token-lua-cluster".
func (tokenLuaCluster) Name() string { return "token-lua-cluster" }

// Info describes token-lua-cluster: token-lua through a cluster client on
// redis-cluster:3+3.
func (tokenLuaCluster) Info() impl.Info {
	return impl.Info{
		Summary: "token-lua on a Redis Cluster (3 primaries + 3 replicas) through go-redis's cluster client: acquire SET k token NX PX ttl on the primary of k's slot, release Lua compare-and-delete there; MOVED and ASK are followed, and a retried command whose earlier attempt may have run is an unknown outcome",
		Source:  "redis.io distlock page, single-instance section, on a Redis Cluster (redis.io cluster specification: asynchronous replication, a failover can lose acknowledged writes)",
		Claims:  impl.Claims{AtomicAcquire: true, TokenRelease: true},
		Nodes:   1,
		Cluster: true,
	}
}

// New returns a token-lua-cluster Locker on cfg.Nodes[0]: a cluster
// client (redis.NewClusterClient over the cluster's nodes), or any other
// client, on which it is token-lua. On a cluster client it records each
// attempt of each command (a hook on every node client it makes), so that
// a command it retried after an attempt that may have run is reported as
// an unknown outcome (see attempts).
func (s tokenLuaCluster) New(cfg impl.Config) (impl.Locker, error) {
	sg, err := newSingle(s.Name(), cfg)
	if err != nil {
		return nil, err
	}
	if cc, ok := sg.node.(*redis.ClusterClient); ok {
		cc.OnNewNode(func(rdb *redis.Client) { rdb.AddHook(attemptHook{}) })
	}
	return &tokenLuaClusterLocker{single: sg, name: s.Name()}, nil
}

type tokenLuaClusterLocker struct {
	single
	name string // the strategy's name, for errors (watchdog-cluster reuses it)
}

// Acquire runs SET key token NX PX ttl on the key's primary: a lease,
// ErrNotAcquired if the key exists, or an unknown-outcome error, also
// when the client retried the SET after an attempt that may have run
// (then the "key exists" of the retry may be this very SET's key).
func (l *tokenLuaClusterLocker) Acquire(ctx context.Context, key string) (*impl.Lease, error) {
	ctx, a := withAttempts(ctx)
	lease, err := acquireToken(ctx, l.Name(), l.cfg, l.node, l.tokens, key)
	if lease != nil || !errors.Is(err, impl.ErrNotAcquired) {
		return lease, err
	}
	if maybe := a.maybeRan(); maybe != nil {
		return nil, impl.WithToken(impl.WithReason(fmt.Errorf("%s: acquire %q: the cluster client retried SET NX after an attempt that may have run (%v), and the retry found the key taken, perhaps by that attempt: outcome unknown", l.Name(), key, maybe), impl.ReasonUnavailable), impl.TriedToken(err))
	}
	return nil, err
}

// Release deletes the key only if it still holds the lease's token: nil,
// ErrNotHeld, or an unknown-outcome error, also when the client retried
// the script after an attempt that may have deleted the key.
func (l *tokenLuaClusterLocker) Release(ctx context.Context, lease *impl.Lease) (int, error) {
	ctx, a := withAttempts(ctx)
	err := releaseToken(ctx, l.Name(), l.node, lease)
	if errors.Is(err, impl.ErrNotHeld) && lease != nil {
		if maybe := a.maybeRan(); maybe != nil {
			return 0, impl.WithReason(fmt.Errorf("%s: release %q: the cluster client retried the release after an attempt that may have run (%v), and the retry found the key gone or another's: outcome unknown", l.Name(), lease.Key, maybe), impl.ReasonUnavailable)
		}
	}
	return 0, err
}

// Close does nothing: no background work.
func (l *tokenLuaClusterLocker) Close() error { return nil }

// Name is the strategy's name, for errors.
func (l *tokenLuaClusterLocker) Name() string { return l.name }

// attempts records the outcome of every attempt of the commands sent
// under one context: go-redis's cluster client retries a command on
// MOVED and ASK (not run: the node refused it), on TRYAGAIN and
// CLUSTERDOWN (not run either), and on network errors (EOF, a reset, a
// read timeout), after which the first attempt may have run.
type attempts struct {
	mu   sync.Mutex
	errs []error
}

type attemptsKey struct{}

// withAttempts returns ctx carrying a fresh attempts record.
func withAttempts(ctx context.Context) (context.Context, *attempts) {
	a := &attempts{}
	return context.WithValue(ctx, attemptsKey{}, a), a
}

// add records one attempt's error (nil: it was answered).
func (a *attempts) add(err error) {
	a.mu.Lock()
	a.errs = append(a.errs, err)
	a.mu.Unlock()
}

// maybeRan returns the error of an attempt before the last that may have
// run on the server: not an error reply (a node that answers MOVED, ASK,
// TRYAGAIN, CLUSTERDOWN or NOSCRIPT did not run the command) and not
// provably unsent (notSent). nil when there is none.
func (a *attempts) maybeRan() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	for i, err := range a.errs {
		if i == len(a.errs)-1 {
			break
		}
		var re redis.Error
		if err == nil || notSent(err) || errors.As(err, &re) && !isNetErr(err) {
			continue
		}
		return err
	}
	return nil
}

// isNetErr reports whether err is a network error (which also satisfies
// redis.Error in go-redis v9 for some wrapped forms).
func isNetErr(err error) bool {
	var ne net.Error
	return errors.As(err, &ne)
}

// attemptHook records, on a node client of a cluster client, each
// command's attempt in the attempts of its context (if any).
type attemptHook struct{}

func (attemptHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (attemptHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if a, ok := ctx.Value(attemptsKey{}).(*attempts); ok {
			a.add(err)
		}
		return err
	}
}

// ProcessPipelineHook records an ASK redirect's ASKING+command pipeline
// as one attempt: the error of its last command.
func (attemptHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		if a, ok := ctx.Value(attemptsKey{}).(*attempts); ok && len(cmds) > 0 {
			e := cmds[len(cmds)-1].Err()
			if e == nil {
				e = err
			}
			a.add(e)
		}
		return err
	}
}
