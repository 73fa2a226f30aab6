package locktest

import (
	"context"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/strategies"
)

// Errors a Lock returns (wrapped, e.g. with fmt.Errorf's %w) to say what
// happened; any other error means the outcome is unknown. They are
// lockbench's own (impl.ErrNotAcquired, impl.ErrNotHeld), so a history
// records them as lockbench's strategies' are.
var (
	// ErrNotAcquired: Acquire found the key held by another owner (or, for
	// a quorum lock, reached no quorum); nothing stays set.
	ErrNotAcquired = impl.ErrNotAcquired
	// ErrNotHeld: Release or Extend found the lease expired or another
	// owner's.
	ErrNotHeld = impl.ErrNotHeld
)

// Lock is one client's handle on the lock under test: what a team's lock
// type offers its callers, in the field's terms. Run makes one Lock per
// client (16 clients) with the constructor it is given and calls each
// from one goroutine at a time.
//
// The context of each call carries the call's deadline (the workload's
// budget, 500 ms by default): a call that waits past it must return an
// error.
type Lock interface {
	// Acquire makes one attempt to take the lock on key (no retry: the
	// workload retries). It returns the lease granted; an error wrapping
	// ErrNotAcquired when another owner holds key; any other error when
	// the outcome is unknown (the key may or may not have been set).
	Acquire(ctx context.Context, key string) (Lease, error)
	// Release gives the lease back. It returns nil, an error wrapping
	// ErrNotHeld when the lock found the lease expired or another owner's,
	// or any other error when the outcome is unknown.
	Release(ctx context.Context, lease Lease) error
}

// ReentrantLock is a Lock whose owner may acquire a key it holds again
// (Claims.Reentrant), counting the nesting, as Redisson's hash lock does.
// Run nests three acquires per hold (the outermost and two more, as
// lockbench's ci profile does) and gives each level back through
// ReleaseLevel instead of Release; the reentrancy check then compares
// every count the lock reports with the nesting depth.
type ReentrantLock interface {
	Lock
	// ReleaseLevel gives back one level of the lease: it returns the
	// count left (0 when the key is gone), an error wrapping ErrNotHeld
	// when the lock found the lease expired or another owner's, or any
	// other error when the outcome is unknown.
	ReleaseLevel(ctx context.Context, lease Lease) (remaining int, err error)
}

// Extender is implemented by a Lock that extends a held lease on request
// and declares Claims.Renewal: Run then renews each lease itself, every
// TTL/3 while it is held (as lockbench renews an adapter that serves
// extend), so a paused client's renewal pauses with it. Extend returns
// how long the lease stays valid from its return (0: the lock does not
// say), an error wrapping ErrNotHeld when the lease was gone or another
// owner's (the lease is then lost), or any other error when the outcome
// is unknown.
type Extender interface {
	Extend(ctx context.Context, lease Lease) (validity time.Duration, err error)
}

// Lease is a granted lock as Acquire returns it.
type Lease struct {
	// Key is the lock's key; Run sets it from the Acquire call.
	Key string
	// Token is the owner value the lock stored for this grant: unique per
	// grant, as the checkers tell holders apart by it (a reentrant lock's
	// is unique per owner and the same for the nested grants of a hold).
	// Required.
	Token string
	// Count is a reentrant lock's nesting count after this acquire (1 for
	// the outermost; Claims.Reentrant). Required for a reentrant lock; 0
	// otherwise.
	Count int
	// Fence is the grant's fencing token, strictly increasing per key
	// when the lock claims Fencing (Claims.Fencing); 0 otherwise.
	Fence int64
	// Validity is how long the lease stays valid from Acquire's return,
	// when the lock claims Validity (Claims.Validity): clients stop
	// before writing once it has passed. 0: the lock states none.
	Validity time.Duration
	// Lost, for a lock that claims Renewal and renews by itself (no
	// Extender), is closed when its renewal failed and the lease must be
	// taken as gone: clients stop before writing. nil otherwise.
	Lost <-chan struct{}
	// Handle is the lock's own value for this grant (a library's lock
	// object), given back to Release and Extend unchanged.
	Handle any
}

