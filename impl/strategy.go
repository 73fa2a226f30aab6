// Package impl is the lock API every strategy lockbench compares
// implements: Strategy, Locker, their Config, Lease and Info, the fault
// points, the call errors and their reasons, the renewal loop, and the
// optional interfaces the harness looks for (Checker, Extender,
// Canceller). The strategies themselves and their registry are package
// impl/strategies (a new strategy is one file there plus one line in
// All); package impl/adapterclient runs any lock as an adapter process
// (exec: strategies).
//
// A Locker is one client's view of a strategy: it owns one owner identity and
// talks to the Redis nodes it was given. Outcomes follow Jepsen's terms:
// Acquire returns a *Lease (ok), ErrNotAcquired (fail) or any other error
// (info: the outcome is unknown, the key may or may not have been set).
// Release returns nil (ok), ErrNotHeld (fail) or any other error (info).
package impl

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/cluster/security"
)

// Sentinel errors. Any other error from Acquire or Release means the outcome
// is unknown.
var (
	// ErrNotAcquired: the lock is held by another owner (or, for quorum
	// strategies, no quorum was reached within the validity time). Nothing
	// stays set on the nodes.
	ErrNotAcquired = errors.New("impl: not acquired: held by another owner")
	// ErrNotHeld: release found the lock expired or owned by someone else.
	ErrNotHeld = errors.New("impl: not held: expired or owned by another owner")
	// ErrCrashed is returned by a Hook to make the strategy stop at once, as
	// if the client process died at that point: no further Redis call is made.
	ErrCrashed = errors.New("impl: client crashed at a fault point")
	// ErrFatal is wrapped by a Locker's error after which the Locker can
	// make no further call, so the run must stop: an exec adapter died,
	// hung past a deadline or broke the protocol (the error names it and
	// the offending line). The outcome of the call that returned it is
	// unknown.
	ErrFatal = errors.New("impl: the client cannot go on")
)

// Claims are the guarantees a strategy's design asserts; reports show them.
type Claims struct {
	AtomicAcquire bool // the key and its TTL are set in one command
	TokenRelease  bool // release deletes only the caller's own lock (owner token compared)
	Renewal       bool // a watchdog extends the TTL while the lock is held
	Reentrant     bool // the same owner may acquire again while holding (counted)
	Quorum        bool // acquires on N independent nodes and needs a majority
	Fencing       bool // each grant carries a strictly increasing fencing token
	Validity      bool // the lease carries a validity deadline the client can check
	// ReplicaAck: a grant (and a release) counts only once Info.Replicas
	// replicas of the primary have acknowledged it (Redis WAIT); a grant
	// no replica confirms in time is taken back and refused.
	ReplicaAck bool
}

// Policy is how a client uses its lease inside the critical section. The
// default is what the strategy's own documentation tells its users; the
// workload may override it.
type Policy struct {
	// CheckValidity: before writing the protected resource, stop the critical
	// section if the lease's validity deadline (minus a safety margin) has passed.
	CheckValidity bool
	// HonourLost: before writing, stop the critical section if Lease.Lost has fired.
	HonourLost bool
	// AskLock: before writing, ask the lock whether it still holds the
	// lease (the Locker's Checker: a protocol-2 adapter that declares
	// check), record its answer as a check operation, and stop the
	// critical section unless it says valid. A lock that cannot say (an
	// error) counts as not valid. No effect on a Locker without Checker.
	AskLock bool
}

