package impl

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-redsync/redsync/v4"
	rsredis "github.com/go-redsync/redsync/v4/redis"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
)

// redsyncAdapter runs github.com/go-redsync/redsync/v4 (Redlock in Go) over
// cfg.Nodes.
type redsyncAdapter struct{}

// Name returns "redsync".
func (redsyncAdapter) Name() string { return "redsync" }

// Info describes the redsync adapter.
func (redsyncAdapter) Info() Info {
	return Info{
		Summary: "library go-redsync/redsync/v4 (Redlock): Mutex.TryLockContext with 1 try (SET k token NX PX|EX ttl on all nodes in parallel, quorum, validity TTL − elapsed − TTL·drift); release: Mutex.UnlockContext (Lua compare-and-delete on all)",
		Source:  "github.com/go-redsync/redsync/v4 v4.18.1 with its goredis/v9 pool",
		Claims:  Claims{AtomicAcquire: true, TokenRelease: true, Quorum: true, Validity: true},
		Policy:  Policy{CheckValidity: true},
		Nodes:   5,
	}
}

// New returns a redsync Locker over cfg.Nodes (at least one). It keeps the
// library's own defaults (drift factor 0.01 without the 2 ms constant;
// timeout for the whole parallel call 0.05·TTL) unless cfg.DriftFactor or
// cfg.NodeTimeout is set (NodeTimeout becomes the library's timeout factor
// NodeTimeout/TTL). Tokens are this package's ("owner:nonce:n"), given to
// the library with WithGenValueFunc. The library measures time with
// time.Now; Lease.Start, End and Validity are moved to cfg.Now's frame.
func (s redsyncAdapter) New(cfg Config) (Locker, error) {
	if err := cfg.validate(s.Name(), 0); err != nil {
		return nil, err
	}
	t, err := newTokens(cfg.Owner)
	if err != nil {
		return nil, err
	}
	pools := make([]rsredis.Pool, len(cfg.Nodes))
	for i, c := range cfg.Nodes {
		pools[i] = goredis.NewPool(c)
	}
	opts := []redsync.Option{
		redsync.WithExpiry(cfg.TTL),
		redsync.WithTries(1), // the workload retries
		redsync.WithGenValueFunc(func() (string, error) { return t.next(), nil }),
	}
	if cfg.DriftFactor > 0 {
		opts = append(opts, redsync.WithDriftFactor(cfg.DriftFactor))
	}
	if cfg.NodeTimeout > 0 {
		opts = append(opts, redsync.WithTimeoutFactor(float64(cfg.NodeTimeout)/float64(cfg.TTL)))
	}
	cfg = cfg.withDefaults()
	return &redsyncLocker{cfg: cfg, rs: redsync.New(pools...), opts: opts, quorum: len(pools)/2 + 1}, nil
}

type redsyncLocker struct {
	cfg    Config
	rs     *redsync.Redsync
	opts   []redsync.Option
	quorum int
}

// Acquire makes one redsync attempt (TryLockContext). It returns a lease
// whose Validity is the mutex's Until (in cfg.Now's frame), ErrNotAcquired
// when redsync failed and the per-node answers rule out a quorum (or a
// quorum was reached too late and redsync unlocked), or an unknown-outcome
// error when the nodes that failed with errors could complete a quorum.
func (l *redsyncLocker) Acquire(ctx context.Context, key string) (*Lease, error) {
	start := l.cfg.Now()
	m := l.rs.NewMutex(key, l.opts...)
	err := m.TryLockContext(ctx)
	end, real := l.cfg.Now(), time.Now()
	if err != nil {
		return nil, l.acquireErr(key, err)
	}
	return &Lease{
		Key: key, Token: m.Value(), Start: start, End: end,
		Validity: end.Add(m.Until().Sub(real)),
		state:    m,
	}, nil
}

// acquireErr classifies a redsync lock error. redsync reports ErrTaken when
// a quorum of nodes holds another value, ErrFailed when every node answered
// and a quorum was reached too late, and otherwise errors.Join of one
// *ErrNodeTaken or *RedisError per node that did not say OK. A RedisError
// whose command was provably never sent (notSent) is a definite "no".
func (l *redsyncLocker) acquireErr(key string, err error) error {
	var taken *redsync.ErrTaken
	if errors.As(err, &taken) || errors.Is(err, redsync.ErrFailed) {
		return fmt.Errorf("redsync: acquire %q: %v: %w", key, err, ErrNotAcquired)
	}
	c := countRedsync(err)
	ok := len(l.cfg.Nodes) - c.unknown - c.taken - c.expired - c.unsent
	if c.other == 0 && (ok >= l.quorum || ok+c.unknown < l.quorum) {
		return fmt.Errorf("redsync: acquire %q: %v: %w", key, err, ErrNotAcquired)
	}
	return fmt.Errorf("redsync: acquire %q: outcome unknown: %w", key, err)
}

// Release runs the mutex's UnlockContext: 0 and nil if released on a
// quorum, ErrNotHeld if every node answered and none held the token, an
// unknown-outcome error otherwise (also when redsync reports ErrTaken for
// a quorum but not all nodes, since it then drops the other nodes' answers).
func (l *redsyncLocker) Release(ctx context.Context, lease *Lease) (int, error) {
	m, _ := leaseState[*redsync.Mutex](lease)
	if m == nil {
		return 0, fmt.Errorf("redsync: release of a lease redsync did not grant: %w", ErrNotHeld)
	}
	released, err := m.UnlockContext(ctx)
	if released {
		return 0, nil
	}
	n := len(l.cfg.Nodes)
	var taken *redsync.ErrTaken
	if errors.As(err, &taken) {
		if len(taken.Nodes) == n {
			return 0, fmt.Errorf("redsync: release %q: %v: %w", lease.Key, err, ErrNotHeld)
		}
		return 0, fmt.Errorf("redsync: release %q: outcome unknown: %w", lease.Key, err)
	}
	c := countRedsync(err)
	if err != nil && c.other == 0 && c.unknown == 0 && c.unsent == 0 && c.taken+c.expired == n {
		return 0, fmt.Errorf("redsync: release %q: %v: %w", lease.Key, err, ErrNotHeld)
	}
	return 0, fmt.Errorf("redsync: release %q: outcome unknown: %w", lease.Key, err)
}

// Close does nothing: the adapter starts no background work.
func (l *redsyncLocker) Close() error { return nil }

// redsyncCounts counts the per-node errors redsync joined into one error.
type redsyncCounts struct {
	unknown int // *RedisError: the node's outcome is unknown
	unsent  int // *RedisError whose command was never sent (notSent): a definite no
	taken   int // *ErrNodeTaken: the node holds another value
	expired int // ErrLockAlreadyExpired: the node held no value (release)
	other   int // anything else
}

// countRedsync walks the (nested) errors.Join tree redsync builds.
func countRedsync(err error) redsyncCounts {
	var c redsyncCounts
	var walk func(error)
	walk = func(err error) {
		var (
			re *redsync.RedisError
			nt *redsync.ErrNodeTaken
		)
		switch e := err.(type) {
		case nil:
		case interface{ Unwrap() []error }:
			for _, x := range e.Unwrap() {
				walk(x)
			}
		default:
			switch {
			case errors.As(err, &re) && notSent(re.Err):
				c.unsent++
			case errors.As(err, &re):
				c.unknown++
			case errors.As(err, &nt):
				c.taken++
			case errors.Is(err, redsync.ErrLockAlreadyExpired):
				c.expired++
			default:
				c.other++
			}
		}
	}
	walk(err)
	return c
}
