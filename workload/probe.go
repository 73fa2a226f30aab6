package workload

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/strategies"
)

// Probe is the liveness check after a run: for every key it reads the key's
// PTTL (the largest over the nodes; -1 if any node holds the key without a
// TTL, a deadlock there) and then tries to acquire the key with a fresh owner
// of the same strategy, retrying every TTL/20, for at most TTL + 1 s. For a
// strategy whose Locker is an strategies.KeyLeaser (its locks are not Redis keys:
// etcd, ZooKeeper) the value is its KeyLease instead, with the same
// meaning (ms left of the holder's lease; -1 held without expiry; -2 not
// held); a KeyLease error records -2, as a Redis node that does not answer
// PTTL counts for nothing. Each
// key's outcome is recorded as one history.Probe operation (Value = PTTL in
// ms; ok = acquired, then released). Each call's timeout is
// cfg.ProbeTimeout(), not the workload's OpTimeout: env.Nodes(-1) should
// return clients whose own timeouts are as long. It returns an error only when the probe
// client cannot be built or ctx ends.
func Probe(ctx context.Context, cfg Config, env Env) error {
	cfg, err := cfg.WithDefaults()
	if err != nil {
		return err
	}
	if env.NoHistory {
		return errors.New("workload: probe of an unrecorded run (Env.NoHistory): nothing would keep its results")
	}
	nodes, err := env.nodes(-1)
	if err != nil {
		return fmt.Errorf("workload: probe: redis clients: %w", err)
	}
	defer func() {
		for _, n := range nodes {
			n.Close()
		}
	}()
	l, err := env.Strategy.New(impl.Config{Nodes: nodes, Endpoints: env.endpoints(-1), Security: env.Security, TTL: cfg.TTL, Owner: "probe", Now: env.Now})
	if err != nil {
		return fmt.Errorf("workload: probe: %w", err)
	}
	defer l.Close()
	stream := env.IDs.NextStream()
	for i := 0; i < cfg.Keys; i++ {
		key := cfg.Key(i)
		inv := env.Clock.Now()
		var pttl int64
		if kl, ok := l.(strategies.KeyLeaser); ok {
			pttl = keyLease(ctx, kl, cfg.ProbeTimeout(), key)
		} else {
			pttl = keyPTTL(ctx, nodes, cfg.ProbeTimeout(), key)
		}
		op := history.Operation{Client: -1, Stream: stream, Kind: history.Probe, Key: key, Invoke: inv, Value: pttl}
		op.Result, op.Error = probeAcquire(ctx, l, key, cfg)
		op.Complete = env.Clock.Now()
		env.History.Record(op)
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("workload: probe interrupted: %w", err)
		}
	}
	return nil
}

func keyPTTL(ctx context.Context, nodes []redis.UniversalClient, timeout time.Duration, key string) int64 {
	best := int64(-2)
	for _, n := range nodes {
		c, cancel := context.WithTimeout(ctx, timeout)
		d, err := n.PTTL(c, key).Result()
		cancel()
		if err != nil {
			continue
		}
		ms := d.Milliseconds()
		if d == -1 { // go-redis maps the -1 reply to -1 (ns)
			ms = -1
		} else if d == -2 {
			ms = -2
		}
		if ms == -1 {
			return -1
		}
		if ms > best {
			best = ms
		}
	}
	return best
}

// keyLease is KeyLease bounded by timeout; -2 when it fails.
func keyLease(ctx context.Context, kl strategies.KeyLeaser, timeout time.Duration, key string) int64 {
	c, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	v, err := kl.KeyLease(c, key)
	if err != nil {
		return strategies.NotHeld
	}
	return v
}

// probeAcquire tries to acquire key until TTL + 1 s has passed: ok when
// an attempt is granted (and released), fail when none was and some
// attempt was refused (the key is held: with the TTL past, a deadlock),
// info when no attempt was answered at all (timeouts, connections lost:
// the probe learnt nothing about the key).
func probeAcquire(ctx context.Context, l impl.Locker, key string, cfg Config) (history.Result, string) {
	deadline := time.Now().Add(cfg.TTL + time.Second)
	var last error
	refused := false // some attempt was refused: the key is held
	for time.Now().Before(deadline) {
		c, cancel := context.WithTimeout(ctx, cfg.ProbeTimeout())
		lease, err := l.Acquire(c, key)
		cancel()
		if err == nil {
			c, cancel := context.WithTimeout(ctx, cfg.ProbeTimeout())
			l.Release(c, lease)
			cancel()
			return history.OK, ""
		}
		last = err
		refused = refused || errors.Is(err, impl.ErrNotAcquired)
		sleep(ctx, cfg.TTL/20)
		if ctx.Err() != nil {
			break
		}
	}
	switch {
	case last == nil || refused:
		return history.Fail, fmt.Sprintf("not acquirable within TTL + 1 s (%v)", cfg.TTL+time.Second)
	default: // no attempt was answered: nothing is known of the key
		return history.Info, fmt.Sprintf("no attempt answered within TTL + 1 s (%v): %v", cfg.TTL+time.Second, last)
	}
}