// Claims are the guarantees the lock under test makes, as an adapter's
// hello declares them (docs/protocol.md). They decide what Run expects of
// each scenario (the same rules as lockbench run uses for a lock without
// verdict rows, verdicts.FromClaims) and how clients use a lease: a lock
// that claims Validity has its validity checked before each write, one
// that claims Renewal has its lost signal honoured.
type Claims struct {
	// AtomicAcquire: the key and its TTL are set in one command.
	AtomicAcquire bool
	// TokenRelease: Release deletes the caller's own lock only (the
	// stored token is compared).
	TokenRelease bool
	// Renewal: a held lease is extended while its holder runs, by Run
	// through the Lock's Extender, or by the lock itself (Lease.Lost).
	Renewal bool
	// Fencing: each grant carries a fencing token (Lease.Fence), strictly
	// increasing per key; the protected resource refuses stale ones.
	Fencing bool
	// Validity: each lease states how long it stays valid
	// (Lease.Validity).
	Validity bool
	// Quorum: the lock acquires on 5 independent Redis nodes and needs a
	// majority (Clients.Redis holds 5 clients).
	Quorum bool
	// Reentrant: the owner may acquire a key it holds again, counted
	// (Lease.Count); the Lock must be a ReentrantLock.
	Reentrant bool
}

// Server is the kind of server the lock under test lives on; WithServer
// selects it.
type Server string

// Server kinds.
const (
	// Redis: redis-server processes (the default); Clients.Redis holds a
	// go-redis client per node.
	Redis Server = "redis"
	// Etcd: a 3-member etcd cluster; the lock dials Clients.Endpoints with
	// Clients.Dial.
	Etcd Server = "etcd"
	// ZooKeeper: a 3-server ZooKeeper ensemble; the lock dials
	// Clients.Endpoints with Clients.Dial.
	ZooKeeper Server = "zookeeper"
)

// Clients is what the constructor given to Run gets to build one client's
// Lock: connections to the servers Run started for this run.
type Clients struct {
	// Redis holds one go-redis client per Redis node (1, or 5 for a
	// Quorum lock), owned by Run: the Lock must not close them. Their
	// calls honour each call's context deadline. nil on etcd and
	// ZooKeeper.
	Redis []redis.UniversalClient
	// Endpoints are the servers' host:port addresses as this client must
	// reach them (through a fault proxy where a scenario needs one).
	Endpoints []string
	// Dial dials a server for a lock that makes its own connections (an
	// etcd client's grpc.WithContextDialer, zk.WithDialer): a client the
	// scenario pauses then sends nothing, keep-alives included. Use it
	// for every connection of a lock on etcd or ZooKeeper.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// TTL is the lock's time to live for this run.
	TTL time.Duration
	// Owner names this client, unique in the run (e.g. "c3-1"); a lock
	// may build its tokens from it, as long as each grant's is unique.
	Owner string
	// Now is this client's clock: a scenario may skew it.
	Now func() time.Time
	// AtPoint is for a lock with fault points of its own (never nil; a
	// lock may ignore it). A lock that renews on a goroutine of its own
	// (Lease.Lost) calls AtPoint(ctx, PointRenew) before each renewal, so
	// that a scenario that pauses this client stops its renewal too, as a
	// GC pause stops every goroutine: the call blocks while the client is
	// paused. A lock that declared a crash point (WithCrashPoint) calls
	// AtPoint with it where its acquire is half done; crash-between kills
	// the client there. A non-nil error means the client crashed: the
	// lock sends nothing more and returns the error wrapped (%w).
	AtPoint func(ctx context.Context, point string) error
	// NodeCall is for a quorum lock (Claims.Quorum; never nil, a lock may
	// ignore it): it records one of the lock's per-node calls, as
	// lockbench's own Redlock records them: node is the index in Redis,
	// call "acquire" or "release", key and token the call's, invoke and
	// complete when it started and returned (Now), err its outcome (nil:
	// set or deleted; ErrNotAcquired or ErrNotHeld: the node said no; any
	// other error: unknown). With them the orphans check tells a failed
	// acquire's token left on a minority of the nodes by an unlock the
	// lock could not be sure of (an unknown per-node outcome: no
	// violation) from one it left behind for no reason (a violation);
	// without them every such token is a violation. Safe for concurrent
	// use.
	NodeCall func(node int, call, key, token string, invoke, complete time.Time, err error)
}