// Info describes a strategy for listings and reports.
type Info struct {
	// Summary is one line: how acquire and release work.
	Summary string
	// Source names where the algorithm comes from (the redis.io distlock
	// page, Redisson, one of the articles on Redis locks lockbench grew
	// from).
	Source string
	// Library is the library module and version an adapter runs, as
	// linked into the binary (go.mod's version), e.g.
	// "github.com/bsm/redislock v0.9.4"; empty for home-made strategies.
	Library string
	Claims  Claims
	// Policy is the default usage policy.
	Policy Policy
	// Nodes is how many independent servers the strategy needs by
	// default: 1, or 5 for quorum strategies.
	Nodes int
	// Replicas is how many replicas the strategy's one primary needs
	// (Claims.ReplicaAck: the count WAIT waits for); the harness then runs
	// it on a primary with that many replicas (cluster topology
	// "replicated:N") wherever a scenario sets no topology of its own.
	// 0: none (a lock on its Nodes alone).
	Replicas int
	// Cluster says the lock lives on a Redis Cluster: Config.Nodes holds
	// one go-redis cluster client over the cluster's nodes (it routes
	// each key to its slot's primary and follows MOVED and ASK), and the
	// harness runs the strategy on topology redis-cluster:3+3 and only
	// under the scenarios written for a cluster (chaos.Scenario.OnCluster).
	Cluster bool
	// Server is the kind of server the strategy's lock lives on; the zero
	// value is ServerRedis.
	Server Server
	// CrashPoint is where the crash-between scenario kills a client of
	// this strategy: a fault Point its Locker passes to Config.Hook while
	// the lock is half taken, e.g. PointAfterSetNX (naive: after SETNX,
	// before PEXPIRE, which leaves a key without TTL). "" means the
	// strategy declares none: the client dies inside its critical section,
	// right after its resource read.
	CrashPoint Point
	// ClientClock says whether a fault can step the wall clock the
	// strategy's clients read (the client-clock-step scenario). The zero
	// value (not steppable, no reason) is a strategy inside lockbench's Go
	// process; an exec: strategy says what its adapter's processes allow.
	ClientClock ClockReach
}

// ClockReach says whether lockbench can step the wall clock a lock's
// client reads: only a client in an adapter process of its own whose
// programs read their clocks through libc (clock_gettime, gettimeofday,
// time), which the clock-offset preload intercepts (clockshim.Reach).
type ClockReach struct {
	// Steppable is true when the client's wall clock can be stepped: an
	// adapter process started with the preload (ExecOptions.ClockShim)
	// then implements ClockStepper.
	Steppable bool
	// Why says why the clock cannot be stepped, e.g. "pid 42
	// (/usr/bin/adapter) is a Go program (go1.26.1): ..."; "" when it
	// can, and for a strategy inside lockbench's process (the scenario
	// gives that reason).
	Why string
}

// Server is the kind of server a strategy's lock lives on. It selects the
// cluster the harness starts and how a Locker reaches it (Config.Nodes for
// Redis, Config.Endpoints for the others).
type Server string

// Server kinds.
const (
	// ServerRedis: redis-server nodes; Lockers get go-redis clients in
	// Config.Nodes (and their addresses in Config.Endpoints).
	ServerRedis Server = ""
	// ServerEtcd: an etcd cluster; Lockers dial Config.Endpoints
	// (host:port of each member's client URL) themselves.
	ServerEtcd Server = "etcd"
	// ServerZooKeeper: a ZooKeeper ensemble; Lockers dial
	// Config.Endpoints (host:port of each server's client port) themselves.
	ServerZooKeeper Server = "zookeeper"
)

// String returns the server kind's name ("redis" for ServerRedis).
func (s Server) String() string {
	if s == ServerRedis {
		return "redis"
	}
	return string(s)
}

// Strategy creates Lockers, one per workload client.
type Strategy interface {
	// Name is the registry name, e.g. "token-lua".
	Name() string
	// Info describes the strategy.
	Info() Info
	// New returns a Locker for one client (one owner). It does not close the
	// clients in cfg.Nodes: the caller owns them.
	New(cfg Config) (Locker, error)
}

// Locker is one client's handle on a strategy. Methods are called from one
// goroutine at a time, except Close.
//
// The ctx of Acquire and Release carries the call's deadline (the
// workload's OpTimeout). Its deadline bounds every dial, read and write of
// go-redis clients made with ContextTimeoutEnabled, as the harness makes
// them, but its Done channel closes only on Ctrl-C, not at the deadline
// (a timer per call was the harness's largest cost): a Locker that waits on
// anything but Redis (a timer, a channel, a library's retry loop) first
// derives context.WithDeadline(ctx, deadline), as the library adapters do.
type Locker interface {
	// Acquire makes one attempt to take the lock on key (no retry: retry
	// policies belong to the workload). It returns the lease, ErrNotAcquired,
	// or another error when the outcome is unknown. For reentrant strategies
	// an owner that already holds key gets a lease with a higher Count.
	Acquire(ctx context.Context, key string) (*Lease, error)
	// Release gives back one level of the lease. It returns the remaining
	// reentrancy count (0 for non-reentrant strategies and when the key is
	// gone), ErrNotHeld, or another error when the outcome is unknown. It
	// stops the lease's renewal.
	Release(ctx context.Context, l *Lease) (remaining int, err error)
	// Close stops background work (renewals). It does not close Redis clients.
	Close() error
}

