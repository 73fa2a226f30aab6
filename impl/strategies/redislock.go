package strategies

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/bsm/redislock"
	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/impl"
)

// redislockAdapter runs github.com/bsm/redislock on one node, with the
// refresh loop its README shows (Lock.Refresh before the TTL runs out) run
// every TTL/3 unless o says otherwise; with cluster set
// ("redislock-cluster") the library's client is go-redis's cluster client
// over a Redis Cluster (redislock.New takes any redis.Scripter), which
// sends each script to the primary of the key's slot and follows MOVED
// and ASK.
type redislockAdapter struct {
	cluster bool
	o       *redislockOptions
}

// redislockOptions are the adapter's library settings.
type redislockOptions struct {
	// refreshDiv > 0: refresh every TTL/refreshDiv; else every refresh; both
	// 0: no refresh loop (--redislock-refresh off).
	refreshDiv int
	refresh    time.Duration
}

// redislockRefreshDiv is the default refresh period TTL/3: Redisson's
// watchdog cadence (lockWatchdogTimeout/3), as the watchdog strategy uses.
// The library's README refreshes before the TTL runs out without naming a
// period.
const redislockRefreshDiv = 3

// redislockSettings are the redislock adapter's library settings.
func redislockSettings() []Setting {
	return []Setting{
		{Name: "redislock-refresh", Default: "ttl/3", Strategies: []string{"redislock", "redislock-cluster"},
			Usage: "redislock: refresh loop period (Lock.Refresh to the full TTL): ttl/N (N >= 2), a duration below the TTL, or off (no refresh: the library alone)"},
	}
}

// opts returns the adapter's settings, defaults applied.
func (s redislockAdapter) opts() redislockOptions {
	if s.o == nil {
		return redislockOptions{refreshDiv: redislockRefreshDiv}
	}
	return *s.o
}

// refreshes reports whether the adapter runs its refresh loop.
func (o redislockOptions) refreshes() bool { return o.refreshDiv > 0 || o.refresh > 0 }

// every returns the refresh period at lock TTL ttl (0: no refresh).
func (o redislockOptions) every(ttl time.Duration) time.Duration {
	if o.refreshDiv > 0 {
		return ttl / time.Duration(o.refreshDiv)
	}
	return o.refresh
}

// Settings returns the effective library settings by flag name.
func (s redislockAdapter) Settings() map[string]string {
	o := s.opts()
	v := "off"
	switch {
	case o.refreshDiv > 0:
		v = "ttl/" + strconv.Itoa(o.refreshDiv)
	case o.refresh > 0:
		v = o.refresh.String()
	}
	return map[string]string{"redislock-refresh": v}
}

// tune parses the redislock settings; errors name the flag and the valid values.
func (s redislockAdapter) tune(set map[string]string, ttl time.Duration) (impl.Strategy, error) {
	o := s.opts()
	for name, v := range set {
		if name != "redislock-refresh" {
			return nil, fmt.Errorf("--%s: not a redislock setting", name)
		}
		bad := func(why string) error {
			return fmt.Errorf("--redislock-refresh %s: %s (valid: ttl/N with N >= 2, a duration below the TTL %v, or off)", v, why, ttl)
		}
		switch n, isDiv := strings.CutPrefix(strings.ToLower(v), "ttl/"); {
		case v == "off":
			o = redislockOptions{}
		case isDiv:
			d, err := strconv.Atoi(n)
			if err != nil || d < 2 {
				return nil, bad("want a whole divisor of at least 2")
			}
			o = redislockOptions{refreshDiv: d}
		default:
			d, err := time.ParseDuration(v)
			switch {
			case err != nil:
				return nil, bad("not a duration")
			case d <= 0:
				return nil, bad("want a positive period")
			case d >= ttl:
				return nil, bad("a refresh at or after the TTL comes too late: the key has expired")
			}
			o = redislockOptions{refresh: d}
		}
	}
	s.o = &o
	return s, nil
}

// Name returns "redislock", or "redislock-cluster" on a Redis Cluster.
func (s redislockAdapter) Name() string {
	if s.cluster {
		return "redislock-cluster"
	}
	return "redislock"
}

// Info describes the redislock adapter. With its refresh loop (the
// default) it claims renewal and its clients honour Lost, as a user who
// keeps refreshing stops when a refresh fails.
func (s redislockAdapter) Info() impl.Info {
	in := impl.Info{
		Summary: "library bsm/redislock: Client.Obtain without retry (the library default; Lua SET k token NX PX ttl); Lock.Refresh to the full TTL every TTL/3, Lost when a refresh finds the key gone or another's, or a TTL after the last successful refresh was sent; release: Lock.Release (Lua compare-and-delete)",
		Source:  "github.com/bsm/redislock README (Obtain, Refresh, Release); refresh period TTL/3 as Redisson's watchdog",
		Library: moduleVersion(redislockModule, redislockVersion),
		Claims:  impl.Claims{AtomicAcquire: true, TokenRelease: true, Renewal: true},
		Policy:  impl.Policy{HonourLost: true},
		Nodes:   1,
	}
	switch o := s.opts(); {
	case !o.refreshes():
		in.Summary = "library bsm/redislock without a refresh loop (--redislock-refresh off): Client.Obtain without retry (Lua SET k token NX PX ttl); release: Lock.Release (Lua compare-and-delete)"
		in.Claims.Renewal, in.Policy = false, impl.Policy{}
	case o.refresh > 0:
		in.Summary = strings.Replace(in.Summary, "every TTL/3", "every "+o.refresh.String(), 1)
	case o.refreshDiv != redislockRefreshDiv:
		in.Summary = strings.Replace(in.Summary, "TTL/3", "TTL/"+strconv.Itoa(o.refreshDiv), 1)
	}
	if s.cluster {
		in.Summary = strings.Replace(in.Summary, "library bsm/redislock", "library bsm/redislock on a Redis Cluster (3 primaries + 3 replicas) through go-redis's cluster client (each script on the primary of k's slot, MOVED and ASK followed; a release retried after an attempt that may have run is an unknown outcome)", 1)
		in.Source += "; on a Redis Cluster (redis.io cluster specification: asynchronous replication, a failover can lose acknowledged writes)"
		in.Cluster = true
	}
	return in
}

