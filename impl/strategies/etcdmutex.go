package strategies

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
	"go.uber.org/zap"
	"google.golang.org/grpc"

	"github.com/lockbench/lockbench/impl"
)

// etcdMutex is etcd's own lock recipe: go.etcd.io/etcd/client/v3/concurrency
// Session (a lease kept alive by the client) and Mutex (a key per session
// under the lock's prefix; the oldest key holds the lock). fenced adds the
// lock key's create revision as the fencing token (etcd-fenced).
type etcdMutex struct{ fenced bool }

// Name returns "etcd-mutex".
func (etcdMutex) Name() string { return "etcd-mutex" }

// Info describes etcd-mutex.
func (s etcdMutex) Info() impl.Info { return etcdInfo(false) }

// New returns an etcd-mutex Locker, see newEtcdLocker.
func (s etcdMutex) New(cfg impl.Config) (impl.Locker, error) {
	return newEtcdLocker(s.Name(), cfg, false)
}

// ServerTTL returns the lease TTL etcd enforces for a run TTL ttl: ttl
// rounded up to whole seconds (etcd leases count seconds), at least 1 s.
func (etcdMutex) ServerTTL(ttl time.Duration) time.Duration { return etcdLeaseTTL(ttl) }

// etcdInfo is the Info of etcd-mutex (fenced false) and etcd-fenced.
func etcdInfo(fenced bool) impl.Info {
	in := impl.Info{
		Summary: "etcd concurrency.Session (one lease per client, TTL = --ttl rounded up to whole seconds, kept alive by the client every TTL/3) + Mutex.TryLock (one Txn: put PREFIX/lease if absent, read the oldest key under PREFIX; held if that is ours); Lost when the session's Done closes (lease expired or no keep-alive answered within the TTL); release: Txn delete our key if Mutex.IsOwner",
		Source:  "etcd client v3 concurrency package (Session, Mutex); Jepsen etcd 3.4.3 (2020): etcd locks are unsafe under pauses and partitions",
		Library: moduleVersion(etcdClientModule, etcdClientVersion),
		Claims:  impl.Claims{AtomicAcquire: true, TokenRelease: true, Renewal: true},
		Policy:  impl.Policy{HonourLost: true},
		Nodes:   3,
		Server:  impl.ServerEtcd,
	}
	if fenced {
		in.Summary += "; fencing token: the lock key's create revision (etcd's cluster-wide revision, strictly increasing)"
		in.Source += "; Kleppmann (2016), How to do distributed locking: fencing tokens"
		in.Claims.Fencing = true
	}
	return in
}

// etcdLeaseTTL rounds ttl up to whole seconds, at least 1 s.
func etcdLeaseTTL(ttl time.Duration) time.Duration {
	s := (ttl + time.Second - 1) / time.Second
	return max(s, 1) * time.Second
}

// etcdLocker is one client of etcd-mutex or etcd-fenced: one etcd client
// on cfg.Endpoints and one session at a time.
type etcdLocker struct {
	name   string
	cfg    impl.Config
	fenced bool
	ttl    int // lease TTL, s
	cli    *clientv3.Client
	// ctx ends at Close; sessions keep their lease alive under it.
	ctx    context.Context
	cancel context.CancelFunc

	mu   sync.Mutex
	sess *concurrency.Session // nil until the first Acquire, or after it ended
}

