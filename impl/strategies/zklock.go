package strategies

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/lockbench/lockbench/impl"
)

// zkLock is go-zookeeper/zk's lock recipe (zk.NewLock): an ephemeral
// sequential node under the lock's path; the lowest sequence holds the
// lock, the others wait on their predecessor's deletion. The node lives
// as long as the client's session. fenced adds the node's czxid as the
// fencing token (zk-fenced).
type zkLock struct{ o *zkOptions }

// Name returns "zk-lock".
func (zkLock) Name() string { return "zk-lock" }

// Info describes zk-lock.
func (s zkLock) Info() impl.Info { return zkInfo(false, s.o.lostOn()) }

// New returns a zk-lock Locker, see newZKLocker.
func (s zkLock) New(cfg impl.Config) (impl.Locker, error) {
	return newZKLocker(s.Name(), cfg, false, s.o.lostOn())
}

// Settings returns the effective library settings by flag name.
func (s zkLock) Settings() map[string]string { return s.o.settings() }

// tune applies the zk-lost setting.
func (s zkLock) tune(set map[string]string, _ time.Duration) (impl.Strategy, error) {
	o, err := s.o.tune(set)
	if err != nil {
		return nil, err
	}
	s.o = o
	return s, nil
}

// zkOptions are zk-lock's and zk-fenced's settings (nil: the defaults).
type zkOptions struct {
	// lostOnDisconnect closes Lost when the connection to the ensemble
	// drops (StateDisconnected), not only when the session expires.
	lostOnDisconnect bool
}

// The values of the zk-lost setting.
const (
	zkLostExpired      = "expired"
	zkLostDisconnected = "disconnected"
)

// zkSettings are the settings of zk-lock and zk-fenced.
func zkSettings() []Setting {
	return []Setting{
		{Name: "zk-lost", Default: zkLostExpired, Strategies: []string{"zk-lock", "zk-fenced"},
			Usage: "zk-lock, zk-fenced: when the lease counts as lost: expired (the session expired, which the client learns only once it reconnects: go-zookeeper's recipe) or disconnected (the connection dropped: Curator's rule, a SUSPENDED connection may have lost the lock)"},
	}
}

// lostOn is the zk-lost value (o may be nil).
func (o *zkOptions) lostOn() string {
	if o != nil && o.lostOnDisconnect {
		return zkLostDisconnected
	}
	return zkLostExpired
}

// settings returns the effective settings by flag name.
func (o *zkOptions) settings() map[string]string {
	return map[string]string{"zk-lost": o.lostOn()}
}

// tune parses the zk settings; errors name the flag and the valid values.
func (o *zkOptions) tune(set map[string]string) (*zkOptions, error) {
	out := zkOptions{}
	if o != nil {
		out = *o
	}
	for name, v := range set {
		if name != "zk-lost" {
			return nil, fmt.Errorf("--%s: not a zk-lock setting", name)
		}
		switch v {
		case zkLostExpired:
			out.lostOnDisconnect = false
		case zkLostDisconnected:
			out.lostOnDisconnect = true
		default:
			return nil, fmt.Errorf("--zk-lost %s: unknown (valid: %s, %s)", v, zkLostExpired, zkLostDisconnected)
		}
	}
	return &out, nil
}

