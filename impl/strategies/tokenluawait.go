package strategies

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/impl"
)

// waitReplicas is how many replicas token-lua-wait's WAIT asks for.
const waitReplicas = 1

// tokenLuaWait is token-lua whose grants and releases count only once a
// replica has acknowledged them (WAIT), as Redisson's lock checks that
// its writes reached the replicas.
type tokenLuaWait struct{}

// Name returns "token-lua-wait".
func (tokenLuaWait) Name() string { return "token-lua-wait" }

// Info describes token-lua-wait: token-lua plus WAIT 1 on a primary with
// one replica or more.
func (tokenLuaWait) Info() impl.Info {
	return impl.Info{
		Summary: "acquire: SET k token NX PX ttl and WAIT 1 timeout on one connection (one round trip); if no replica acknowledged, Lua compare-and-delete and refuse; release: Lua compare-and-delete and WAIT 1 timeout, unknown unless a replica acknowledged",
		Source:  "Redisson's lock (RedissonBaseLock: the lock's write followed by WAIT, refused when no replica was synced, checkLockSyncedSlaves); redis.io WAIT command: it narrows the failover loss but does not make Redis strongly consistent",
		Claims:  impl.Claims{AtomicAcquire: true, TokenRelease: true, ReplicaAck: true},
		Nodes:   1,
		// One replica is enough for WAIT 1; a scenario that needs more
		// (failover-other-replica) sets its own topology.
		Replicas: waitReplicas,
	}
}

// New returns a token-lua-wait Locker on cfg.Nodes[0] (exactly one node:
// the primary, or a client that follows it through Sentinel).
func (s tokenLuaWait) New(cfg impl.Config) (impl.Locker, error) {
	sg, err := newSingle(s.Name(), cfg)
	if err != nil {
		return nil, err
	}
	return &tokenLuaWaitLocker{single: sg, name: s.Name(), run: pipeOn(sg.node)}, nil
}

type tokenLuaWaitLocker struct {
	single
	name string  // the strategy's name, for errors
	run  runPipe // sends a pipeline to the server of a key
}

// runPipe sends one pipeline, the commands queue puts in it, on one
// connection to the server that holds key (WAIT counts the writes of its
// own connection). queue returns its first command, the one whose reply
// says whether the server holds key; it may be called again for another
// server (a Redis Cluster's redirect). A non-nil error says no queued
// command ran anywhere; the commands' own errors are read from them.
type runPipe func(ctx context.Context, key string, queue func(redis.Pipeliner) redis.Cmder) error

// pipeOn is the runPipe of one server: node.
func pipeOn(node redis.UniversalClient) runPipe {
	return func(ctx context.Context, _ string, queue func(redis.Pipeliner) redis.Cmder) error {
		pipe := node.Pipeline()
		queue(pipe)
		_, _ = pipe.Exec(ctx) // each command's own error is read by the caller
		return nil
	}
}

// Acquire sends SET key token NX PX ttl and WAIT 1 timeout in one
// pipeline (WAIT counts the replicas that acknowledged the writes of its
// own connection, so both must share one). It returns a lease when the
// SET took and a replica acknowledged it; ErrNotAcquired with reason
// taken when the key exists; ErrNotAcquired with reason unavailable when
// no replica acknowledged within Config.WaitTimeout and the key was
// deleted again (compare-and-delete, so nothing of this acquire stays);
// or an unknown-outcome error carrying the token (a call that failed, or
// a grant no replica confirmed that could not be taken back).
func (l *tokenLuaWaitLocker) Acquire(ctx context.Context, key string) (*impl.Lease, error) {
	name := l.name
	start := l.cfg.Now()
	token := l.tokens.next()
	var set *redis.StatusCmd
	var wait *redis.Cmd
	if err := l.run(ctx, key, func(pipe redis.Pipeliner) redis.Cmder {
		set = pipe.SetArgs(ctx, key, token, redis.SetArgs{Mode: "NX", TTL: l.cfg.TTL})
		wait = pipe.Do(ctx, "WAIT", waitReplicas, max(ms(l.cfg.WaitTimeout), 1))
		return set
	}); err != nil {
		return nil, impl.WithToken(impl.WithReason(fmt.Errorf("%s: acquire %q: %w: %w", name, key, err, impl.ErrNotAcquired), impl.ReasonUnavailable), token)
	}
	switch err := set.Err(); {
	case errors.Is(err, redis.Nil):
		return nil, notAcquired(fmt.Errorf("%s: acquire %q: %w", name, key, impl.ErrNotAcquired), token)
	case err != nil:
		return nil, impl.WithToken(impl.WithReason(fmt.Errorf("%s: acquire %q: %w", name, key, err), netReason(err)), token)
	}
	acked, err := wait.Int64()
	if err != nil {
		return nil, impl.WithToken(impl.WithReason(fmt.Errorf("%s: acquire %q: set, then WAIT: %w", name, key, err), netReason(err)), token)
	}
	if acked >= waitReplicas {
		return &impl.Lease{Key: key, Token: token, Start: start, End: l.cfg.Now()}, nil
	}
	// No replica has the grant: a failover now could lose it. Take it
	// back before saying no, so the refused acquire leaves no key.
	why := fmt.Sprintf("%d of %d replicas acknowledged the SET within %v", acked, waitReplicas, l.cfg.WaitTimeout)
	if _, err := compareAndDelete(ctx, l.node, key, token); err != nil {
		return nil, impl.WithToken(impl.WithReason(fmt.Errorf("%s: acquire %q: %s, and deleting it again failed: %w", name, key, why, err), netReason(err)), token)
	}
	return nil, impl.WithToken(impl.WithReason(fmt.Errorf("%s: acquire %q: %s: %w", name, key, why, impl.ErrNotAcquired), impl.ReasonUnavailable), token)
}