// New returns a redislock Locker on cfg.Nodes[0] (exactly one node: for
// redislock-cluster a cluster client, on whose node clients it records
// each attempt of each script, as token-lua-cluster does). Tokens
// are the library's random ones: its obtain script treats a stored value
// that starts with the caller's token as the caller's own lock, so
// prefix-sharing tokens like "owner:nonce:1" and "owner:nonce:12" must not
// be given to it. The refresh loop calls cfg.Hook at PointRenew before each
// refresh and reports each to cfg.OnRenew; cfg.RenewEvery is ignored (the
// refresh period is the adapter's setting).
func (s redislockAdapter) New(cfg impl.Config) (impl.Locker, error) {
	cfg, err := prepare(s.Name(), cfg, 1)
	if err != nil {
		return nil, err
	}
	o := s.opts()
	cfg.RenewEvery = o.every(cfg.TTL)
	if o.refreshes() && (cfg.RenewEvery <= 0 || cfg.RenewEvery >= cfg.TTL) {
		return nil, fmt.Errorf("%s: config: refresh period %v must be positive and below the TTL %v", s.Name(), cfg.RenewEvery, cfg.TTL)
	}
	if cc, ok := cfg.Nodes[0].(*redis.ClusterClient); ok {
		cc.OnNewNode(func(rdb *redis.Client) { rdb.AddHook(attemptHook{}) })
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &redislockLocker{name: s.Name(), cfg: cfg, refresh: o.refreshes(), client: redislock.New(cfg.Nodes[0]), ctx: ctx, cancel: cancel}, nil
}

type redislockLocker struct {
	name    string // the strategy's name, for errors
	cfg     impl.Config
	refresh bool
	client  *redislock.Client
	// ctx ends at Close; every refresh goroutine runs under it.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// Acquire calls Obtain once (NoRetry, the library default) and starts the
// lease's refresh loop. It returns a lease (Lost set when refreshing),
// ErrNotAcquired for the library's ErrNotObtained, or an unknown-outcome
// error (a timeout, a network error).
func (l *redislockLocker) Acquire(ctx context.Context, key string) (*impl.Lease, error) {
	ctx, cancel := libraryContext(ctx)
	defer cancel()
	if err := l.ctx.Err(); err != nil {
		return nil, fmt.Errorf("%s: acquire %q: locker closed: %w", l.name, key, err)
	}
	start := l.cfg.Now()
	lock, err := l.client.Obtain(ctx, key, l.cfg.TTL, &redislock.Options{RetryStrategy: redislock.NoRetry()})
	switch {
	case errors.Is(err, redislock.ErrNotObtained):
		return nil, fmt.Errorf("%s: acquire %q: %v: %w", l.name, key, err, impl.ErrNotAcquired)
	case err != nil:
		return nil, fmt.Errorf("%s: acquire %q: outcome unknown: %w", l.name, key, err)
	}
	lease := &impl.Lease{Key: key, Token: lock.Token(), Start: start, End: l.cfg.Now(), State: lock}
	if l.refresh {
		impl.StartRenewal(l.ctx, &l.wg, l.cfg, lease, boolRenew(func(ctx context.Context) (bool, error) {
			switch err := lock.Refresh(ctx, l.cfg.TTL, nil); {
			case errors.Is(err, redislock.ErrNotObtained):
				return false, nil // the key is gone or another owner's
			case err != nil:
				return false, err
			}
			return true, nil
		}))
	}
	return lease, nil
}

// Release stops the lease's refresh loop, then calls Lock.Release: 0 and
// nil, ErrNotHeld for the library's ErrLockNotHeld (the lock expired or
// another owner holds it), or an unknown-outcome error, also when a
// cluster client retried the release after an attempt that may have
// deleted the key (the retry's "not held" may be that very delete).
func (l *redislockLocker) Release(ctx context.Context, lease *impl.Lease) (int, error) {
	ctx, cancel := libraryContext(ctx)
	defer cancel()
	lock, _ := leaseState[*redislock.Lock](lease)
	if lock == nil {
		return 0, fmt.Errorf("%s: release of a lease redislock did not grant: %w", l.name, impl.ErrNotHeld)
	}
	lease.StopRenewal()
	ctx, a := withAttempts(ctx)
	switch err := lock.Release(ctx); {
	case errors.Is(err, redislock.ErrLockNotHeld):
		if maybe := a.maybeRan(); maybe != nil {
			return 0, impl.WithReason(fmt.Errorf("%s: release %q: the cluster client retried the release after an attempt that may have run (%v), and the retry found the key gone or another's: outcome unknown", l.name, lease.Key, maybe), impl.ReasonUnavailable)
		}
		return 0, fmt.Errorf("%s: release %q: %v: %w", l.name, lease.Key, err, impl.ErrNotHeld)
	case err != nil:
		return 0, fmt.Errorf("%s: release %q: outcome unknown: %w", l.name, lease.Key, err)
	}
	return 0, nil
}

// Close stops every refresh loop of this Locker and waits for them to end.
// Held keys are not deleted: they expire after their TTL.
func (l *redislockLocker) Close() error {
	l.cancel()
	l.wg.Wait()
	return nil
}