// newEtcdLocker dials cfg.Endpoints with an etcd client v3 with
// cfg.Security's user, password and TLS (no endpoint
// sync from the cluster: the endpoints stay those given, proxies
// included; every write goes through dialHooked, so cfg.Hook at
// PointRenew can stop the client's keep-alives). The session is made at
// the first Acquire.
func newEtcdLocker(name string, cfg impl.Config, fenced bool) (*etcdLocker, error) {
	if err := validateEndpoints(cfg, name); err != nil {
		return nil, err
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	ctx, cancel := context.WithCancel(context.Background())
	hook := cfg.Hook
	dial := func(dctx context.Context, addr string) (net.Conn, error) {
		return dialHooked(dctx, ctx, hook, addr, time.Second)
	}
	cli, err := clientv3.New(*cfg.Security.ApplyEtcd(&clientv3.Config{
		Endpoints:   cfg.Endpoints,
		DialTimeout: time.Second,
		Logger:      zap.NewNop(),
		DialOptions: []grpc.DialOption{grpc.WithContextDialer(dial), grpc.WithChainUnaryInterceptor(countRoundTrips(cfg.RoundTrip))},
	}))
	if err != nil {
		cancel()
		return nil, fmt.Errorf("%s: etcd client: %w", name, cfg.Security.RedactErr(err))
	}
	return &etcdLocker{name: name, cfg: cfg, fenced: fenced, ttl: int(etcdLeaseTTL(cfg.TTL) / time.Second), cli: cli, ctx: ctx, cancel: cancel}, nil
}

// session returns the live session, or grants a lease (bounded by ctx)
// and starts a new session on it when there is none or the last one
// ended.
func (l *etcdLocker) session(ctx context.Context) (*concurrency.Session, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.sess != nil {
		select {
		case <-l.sess.Done():
			l.sess = nil
		default:
			return l.sess, nil
		}
	}
	// Granted here rather than by NewSession, whose Grant would run under
	// the session's own context (the Locker's life, no deadline).
	g, err := l.cli.Grant(ctx, int64(l.ttl))
	if err != nil {
		return nil, err
	}
	s, err := concurrency.NewSession(l.cli, concurrency.WithLease(g.ID), concurrency.WithTTL(l.ttl), concurrency.WithContext(l.ctx))
	if err != nil {
		return nil, err
	}
	l.sess = s
	return s, nil
}

// abandon stops keeping s's lease alive (Session.Orphan): its keys go
// when the lease expires, a TTL later, as a Redis key left by an unknown
// outcome would. The next Acquire starts a new session.
func (l *etcdLocker) abandon(s *concurrency.Session) {
	l.mu.Lock()
	if l.sess == s {
		l.sess = nil
	}
	l.mu.Unlock()
	if s != nil {
		s.Orphan()
	}
}

// etcdState is what Release needs of a grant.
type etcdState struct {
	sess  *concurrency.Session
	mutex *concurrency.Mutex
	lost  *holdLost // the lease's own Lost, ended at Release
}

// Acquire makes one Mutex.TryLock on key (its keys are under "key/") with the
// Locker's session (made first if there is none). It returns a lease whose
// Lost closes when the session's Done does while the lease is held (not
// after its Release began: the session lives on, shared by later leases;
// see holdLost), ErrNotAcquired when another session's key
// is older (TryLock deleted ours), or an unknown-outcome error; after one
// the session is abandoned, so that a key it may have left (a put that
// landed, or a waiter key TryLock could not delete) expires with its
// lease instead of holding the lock for a live session. Validity is not
// tracked (zero): the lease is renewed in the background, so no deadline
// fixed at the grant holds, and the client library says when renewal
// failed through the session's Done (Lost), as etcd's documentation tells
// its users to watch. Token is the lock key (PREFIX + the lease id in
// hex) and "@" its create revision, distinct per grant. etcd-fenced:
// Fence is the key's create revision.
func (l *etcdLocker) Acquire(ctx context.Context, key string) (*impl.Lease, error) {
	ctx, cancel := libraryContext(ctx)
	defer cancel()
	if err := l.ctx.Err(); err != nil {
		return nil, fmt.Errorf("%s: acquire %q: locker closed: %w", l.name, key, err)
	}
	start := l.cfg.Now()
	s, err := l.session(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: acquire %q: new session: outcome unknown: %w", l.name, key, err)
	}
	m := concurrency.NewMutex(s, key) // its keys: key + "/" + the lease id
	switch err := m.TryLock(ctx); {
	case errors.Is(err, concurrency.ErrLocked):
		return nil, fmt.Errorf("%s: acquire %q: %v: %w", l.name, key, err, impl.ErrNotAcquired)
	case err != nil:
		l.abandon(s)
		return nil, fmt.Errorf("%s: acquire %q: outcome unknown: %w", l.name, key, err)
	}
	rev := createRevision(m)
	lost := newHoldLost(s.Done(), l.ctx.Done())
	lease := &impl.Lease{Key: key, Token: fmt.Sprintf("%s@%d", m.Key(), rev), Start: start, End: l.cfg.Now(), Lost: lost.ch, State: etcdState{sess: s, mutex: m, lost: lost}}
	if l.fenced {
		lease.Fence = rev
	}
	return lease, nil
}

// createRevision returns the create revision of m's key as TryLock found
// it (the value Mutex.IsOwner compares).
func createRevision(m *concurrency.Mutex) int64 {
	c := m.IsOwner()
	if r, ok := c.GetCompare().GetTargetUnion().(*pb.Compare_CreateRevision); ok {
		return r.CreateRevision
	}
	return m.Header().GetRevision()
}

// Release deletes the lease's key in a Txn guarded by Mutex.IsOwner (the
// key still exists with the create revision it had at the grant): 0 and
// nil, ErrNotHeld when the key is gone (its lease expired or was
// revoked), or an unknown-outcome error. The session lives on for the next
// Acquire; the lease's Lost no longer closes once Release is called.
func (l *etcdLocker) Release(ctx context.Context, lease *impl.Lease) (int, error) {
	ctx, cancel := libraryContext(ctx)
	defer cancel()
	st, ok := leaseState[etcdState](lease)
	if !ok {
		return 0, fmt.Errorf("%s: release of a lease %s did not grant: %w", l.name, l.name, impl.ErrNotHeld)
	}
	st.lost.end()
	resp, err := l.cli.Txn(ctx).If(st.mutex.IsOwner()).Then(clientv3.OpDelete(st.mutex.Key())).Commit()
	switch {
	case err != nil:
		return 0, fmt.Errorf("%s: release %q: outcome unknown: %w", l.name, lease.Key, err)
	case !resp.Succeeded:
		return 0, fmt.Errorf("%s: release %q: key %s is gone (lease expired): %w", l.name, lease.Key, st.mutex.Key(), impl.ErrNotHeld)
	}
	return 0, nil
}

// KeyLease reports what remains of the lease of key's holder (the oldest
// key under "key/"), NoExpiry for a key without a lease, NotHeld when
// there is no key. etcd's TimeToLive counts whole seconds, rounded down,
// so the value is an upper bound: (remaining + 1) s, at most the lease's
// granted TTL, in ms.
func (l *etcdLocker) KeyLease(ctx context.Context, key string) (int64, error) {
	resp, err := l.cli.Get(ctx, key+"/", clientv3.WithFirstCreate()...)
	if err != nil {
		return 0, fmt.Errorf("%s: read %q: %w", l.name, key, err)
	}
	if len(resp.Kvs) == 0 {
		return NotHeld, nil
	}
	id := clientv3.LeaseID(resp.Kvs[0].Lease)
	if id == clientv3.NoLease {
		return NoExpiry, nil
	}
	ttl, err := l.cli.TimeToLive(ctx, id)
	if err != nil {
		return 0, fmt.Errorf("%s: lease of %q: %w", l.name, key, err)
	}
	if ttl.TTL < 0 {
		return NotHeld, nil // expired meanwhile: its keys are going
	}
	return min(ttl.TTL+1, ttl.GrantedTTL) * 1000, nil
}

// Close orphans the session (its lease, and any key still held, expire a
// TTL later, as Redis keys of a closed Locker do) and closes the client.
func (l *etcdLocker) Close() error {
	l.mu.Lock()
	s := l.sess
	l.sess = nil
	l.mu.Unlock()
	l.cancel()
	if s != nil {
		s.Orphan()
	}
	err := l.cli.Close()
	if err != nil && (errors.Is(err, context.Canceled) || strings.Contains(err.Error(), "context canceled")) {
		err = nil
	}
	return err
}
