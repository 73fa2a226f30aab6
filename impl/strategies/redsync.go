package strategies

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/go-redsync/redsync/v4"
	rsredis "github.com/go-redsync/redsync/v4/redis"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"

	"github.com/lockbench/lockbench/impl"
)

// redsyncAdapter runs github.com/go-redsync/redsync/v4 over go-redis v9:
// Redlock over cfg.Nodes ("redsync", 5 nodes in runs) or on one node
// ("redsync-single"). o holds library settings given as flags; nil: the
// defaults (see redsyncSettings).
type redsyncAdapter struct {
	single bool
	o      *redsyncOptions
}

// redsyncOptions are the adapter's library settings. A field left unset
// passes no option, so the library's own default applies.
type redsyncOptions struct {
	tries      int           // attempts per Acquire: 1 (TryLockContext) unless set
	delay      time.Duration // retry delay between attempts; 0: the library's rand(50ms, 250ms)
	drift      float64       // drift factor; driftSet false: the library's 0.01
	driftSet   bool
	timeout    float64 // timeout factor; timeoutSet false: the library's 0.05
	timeoutSet bool
	failFast   bool // WithFailFast: return as soon as a quorum answered either way
}

// Library defaults of redsync v4.18.1 (redsync.go NewMutex, not exported):
// expiry 8 s (lockbench always passes the run's TTL instead), 32 tries,
// retry delay rand(50ms, 250ms), drift factor 0.01, timeout factor 0.05,
// fail-fast off.
const (
	redsyncLibTries   = 32
	redsyncLibDelay   = "rand(50ms,250ms)"
	redsyncLibDrift   = 0.01
	redsyncLibTimeout = 0.05
)

// redsyncSettings are the redsync adapters' library settings.
func redsyncSettings() []Setting {
	both := []string{"redsync", "redsync-single"}
	return []Setting{
		{Name: "redsync-tries", Default: "1", Strategies: both,
			Usage: fmt.Sprintf("redsync: attempts per acquire inside the library (LockContext with WithTries; default 1 = TryLockContext, the workload's --retry retries; library default %d)", redsyncLibTries)},
		{Name: "redsync-retry-delay", Default: redsyncLibDelay, Strategies: both,
			Usage: "redsync: delay between the library's attempts (WithRetryDelay; needs --redsync-tries above 1; library default " + redsyncLibDelay + ")"},
		{Name: "redsync-drift-factor", Default: strconv.FormatFloat(redsyncLibDrift, 'g', -1, 64), Strategies: both,
			Usage: "redsync: clock drift factor, 0 <= f < 1: validity = TTL - elapsed - TTL*f (WithDriftFactor; library default 0.01)"},
		{Name: "redsync-timeout-factor", Default: strconv.FormatFloat(redsyncLibTimeout, 'g', -1, 64), Strategies: both,
			Usage: "redsync: timeout of each parallel call to the nodes as a share of the TTL, 0 < f <= 1 (WithTimeoutFactor; library default 0.05)"},
		{Name: "redsync-fail-fast", Default: "false", Strategies: both, Bool: true,
			Usage: "redsync: return as soon as a quorum of nodes answered either way (WithFailFast; library default false)"},
	}
}

// opts returns the adapter's settings, defaults applied.
func (s redsyncAdapter) opts() redsyncOptions {
	if s.o == nil {
		return redsyncOptions{tries: 1}
	}
	return *s.o
}

// Settings returns the effective library settings by flag name.
func (s redsyncAdapter) Settings() map[string]string {
	o := s.opts()
	delay, drift, timeout := redsyncLibDelay, redsyncLibDrift, redsyncLibTimeout
	if o.delay > 0 {
		delay = o.delay.String()
	}
	if o.driftSet {
		drift = o.drift
	}
	if o.timeoutSet {
		timeout = o.timeout
	}
	return map[string]string{
		"redsync-tries":          strconv.Itoa(o.tries),
		"redsync-retry-delay":    delay,
		"redsync-drift-factor":   strconv.FormatFloat(drift, 'g', -1, 64),
		"redsync-timeout-factor": strconv.FormatFloat(timeout, 'g', -1, 64),
		"redsync-fail-fast":      strconv.FormatBool(o.failFast),
	}
}