// Point names a place inside a strategy where a Hook is called.
type Point string

// Fault points.
const (
	// PointAfterSetNX: naive, after SETNX succeeded and before EXPIRE.
	PointAfterSetNX Point = "after-setnx"
	// PointRenew: watchdog, before each renewal. A paused client blocks here,
	// so a GC-like pause stops renewal too.
	PointRenew Point = "renew"
	// PointExtend: right before each extend lockbench itself sends (an
	// adapter that serves extend), after PointRenew; the workload names
	// it before-extend. Its call runs under Config.CallContext.
	PointExtend Point = "before-extend"
)

// Hook is called by a strategy at a fault point. A nil error continues; a Hook
// may block (client pause) until ctx ends; ErrCrashed makes the strategy give
// up at once and return ErrCrashed.
type Hook func(ctx context.Context, p Point) error

// Config configures one client's Locker. Zero values select the defaults.
type Config struct {
	// Nodes are the Redis nodes, one client each: len 1 for single-node
	// strategies, N (5 by default) for quorum strategies. Required for
	// ServerRedis strategies; unused by the others.
	Nodes []redis.UniversalClient
	// Endpoints are the servers' addresses (host:port), one per node, as
	// this client must reach them (through a proxy where a scenario routes
	// its links through one). Strategies on ServerEtcd and ServerZooKeeper
	// dial them themselves; for Redis strategies they are the addresses of
	// Nodes, in the same order. Default: none.
	Endpoints []string
	// Security is the AUTH and TLS of the servers at Endpoints, for
	// strategies that dial them themselves (ServerEtcd, ServerZooKeeper;
	// Redis strategies get Nodes with it applied). The zero value: plain.
	// It never prints its password (see security.Security).
	Security security.Security
	// NodeNames label Nodes in errors ("n1".."n5"); default "n<index+1>".
	NodeNames []string
	// TTL is the lock's time to live. Required, at least 1 ms.
	TTL time.Duration
	// Owner identifies the client (unique per client in a run). Tokens are
	// Owner, a random per-Locker nonce and a per-acquire counter
	// ("owner:nonce:n"), so each grant has a distinct token, also across a
	// client restarted with the same Owner. Library adapters may use their
	// library's random tokens instead. Required.
	Owner string
	// Client is the logical client's number in the run (from 0). An exec
	// strategy made for a run (RunScoped) whose adapter serves threads puts
	// client k in process k/threads; other strategies ignore it.
	Client int
	// Now is the client's clock, used for validity deadlines; a fault may skew
	// it. Default: time.Now.
	Now func() time.Time
	// Hook is called at fault points; nil: never.
	Hook Hook
	// RoundTrip, when set, is called as a request of a client the strategy
	// dials itself goes out and returns the func to call at its reply or
	// failure, so the caller counts the lock's round trips: etcd's unary
	// gRPC calls (streams such as lease keep-alives and watches left
	// out); ZooKeeper's requests, each counted as one round trip as it is
	// written (go-zookeeper's lock recipe waits for each reply before its
	// next request; pings and session set-up left out). Redis strategies
	// use the clients in Nodes, which their caller counts. nil: not
	// counted.
	RoundTrip func() (done func())
	// DriftFactor is the clock drift allowance for validity (Redlock).
	// Default: 0.01 (1% of the TTL), plus 2 ms, as on the redis.io distlock page.
	DriftFactor float64
	// NodeTimeout bounds each per-node call of a quorum strategy. Default:
	// TTL/10, at least 5 ms.
	NodeTimeout time.Duration
	// RenewEvery is the watchdog's renewal period. Default: TTL/3.
	RenewEvery time.Duration
	// WaitTimeout is how long a strategy that waits for replicas
	// (Claims.ReplicaAck) lets WAIT block for their acknowledgement of a
	// grant or a release before it gives up. Default: DefaultWaitTimeout
	// of the TTL (TTL/10, between 5 ms and 100 ms).
	WaitTimeout time.Duration
	// CallContext, if set, gives the context of each extend lockbench
	// itself sends (see PointExtend), called with the renewal's context
	// right after the Hook at PointExtend: it returns the call's context
	// (the workload's lets a nemesis cancel the call in flight) and the
	// func to call when the call returned, which reports whether the call
	// was cancelled meanwhile. nil: the renewal's context as it is.
	CallContext func(ctx context.Context) (context.Context, func() (cancelled bool))
	// OnRenew, if set, is told of every renewal a strategy makes
	// (watchdog, an adapter's extend requests). It runs on the renewal
	// goroutine and must not block.
	OnRenew func(Renewal)
	// OnNodeCall, if set, is told of every per-node call of a quorum
	// strategy (redlock): the node's name, the call ("acquire" or
	// "release"), key and token, when it started and returned (client
	// clock), and its outcome: nil (set or deleted), ErrNotAcquired or
	// ErrNotHeld (the node said no), or another error (unknown). It runs on
	// the per-node goroutines, concurrently, and must not block.
	OnNodeCall func(node, call, key, token string, invoke, complete time.Time, err error)
	// OnLostUnheld, if set, is told of a lost signal for a lease the
	// Locker does not hold: released, or a token it never granted (an
	// adapter's lost event for a released lease). The workload records it
	// so that the lost check can hold it against the lock. It must not
	// block.
	OnLostUnheld func(key, token string)
}