// zkInfo is the Info of zk-lock (fenced false) and zk-fenced, with Lost
// on lostOn (zk-lost).
func zkInfo(fenced bool, lostOn string) impl.Info {
	lost := "Lost when the session expires (the client learns of it once it reconnects)"
	if lostOn == zkLostDisconnected {
		lost = "Lost when the connection to the ensemble drops (--zk-lost disconnected: Curator's rule) or the session expires"
	}
	in := impl.Info{
		Summary: "go-zookeeper/zk lock recipe (zk.NewLock): an ephemeral sequential node under /KEY, the lowest holds, the others wait on their predecessor until granted or the call's deadline; one session per client, session timeout = --ttl (the ensemble raises it to at least 2 ticks); " + lost + "; release: Lock.Unlock (delete our node)",
		Source:  "ZooKeeper recipes (Locks); go-zookeeper/zk lock.go; Curator, Shared Reentrant Lock (a SUSPENDED connection may have lost the lock)",
		Library: moduleVersion(zkModule, zkVersion),
		Claims:  impl.Claims{AtomicAcquire: true, TokenRelease: true, Renewal: true},
		Policy:  impl.Policy{HonourLost: true},
		Nodes:   3,
		Server:  impl.ServerZooKeeper,
	}
	if fenced {
		in.Summary += "; fencing token: the lock node's czxid (the zxid of its create: cluster-wide, strictly increasing)"
		in.Source += "; Kleppmann (2016), How to do distributed locking: ZooKeeper's zxid as a fencing token"
		in.Claims.Fencing = true
	}
	return in
}

// zkLocker is one client of zk-lock or zk-fenced: one session at a time
// on cfg.Endpoints.
type zkLocker struct {
	name   string
	cfg    impl.Config
	fenced bool
	// lostOnDisconnect: Lost closes when the connection drops (zk-lost).
	lostOnDisconnect bool
	tokens           *tokens
	// ctx ends at Close; hooks blocked on the connection return then.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup // attempts given up at their deadline, session closes

	mu   sync.Mutex
	sess *zkSession // nil before the first Acquire and after a reset
}

// zkSession is one go-zookeeper connection and what its session events
// tell: lost is closed when the session expires (the library then opens
// a new session on the same connection, which gets a new lost), and with
// onDisconnect also when the connection drops (a reconnect to the same
// session gets a new lost too: leases granted before keep the closed one).
type zkSession struct {
	conn         *zk.Conn
	onDisconnect bool
	mu           sync.Mutex
	lost         chan struct{}
	gone         bool // lost is closed
}

// event handles the connection's events (go-zookeeper's event callback:
// it must not block).
func (s *zkSession) event(ev zk.Event) {
	if ev.Type != zk.EventSession {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch ev.State {
	case zk.StateExpired:
		if !s.gone {
			close(s.lost)
			s.gone = true
		}
	case zk.StateDisconnected:
		// go-zookeeper reports it when the connection drops, and after
		// each connect whose handshake failed (a paused server's kernel
		// still accepts the TCP connect).
		if s.onDisconnect && !s.gone {
			close(s.lost)
			s.gone = true
		}
	case zk.StateHasSession:
		if s.gone {
			s.lost, s.gone = make(chan struct{}), false
		}
	}
}

// lostCh returns the channel closed when the current session expires.
func (s *zkSession) lostCh() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lost
}

// zkNoLog discards go-zookeeper's log lines (connects, reconnects: the
// faults make many).
type zkNoLog struct{}

func (zkNoLog) Printf(string, ...any) {}