// tune parses the redsync settings; errors name the flag and the valid range.
func (s redsyncAdapter) tune(set map[string]string, ttl time.Duration) (impl.Strategy, error) {
	o := s.opts()
	for name, v := range set {
		var err error
		switch name {
		case "redsync-tries":
			o.tries, err = strconv.Atoi(v)
			if err == nil && o.tries < 1 {
				err = errors.New("want at least 1 attempt")
			}
		case "redsync-retry-delay":
			o.delay, err = time.ParseDuration(v)
			if err == nil && o.delay <= 0 {
				err = errors.New("want a positive duration, e.g. 20ms")
			}
		case "redsync-drift-factor":
			o.drift, err = strconv.ParseFloat(v, 64)
			o.driftSet = true
			if err == nil && !(o.drift >= 0 && o.drift < 1) {
				err = errors.New("want a factor with 0 <= f < 1 (the library default is 0.01)")
			}
		case "redsync-timeout-factor":
			o.timeout, err = strconv.ParseFloat(v, 64)
			o.timeoutSet = true
			switch {
			case err != nil:
			case !(o.timeout > 0 && o.timeout <= 1):
				err = errors.New("want a factor with 0 < f <= 1 (the library default is 0.05)")
			case time.Duration(float64(ttl)*o.timeout) < time.Millisecond:
				err = fmt.Errorf("gives a call timeout of %v at TTL %v: want at least 1ms", time.Duration(float64(ttl)*o.timeout), ttl)
			}
		case "redsync-fail-fast":
			if o.failFast, err = strconv.ParseBool(v); err != nil {
				err = errors.New("want true or false")
			}
		default:
			err = errors.New("not a redsync setting")
		}
		if err != nil {
			return nil, fmt.Errorf("--%s %s: %w", name, v, unwrapNum(err))
		}
	}
	if _, ok := set["redsync-retry-delay"]; ok && o.tries < 2 {
		return nil, fmt.Errorf("--redsync-retry-delay %s has no effect with %d attempt per acquire: add --redsync-tries 2 or more", set["redsync-retry-delay"], o.tries)
	}
	s.o = &o
	return s, nil
}

// unwrapNum turns strconv's and time's parse errors into their short reason.
func unwrapNum(err error) error {
	var ne *strconv.NumError
	if errors.As(err, &ne) {
		return fmt.Errorf("not a number (%w)", ne.Err)
	}
	return err
}

// Name returns "redsync", or "redsync-single" for the single-node variant.
func (s redsyncAdapter) Name() string {
	if s.single {
		return "redsync-single"
	}
	return "redsync"
}

// Info describes the redsync adapter: the library's Redlock with its
// validity (Mutex.Until), which its docs tell users to check instead of
// the deprecated Mutex.Valid.
func (s redsyncAdapter) Info() impl.Info {
	in := impl.Info{
		Summary: "library go-redsync/redsync/v4 (Redlock): Mutex.TryLockContext (SET k token NX PX ttl on all nodes in parallel within 0.05·TTL, quorum N/2+1, validity Until = TTL − elapsed − 0.01·TTL); release: Mutex.UnlockContext (Lua compare-and-delete on all)",
		Source:  "github.com/go-redsync/redsync/v4 with its goredis/v9 pool; its docs deprecate Mutex.Valid for Mutex.Until, the validity time to check before acting (go-redsync/redsync#72)",
		Library: moduleVersion(redsyncModule, redsyncVersion),
		Claims:  impl.Claims{AtomicAcquire: true, TokenRelease: true, Quorum: true, Validity: true},
		Policy:  impl.Policy{CheckValidity: true},
		Nodes:   5,
	}
	if s.single {
		in.Summary = "library go-redsync/redsync/v4 on one node: Mutex.TryLockContext (SET k token NX PX ttl within 0.05·TTL, validity Until = TTL − elapsed − 0.01·TTL); release: Mutex.UnlockContext (Lua compare-and-delete)"
		in.Claims.Quorum = false
		in.Nodes = 1
	}
	return in
}