// Renewal is one renewal call of a lease, as Config.OnRenew is told of it.
type Renewal struct {
	// Key and Token name the lease.
	Key, Token string
	// Invoke and Complete are when the call started and returned (client clock).
	Invoke, Complete time.Time
	// Err is the outcome: nil (extended), an error wrapping ErrNotHeld (the
	// key was gone or another owner's), or another error (unknown); it may
	// carry the lock's stated reason (Reason).
	Err error
	// ValidUntil is the lease's new validity deadline when the lock
	// reported one with the renewal (client clock), else zero.
	ValidUntil time.Time
}

// Lease is a granted lock, as the client sees it.
type Lease struct {
	// Key is the lock key.
	Key string
	// Token is the owner value stored in the key.
	Token string
	// Fence is the fencing token (0 if the strategy has none).
	Fence int64
	// Count is the reentrancy count after this acquire (0 if not reentrant).
	Count int
	// Start and End are when Acquire was called and returned (client clock).
	Start, End time.Time
	// Validity is the deadline after which the client must assume the lock
	// may be held by someone else, as the grant set it; zero if the
	// strategy tracks none. A renewal that reports a new validity moves
	// the deadline without changing this field: read ValidUntil.
	Validity time.Time
	// Lost is closed when renewal fails and the lease must be assumed gone;
	// nil if the strategy does not renew.
	Lost <-chan struct{}

	// State is the granting Locker's own: what its Release needs besides
	// Key and Token (e.g. a library's lock handle); nil for most
	// strategies. Others leave it alone.
	State any

	// stop stops the lease's renewal (nil if none): StartRenewal and
	// DriveRenewal set it, StopRenewal calls it.
	stop func()
	// renewed is the validity deadline the latest renewal (or check)
	// reported, nil until one did. Written by the renewal goroutine, read
	// by the client: hence atomic.
	renewed atomic.Pointer[time.Time]
}

// ValidUntil returns the lease's validity deadline: the one the latest
// renewal or check reported (an extend reply's validity_ms counted from
// its arrival), else Validity; zero if the strategy tracks none. Safe for
// concurrent use.
func (l *Lease) ValidUntil() time.Time {
	if t := l.renewed.Load(); t != nil {
		return *t
	}
	return l.Validity
}

// SetValidUntil sets the deadline ValidUntil returns: a Locker's Extend
// or Check calls it with the validity the lock reported. Safe for
// concurrent use.
func (l *Lease) SetValidUntil(t time.Time) { l.renewed.Store(&t) }