// PointRenew is the point a lock that renews on its own passes to
// Clients.AtPoint before each renewal.
const PointRenew = string(impl.PointRenew)

// strategy is a Go lock as an impl.Strategy, so that lockbench's run
// (bench.Spec.Lock) drives it as any built-in strategy.
type strategy struct {
	name    string
	claims  Claims
	server  Server
	crash   string // the lock's crash point (WithCrashPoint); "" none
	newLock func(Clients) (Lock, error)
}

// Name returns the name reports and histories show.
func (s *strategy) Name() string { return s.name }

// Info describes the lock from its claims: the usage policy checks the
// validity of a lock that states one and honours the lost signal of one
// that renews.
func (s *strategy) Info() impl.Info {
	c := s.claims
	in := impl.Info{
		Summary: "a Go lock tested from its own go test through package locktest",
		Source:  "the team's code (the test " + s.name + ")",
		Claims: impl.Claims{AtomicAcquire: c.AtomicAcquire, TokenRelease: c.TokenRelease, Renewal: c.Renewal,
			Fencing: c.Fencing, Validity: c.Validity, Quorum: c.Quorum, Reentrant: c.Reentrant},
		Policy:     impl.Policy{CheckValidity: c.Validity, HonourLost: c.Renewal},
		Nodes:      1,
		CrashPoint: impl.Point(s.crash),
	}
	switch s.server {
	case Etcd:
		in.Server, in.Nodes = impl.ServerEtcd, 3
	case ZooKeeper:
		in.Server, in.Nodes = impl.ServerZooKeeper, 3
	default:
		if c.Quorum {
			in.Nodes = 5
		}
	}
	return in
}

// dialTimeout bounds each dial of Clients.Dial.
const dialTimeout = 2 * time.Second

// New makes one client's Locker around the team's Lock.
func (s *strategy) New(cfg impl.Config) (impl.Locker, error) {
	if cfg.Now == nil {
		cfg.Now = time.Now // the liveness probe's Lockers get no clock
	}
	ctx, cancel := context.WithCancel(context.Background())
	atPoint := func(context.Context, string) error { return nil } // the liveness probe's Lockers get no hook
	if hook := cfg.Hook; hook != nil {
		atPoint = func(ctx context.Context, p string) error { return hook(ctx, impl.Point(p)) }
	}
	nodeCall := func(int, string, string, string, time.Time, time.Time, error) {}
	if f := cfg.OnNodeCall; f != nil {
		nodeCall = func(i int, call, key, token string, invoke, complete time.Time, err error) {
			name := fmt.Sprintf("n%d", i+1) // the workload's names, as impl's strategies default them
			if i >= 0 && i < len(cfg.NodeNames) {
				name = cfg.NodeNames[i]
			}
			f(name, call, key, token, invoke, complete, err)
		}
	}
	lock, err := s.newLock(Clients{Redis: cfg.Nodes, Endpoints: cfg.Endpoints, Dial: strategies.HookedDialer(ctx, cfg.Hook, dialTimeout),
		TTL: cfg.TTL, Owner: cfg.Owner, Now: cfg.Now, AtPoint: atPoint, NodeCall: nodeCall})
	if err != nil {
		cancel()
		return nil, fmt.Errorf("%s: new lock for client %s: %w", s.name, cfg.Owner, err)
	}
	if lock == nil {
		cancel()
		return nil, fmt.Errorf("%s: new lock for client %s: the constructor returned a nil Lock", s.name, cfg.Owner)
	}
	l := &locker{s: s, cfg: cfg, lock: lock, ctx: ctx, cancel: cancel, leases: map[*impl.Lease]Lease{}}
	l.ext, _ = lock.(Extender)
	if s.claims.Reentrant {
		if l.nested, _ = lock.(ReentrantLock); l.nested == nil {
			cancel()
			return nil, fmt.Errorf("%s: the lock claims Reentrant but %T has no ReleaseLevel method (locktest.ReentrantLock): add it, or drop the claim", s.name, lock)
		}
	}
	return l, nil
}