// New returns a redsync Locker over cfg.Nodes (exactly one for
// redsync-single, at least one for redsync). It keeps the library's own
// defaults (drift factor 0.01 without the distlock page's 2 ms constant;
// timeout of each parallel call 0.05·TTL) unless a library setting or
// cfg.DriftFactor / cfg.NodeTimeout is set (NodeTimeout becomes the
// timeout factor NodeTimeout/TTL); the library's expiry is cfg.TTL.
// Tokens are this package's ("owner:nonce:n"), given to the library with
// WithGenValueFunc. The library measures time with time.Now; Lease.Start,
// End and Validity are moved to cfg.Now's frame.
func (s redsyncAdapter) New(cfg impl.Config) (impl.Locker, error) {
	nodes := 0
	if s.single {
		nodes = 1
	}
	if err := validate(cfg, s.Name(), nodes); err != nil {
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
	o := s.opts()
	opts := []redsync.Option{
		redsync.WithExpiry(cfg.TTL),
		redsync.WithTries(o.tries),
		redsync.WithGenValueFunc(func() (string, error) { return t.next(), nil }),
	}
	switch {
	case o.driftSet:
		opts = append(opts, redsync.WithDriftFactor(o.drift))
	case cfg.DriftFactor > 0:
		opts = append(opts, redsync.WithDriftFactor(cfg.DriftFactor))
	}
	switch {
	case o.timeoutSet:
		opts = append(opts, redsync.WithTimeoutFactor(o.timeout))
	case cfg.NodeTimeout > 0:
		opts = append(opts, redsync.WithTimeoutFactor(float64(cfg.NodeTimeout)/float64(cfg.TTL)))
	}
	if o.delay > 0 {
		opts = append(opts, redsync.WithRetryDelay(o.delay))
	}
	if o.failFast {
		opts = append(opts, redsync.WithFailFast(true))
	}
	cfg = cfg.WithDefaults()
	return &redsyncLocker{name: s.Name(), cfg: cfg, rs: redsync.New(pools...), opts: opts, tries: o.tries, quorum: len(pools)/2 + 1}, nil
}

type redsyncLocker struct {
	name   string
	tries  int
	cfg    impl.Config
	rs     *redsync.Redsync
	opts   []redsync.Option
	quorum int
}

// Acquire makes one redsync attempt (TryLockContext), or the library's
// retry loop (LockContext) with --redsync-tries above 1. It returns a lease
// whose Validity is the mutex's Until (in cfg.Now's frame), ErrNotAcquired
// when redsync failed and the per-node answers rule out a quorum (or a
// quorum was reached too late and redsync unlocked), or an unknown-outcome
// error when the nodes that failed with errors could complete a quorum (or
// ctx ended during the library's retries).
func (l *redsyncLocker) Acquire(ctx context.Context, key string) (*impl.Lease, error) {
	ctx, cancel := libraryContext(ctx)
	defer cancel()
	start := l.cfg.Now()
	m := l.rs.NewMutex(key, l.opts...)
	var err error
	if l.tries > 1 {
		err = m.LockContext(ctx) // the library's retry loop (--redsync-tries)
	} else {
		err = m.TryLockContext(ctx)
	}
	end, real := l.cfg.Now(), time.Now()
	if err != nil && l.tries > 1 && errors.Is(err, redsync.ErrFailed) && ctx.Err() != nil {
		// LockContext returns ErrFailed when ctx ends between attempts and
		// drops the earlier attempts' errors: one of them may have been cut
		// by the deadline after its SETs landed (and its unlock too).
		return nil, fmt.Errorf("%s: acquire %q: outcome unknown: context ended during the library's retries: %w", l.name, key, err)
	}
	if err != nil {
		return nil, l.acquireErr(key, err) // redsync keeps a failed attempt's value to itself: no token tried
	}
	return &impl.Lease{
		Key: key, Token: m.Value(), Start: start, End: end,
		Validity: end.Add(m.Until().Sub(real)),
		State:    m,
	}, nil
}

// acquireErr classifies a redsync lock error. redsync reports ErrTaken when
// a quorum of nodes holds another value, ErrFailed when every node answered
// and a quorum was reached too late, and otherwise errors.Join of one
// *ErrNodeTaken or *RedisError per node that did not say OK. A RedisError
// whose command was provably never sent (notSent) is a definite "no".
func (l *redsyncLocker) acquireErr(key string, err error) error {
	var taken *redsync.ErrTaken
	if errors.As(err, &taken) {
		return impl.WithReason(fmt.Errorf("%s: acquire %q: %v: %w", l.name, key, err, impl.ErrNotAcquired), impl.ReasonTaken)
	}
	if errors.Is(err, redsync.ErrFailed) {
		return fmt.Errorf("%s: acquire %q: %v: %w", l.name, key, err, impl.ErrNotAcquired)
	}
	c := countRedsync(err)
	ok := len(l.cfg.Nodes) - c.unknown - c.taken - c.expired - c.unsent
	if c.other == 0 && (ok >= l.quorum || ok+c.unknown < l.quorum) {
		return fmt.Errorf("%s: acquire %q: %v: %w", l.name, key, err, impl.ErrNotAcquired)
	}
	return fmt.Errorf("%s: acquire %q: outcome unknown: %w", l.name, key, err)
}

// Release runs the mutex's UnlockContext: 0 and nil if released on a
// quorum, ErrNotHeld if every node answered and none held the token, an
// unknown-outcome error otherwise (also when redsync reports ErrTaken for
// a quorum but not all nodes, since it then drops the other nodes' answers).
func (l *redsyncLocker) Release(ctx context.Context, lease *impl.Lease) (int, error) {
	ctx, cancel := libraryContext(ctx)
	defer cancel()
	m, _ := leaseState[*redsync.Mutex](lease)
	if m == nil {
		return 0, fmt.Errorf("%s: release of a lease redsync did not grant: %w", l.name, impl.ErrNotHeld)
	}
	released, err := m.UnlockContext(ctx)
	if released {
		return 0, nil
	}
	n := len(l.cfg.Nodes)
	var taken *redsync.ErrTaken
	if errors.As(err, &taken) {
		if len(taken.Nodes) == n {
			return 0, impl.WithReason(fmt.Errorf("%s: release %q: %v: %w", l.name, lease.Key, err, impl.ErrNotHeld), impl.ReasonTaken)
		}
		return 0, fmt.Errorf("%s: release %q: outcome unknown: %w", l.name, lease.Key, err)
	}
	c := countRedsync(err)
	if err != nil && c.other == 0 && c.unknown == 0 && c.unsent == 0 && c.taken+c.expired == n {
		reason := impl.ReasonExpired // gone where it is not another's
		if c.taken >= l.quorum {
			reason = impl.ReasonTaken
		}
		return 0, impl.WithReason(fmt.Errorf("%s: release %q: %v: %w", l.name, lease.Key, err, impl.ErrNotHeld), reason)
	}
	return 0, fmt.Errorf("%s: release %q: outcome unknown: %w", l.name, lease.Key, err)
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

// CallBudget returns the time redsync allows the whole parallel acquire at
// TTL ttl: the timeout factor (the library's 0.05, or the
// redsync-timeout-factor setting) × TTL (redsync's WithTimeoutFactor).
func (s redsyncAdapter) CallBudget(ttl time.Duration) CallBudget {
	f := redsyncLibTimeout
	if o := s.opts(); o.timeoutSet {
		f = o.timeout
	}
	return CallBudget{Time: time.Duration(f * float64(ttl)), Scope: BudgetWholeCall,
		Rule: strconv.FormatFloat(f, 'g', -1, 64) + "×TTL (redsync WithTimeoutFactor)"}
}