// newZKLocker checks cfg; the session is opened at the first Acquire.
// lostOn is the zk-lost setting.
func newZKLocker(name string, cfg impl.Config, fenced bool, lostOn string) (*zkLocker, error) {
	if err := validateEndpoints(cfg, name); err != nil {
		return nil, err
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	t, err := newTokens(cfg.Owner)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &zkLocker{name: name, cfg: cfg, fenced: fenced, lostOnDisconnect: lostOn == zkLostDisconnected, tokens: t, ctx: ctx, cancel: cancel}, nil
}

// session returns the current session, connecting a new one (session
// timeout cfg.TTL; every write goes through dialHooked, so cfg.Hook at
// PointRenew can stop its pings; over TLS when cfg.Security says so)
// when there is none. go-zookeeper connects in the background; requests
// wait for it. With a password, the new session logs in with the digest
// scheme before any request (go-zookeeper logs in again at each
// reconnect), waiting at most until ctx ends; a login that fails closes
// the connection.
func (l *zkLocker) session(ctx context.Context) (*zkSession, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.sess != nil {
		return l.sess, nil
	}
	s := &zkSession{lost: make(chan struct{}), onDisconnect: l.lostOnDisconnect}
	hook := l.cfg.Hook
	roundTrip := l.cfg.RoundTrip
	sec := l.cfg.Security
	secure := sec.ZKDialer(func(network, addr string, timeout time.Duration) (net.Conn, error) {
		return dialHooked(context.Background(), l.ctx, hook, addr, timeout)
	})
	dial := func(network, addr string, timeout time.Duration) (net.Conn, error) {
		c, err := secure(network, addr, timeout)
		if err != nil || roundTrip == nil {
			return c, err
		}
		// Counted above TLS: one request is one write of its packet.
		return &zkCountingConn{Conn: c, roundTrip: roundTrip}, nil
	}
	conn, _, err := zk.Connect(l.cfg.Endpoints, l.cfg.TTL, zk.WithLogger(zkNoLog{}), zk.WithLogInfo(false),
		zk.WithEventCallback(s.event), zk.WithDialer(dial))
	if err != nil {
		return nil, err
	}
	if err := sec.ZKAddAuth(ctx, conn); err != nil {
		l.wg.Go(conn.Close)
		return nil, err
	}
	s.conn = conn
	l.sess = s
	return s, nil
}

// reset closes s (its closeSession makes the server delete every node of
// the session; if the server never gets it, the nodes go when the session
// times out, a TTL later) in the background, and makes the next Acquire
// open a new session.
func (l *zkLocker) reset(s *zkSession) {
	l.mu.Lock()
	if l.sess == s {
		l.sess = nil
	}
	l.mu.Unlock()
	l.wg.Go(s.conn.Close)
}

// zkPath is the lock path of key: "/" + key.
func zkPath(key string) string { return "/" + strings.TrimPrefix(key, "/") }

// zkState is what Release needs of a grant.
type zkState struct {
	sess *zkSession
	lock *zk.Lock
	lost *holdLost // the lease's own Lost, ended at Release
}

// Acquire makes one attempt with the lock recipe (Lock.LockWithData, the
// grant's token as the node's data): it queues an ephemeral sequential
// node under /key and waits until it is the lowest, at most until the
// call's deadline. It returns a lease whose Lost is closed when the
// session that made the node expires while the lease is held (not after
// its Release began: see holdLost), ErrNotAcquired when the deadline
// passed while queued, or an unknown-outcome error (the session is then
// closed, so that a node it may have left goes with it).
//
// The recipe takes no context and hides its node's name, so an attempt
// that gives up deletes its node by closing the session (the server
// deletes the session's nodes at once; the next Acquire opens a new
// one). Its goroutine ends when the connection closes, or, granted
// first, deletes the node (Unlock) so an attempt that gave up never
// holds the lock longer than that one round trip; should that delete
// fail, the session is closed. Close ends such goroutines.
//
// Validity is not tracked (zero): the session is kept alive by pings in
// the background; the server expires it a session timeout after it last
// heard from the client, and the client learns of that only when it
// reconnects (Lost). zk-fenced: after the grant, the node is read
// (Children, then Get of the lowest, checked to hold our token) and its
// czxid is the fencing token: two more round trips.
func (l *zkLocker) Acquire(ctx context.Context, key string) (*impl.Lease, error) {
	ctx, cancel := libraryContext(ctx)
	defer cancel()
	if err := l.ctx.Err(); err != nil {
		return nil, fmt.Errorf("%s: acquire %q: locker closed: %w", l.name, key, err)
	}
	start := l.cfg.Now()
	s, err := l.session(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: acquire %q: connect: %w", l.name, key, err)
	}
	lost := s.lostCh()
	path := zkPath(key)
	// The ACL of the lock's parent (made by the recipe when missing) and
	// of every lock node: world:anyone, or only the run's digest identity
	// with a password (security.Security.ZKACL).
	lock := zk.NewLock(s.conn, path, l.cfg.Security.ZKACL())
	token := l.tokens.next()
	var (
		mu             sync.Mutex
		gaveUp, landed bool
		res            = make(chan error, 1)
	)
	l.wg.Go(func() {
		err := lock.LockWithData([]byte(token))
		mu.Lock()
		if gaveUp {
			mu.Unlock()
			if err == nil {
				if uerr := lock.Unlock(); uerr != nil {
					l.reset(s)
				}
			}
			return
		}
		landed = true
		mu.Unlock()
		res <- err
	})
	select {
	case err = <-res:
	case <-ctx.Done():
		mu.Lock()
		if !landed {
			gaveUp = true
			mu.Unlock()
			// Close the session, so that the server deletes the queued
			// node now: left in the queue, every given-up attempt would
			// be granted and released in its turn, and with each client
			// queueing anew at every retry the queue of such nodes grew
			// faster than it drained (measured: 0 grants in a 2 s run of
			// 16 clients, with the call deadline below the queue's wait).
			l.reset(s)
			return nil, fmt.Errorf("%s: acquire %q: still queued at the deadline: %w", l.name, key, impl.ErrNotAcquired)
		}
		mu.Unlock()
		err = <-res
	}
	if err != nil {
		l.reset(s)
		return nil, fmt.Errorf("%s: acquire %q: outcome unknown: %w", l.name, key, err)
	}
	hl := newHoldLost(lost, l.ctx.Done())
	lease := &impl.Lease{Key: key, Token: token, Lost: hl.ch, Start: start, State: zkState{sess: s, lock: lock, lost: hl}}
	if l.fenced {
		var czxid int64
		err := l.call(ctx, func() (err error) {
			czxid, err = l.czxid(s.conn, path, token)
			return err
		})
		if err != nil {
			hl.end()
			if uerr := lock.Unlock(); uerr != nil {
				l.reset(s)
			}
			return nil, fmt.Errorf("%s: acquire %q: granted, but its fencing token unread (released): outcome unknown: %w", l.name, key, err)
		}
		lease.Fence = czxid
	}
	lease.End = l.cfg.Now()
	return lease, nil
}

// czxid returns the czxid of the lock node under path that holds token:
// the child with the lowest sequence number, which a granted lock is.
func (l *zkLocker) czxid(conn *zk.Conn, path, token string) (int64, error) {
	children, _, err := conn.Children(path)
	if err != nil {
		return 0, err
	}
	low, ok := lowestChild(children)
	if !ok {
		return 0, errors.New("no lock node")
	}
	data, st, err := conn.Get(path + "/" + low)
	if err != nil {
		return 0, err
	}
	if string(data) != token {
		return 0, fmt.Errorf("lowest lock node %s is not ours (session expired?)", low)
	}
	return st.Czxid, nil
}

// call runs f (a go-zookeeper request, which takes no context) and
// returns its error, or ctx's error when ctx ends first; f then goes on
// in the background (counted in wg) and its result is dropped.
func (l *zkLocker) call(ctx context.Context, f func() error) error {
	res := make(chan error, 1)
	l.wg.Go(func() { res <- f() })
	select {
	case err := <-res:
		return err
	case <-ctx.Done():
		return fmt.Errorf("no answer by the deadline: %w", ctx.Err())
	}
}

// lowestChild returns the child with the lowest sequence number: the
// recipe's nodes end in "lock-" and 10 digits.
func lowestChild(children []string) (string, bool) {
	type node struct {
		name string
		seq  int
	}
	var ns []node
	for _, c := range children {
		i := strings.LastIndex(c, "lock-")
		if i < 0 {
			continue
		}
		seq, err := strconv.Atoi(c[i+len("lock-"):])
		if err != nil {
			continue
		}
		ns = append(ns, node{c, seq})
	}
	if len(ns) == 0 {
		return "", false
	}
	sort.Slice(ns, func(i, j int) bool { return ns[i].seq < ns[j].seq })
	return ns[0].name, true
}

// Release deletes the lease's node (Lock.Unlock): 0 and nil, ErrNotHeld
// when the node is gone (its session expired), or an unknown-outcome
// error, after which the session is closed (a node left behind would
// hold the lock for as long as the session lived). The lease's Lost no
// longer closes once Release is called.
func (l *zkLocker) Release(ctx context.Context, lease *impl.Lease) (int, error) {
	ctx, cancel := libraryContext(ctx)
	defer cancel()
	st, ok := leaseState[zkState](lease)
	if !ok {
		return 0, fmt.Errorf("%s: release of a lease %s did not grant: %w", l.name, l.name, impl.ErrNotHeld)
	}
	st.lost.end()
	err := l.call(ctx, st.lock.Unlock)
	switch {
	case err == nil:
		return 0, nil
	case errors.Is(err, zk.ErrNoNode), errors.Is(err, zk.ErrNotLocked):
		return 0, fmt.Errorf("%s: release %q: %v: %w", l.name, lease.Key, err, impl.ErrNotHeld)
	}
	l.reset(st.sess)
	return 0, fmt.Errorf("%s: release %q: outcome unknown: %w", l.name, lease.Key, err)
}

// KeyLease reports what remains of the lease of key's holder (the lowest
// node under /key): NotHeld without one, NoExpiry for a node that is not
// ephemeral, else the session timeout this Locker asked for (the TTL,
// shared by every client of a run) as an upper bound: ZooKeeper does not
// tell other clients how long a session has left. ctx bounds it.
func (l *zkLocker) KeyLease(ctx context.Context, key string) (int64, error) {
	s, err := l.session(ctx)
	if err != nil {
		return 0, err
	}
	var v int64
	err = l.call(ctx, func() (err error) {
		v, err = l.keyLease(s, key)
		return err
	})
	return v, err
}

// keyLease is KeyLease without its deadline, on session s.
func (l *zkLocker) keyLease(s *zkSession, key string) (int64, error) {
	path := zkPath(key)
	children, _, err := s.conn.Children(path)
	switch {
	case errors.Is(err, zk.ErrNoNode):
		return NotHeld, nil
	case err != nil:
		return 0, fmt.Errorf("%s: read %q: %w", l.name, key, err)
	}
	low, ok := lowestChild(children)
	if !ok {
		return NotHeld, nil
	}
	exists, st, err := s.conn.Exists(path + "/" + low)
	switch {
	case err != nil:
		return 0, fmt.Errorf("%s: read %q: %w", l.name, key, err)
	case !exists:
		return NotHeld, nil
	case st.EphemeralOwner == 0:
		return NoExpiry, nil
	}
	return l.cfg.TTL.Milliseconds(), nil
}

// zkCloseWait bounds how long Close waits for the attempts given up at
// their deadline and the sessions being closed. go-zookeeper v1.0.4 can
// deadlock in Conn.Close: its event loop blocks in flushRequests sending
// to a request's reply channel that already holds a reply, so the watch a
// pending LockWithData waits on is never invalidated and neither returns
// (seen once: a verdicts-sweep bench of zk-lock × leader-pause at TTL 1 s
// hung 35 minutes in Close after the run). 10 s: far past a healthy
// close, which takes one round trip.
const zkCloseWait = 10 * time.Second

// Close closes the session (closeSession deletes its nodes) and waits for
// the attempts given up at their deadline, which end with it, at most
// zkCloseWait; past it the attempts still blocked in go-zookeeper are
// abandoned (their goroutines stay blocked) and the error says so.
func (l *zkLocker) Close() error {
	l.mu.Lock()
	s := l.sess
	l.sess = nil
	l.mu.Unlock()
	l.cancel()
	if s != nil {
		s.conn.Close()
	}
	done := make(chan struct{})
	go func() {
		l.wg.Wait()
		close(done)
	}()
	t := time.NewTimer(zkCloseWait)
	defer t.Stop()
	select {
	case <-done:
		return nil
	case <-t.C:
		return fmt.Errorf("%s: close: go-zookeeper calls still blocked after %v (a library deadlock on close): abandoned", l.name, zkCloseWait)
	}
}