// Release sends the compare-and-delete script and WAIT 1 timeout in one
// pipeline: 0 and nil when the lease's key was deleted and a replica
// acknowledged the delete; ErrNotHeld (reason expired or taken) when the
// key no longer held the lease's token; an unknown-outcome error (reason
// unavailable) when the key was deleted on the primary but no replica
// acknowledged it within Config.WaitTimeout (a failover could bring the
// key back until its TTL ends), or when the call failed.
func (l *tokenLuaWaitLocker) Release(ctx context.Context, lease *impl.Lease) (int, error) {
	name := l.name
	if lease == nil {
		return 0, fmt.Errorf("%s: release of a nil lease: %w", name, impl.ErrNotHeld)
	}
	n, acked, err := releaseAndWait(ctx, l.run, lease, l.cfg.WaitTimeout)
	switch {
	case err != nil:
		return 0, impl.WithReason(fmt.Errorf("%s: release %q: %w", name, lease.Key, err), netReason(err))
	case n != 1:
		return 0, impl.WithReason(fmt.Errorf("%s: release %q: %w", name, lease.Key, impl.ErrNotHeld), notHeldReason(n))
	case acked < waitReplicas:
		return 0, impl.WithReason(fmt.Errorf("%s: release %q: deleted on the primary, but %d of %d replicas acknowledged it within %v: a failover may bring the key back until it expires",
			name, lease.Key, acked, waitReplicas, l.cfg.WaitTimeout), impl.ReasonUnavailable)
	}
	return 0, nil
}

// releaseAndWait runs the release script (EVALSHA, or EVAL when the
// server does not know it yet: a promoted replica's script cache is
// empty) and WAIT 1 timeout in one pipeline, through send. It returns the
// script's reply (1 deleted, 0 taken, -1 no key), WAIT's count (0 unless
// the key was deleted), or the error of the script, or of WAIT after a
// delete, or send's (the script ran nowhere).
func releaseAndWait(ctx context.Context, send runPipe, lease *impl.Lease, timeout time.Duration) (int64, int64, error) {
	run := func(sha bool) (*redis.Cmd, *redis.Cmd, error) {
		keys := []string{lease.Key}
		var rel, wait *redis.Cmd
		err := send(ctx, lease.Key, func(pipe redis.Pipeliner) redis.Cmder {
			if sha {
				rel = scriptRelease.EvalSha(ctx, pipe, keys, lease.Token)
			} else {
				rel = scriptRelease.Eval(ctx, pipe, keys, lease.Token)
			}
			wait = pipe.Do(ctx, "WAIT", waitReplicas, max(ms(timeout), 1))
			return rel
		})
		return rel, wait, err
	}
	rel, wait, err := run(true)
	if err == nil && rel.Err() != nil && strings.HasPrefix(rel.Err().Error(), "NOSCRIPT") {
		rel, wait, err = run(false)
	}
	if err != nil {
		return 0, 0, err
	}
	n, err := rel.Int64()
	if err != nil || n != 1 {
		return n, 0, err // WAIT's count says nothing about a key not deleted
	}
	acked, err := wait.Int64()
	if err != nil {
		return n, 0, fmt.Errorf("deleted, then WAIT: %w", err)
	}
	return n, acked, nil
}

// Close does nothing: no background work.
func (l *tokenLuaWaitLocker) Close() error { return nil }