// locker is one client's impl.Locker over the team's Lock.
type locker struct {
	s    *strategy
	cfg  impl.Config
	lock Lock
	ext  Extender // nil: the Lock does not extend on request
	// nested is the Lock of a reentrant lock (Claims.Reentrant), nil otherwise.
	nested ReentrantLock
	// ctx ends at Close; every renewal goroutine runs under it (wg).
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu     sync.Mutex
	leases map[*impl.Lease]Lease // the team's lease behind each granted one
}

// callContext is ctx with its deadline enforced: the workload's contexts
// carry a deadline but close only on Ctrl-C (impl.Locker), and a team's
// lock may wait on anything.
func callContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if d, ok := ctx.Deadline(); ok {
		return context.WithDeadline(ctx, d)
	}
	return ctx, func() {}
}

// Acquire calls the Lock's Acquire and turns its lease into lockbench's,
// starting Run's renewal for a lock that claims Renewal and extends on
// request. A lease without a token stops the run (impl.ErrFatal): the
// checkers could not tell its holder from another.
func (l *locker) Acquire(ctx context.Context, key string) (*impl.Lease, error) {
	cctx, cancel := callContext(ctx)
	defer cancel()
	start := l.cfg.Now()
	got, err := l.lock.Acquire(cctx, key)
	end := l.cfg.Now()
	if err != nil {
		return nil, fmt.Errorf("%s: acquire %q: %w", l.s.name, key, err)
	}
	if got.Token == "" {
		return nil, fmt.Errorf("%s: acquire %q returned a lease without a Token (each grant needs a unique one): %w", l.s.name, key, impl.ErrFatal)
	}
	if l.nested != nil && got.Count < 1 {
		return nil, fmt.Errorf("%s: acquire %q returned a lease without a Count (a reentrant lock reports its nesting count, 1 for the outermost): %w", l.s.name, key, impl.ErrFatal)
	}
	got.Key = key
	lease := &impl.Lease{Key: key, Token: got.Token, Fence: got.Fence, Count: got.Count, Start: start, End: end}
	if got.Validity > 0 {
		lease.Validity = end.Add(got.Validity)
	}
	if l.s.claims.Renewal {
		if l.ext != nil {
			ext := l.ext
			impl.DriveRenewal(l.ctx, &l.wg, l.cfg, lease, func(ctx context.Context) (time.Duration, error) {
				return ext.Extend(ctx, got)
			})
		} else {
			lease.Lost = got.Lost
		}
	}
	l.mu.Lock()
	l.leases[lease] = got
	l.mu.Unlock()
	return lease, nil
}

// Release stops the lease's renewal, then calls the Lock's Release (a
// reentrant lock's ReleaseLevel: the count left).
func (l *locker) Release(ctx context.Context, lease *impl.Lease) (int, error) {
	l.mu.Lock()
	got, ok := l.leases[lease]
	delete(l.leases, lease)
	l.mu.Unlock()
	if !ok {
		return 0, fmt.Errorf("%s: release of a lease this client was not granted: %w", l.s.name, ErrNotHeld)
	}
	lease.StopRenewal()
	cctx, cancel := callContext(ctx)
	defer cancel()
	if l.nested != nil {
		n, err := l.nested.ReleaseLevel(cctx, got)
		if err != nil {
			return 0, fmt.Errorf("%s: release %q: %w", l.s.name, lease.Key, err)
		}
		return n, nil
	}
	if err := l.lock.Release(cctx, got); err != nil {
		return 0, fmt.Errorf("%s: release %q: %w", l.s.name, lease.Key, err)
	}
	return 0, nil
}

// Close stops every renewal of this client and closes the Lock when it is
// an io.Closer. Held keys are not deleted: they expire by their TTL.
func (l *locker) Close() error {
	l.cancel()
	l.wg.Wait()
	if c, ok := l.lock.(io.Closer); ok {
		if err := c.Close(); err != nil {
			return fmt.Errorf("%s: close: %w", l.s.name, err)
		}
	}
	return nil
}
