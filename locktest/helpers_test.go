package locktest_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
	"go.uber.org/zap"
	"google.golang.org/grpc"

	"github.com/lockbench/lockbench/locktest"
)

// tokenLock is a team's Redis lock as it would be written: SET NX PX with
// a random token, released by a Lua compare-and-delete (checked true) or
// by a plain DEL (checked false: the release has no ownership check).
type tokenLock struct {
	rdb     redis.UniversalClient
	ttl     time.Duration
	prefix  string
	n       int
	checked bool
}

// newTokenLock is the constructor Run gets.
func newTokenLock(checked bool) func(c locktest.Clients) (locktest.Lock, error) {
	return func(c locktest.Clients) (locktest.Lock, error) {
		return &tokenLock{rdb: c.Redis[0], ttl: c.TTL, prefix: c.Owner + ":" + rand.Text(), checked: checked}, nil
	}
}

var compareAndDelete = redis.NewScript(`if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) else return 0 end`)

func (l *tokenLock) Acquire(ctx context.Context, key string) (locktest.Lease, error) {
	l.n++
	token := fmt.Sprintf("%s:%d", l.prefix, l.n)
	ok, err := l.rdb.SetNX(ctx, key, token, l.ttl).Result()
	switch {
	case err != nil:
		return locktest.Lease{}, err
	case !ok:
		return locktest.Lease{}, locktest.ErrNotAcquired
	}
	return locktest.Lease{Token: token}, nil
}

func (l *tokenLock) Release(ctx context.Context, lease locktest.Lease) error {
	var n int64
	var err error
	if l.checked {
		n, err = compareAndDelete.Run(ctx, l.rdb, []string{lease.Key}, lease.Token).Int64()
	} else {
		n, err = l.rdb.Del(ctx, lease.Key).Result()
	}
	switch {
	case err != nil:
		return err
	case n == 0:
		return locktest.ErrNotHeld
	}
	return nil
}

// recorder is a testing.TB that records failures instead of failing the
// test, so a test can expect locktest.Run to fail: it runs Run on a
// goroutine of its own (Fatal and Skip end it) and its clean-ups itself.
type recorder struct {
	*testing.T
	// deadline, when set, is the deadline Deadline reports instead of
	// the test's.
	deadline time.Time
	mu       sync.Mutex
	failed   bool
	skipped  bool
	errs     []string
	logs     []string
	cleanups []func()
}

func (r *recorder) note(failed bool, msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if failed {
		r.failed = true
		r.errs = append(r.errs, msg)
	} else {
		r.logs = append(r.logs, msg)
	}
}

func (r *recorder) Errorf(format string, args ...any) { r.note(true, fmt.Sprintf(format, args...)) }
func (r *recorder) Error(args ...any)                 { r.note(true, fmt.Sprint(args...)) }
func (r *recorder) Fatalf(format string, args ...any) { r.Errorf(format, args...); runtime.Goexit() }
func (r *recorder) Fatal(args ...any)                 { r.Error(args...); runtime.Goexit() }
func (r *recorder) Fail()                             { r.note(true, "Fail") }
func (r *recorder) FailNow()                          { r.Fail(); runtime.Goexit() }
func (r *recorder) Logf(format string, args ...any)   { r.note(false, fmt.Sprintf(format, args...)) }
func (r *recorder) Log(args ...any)                   { r.note(false, fmt.Sprint(args...)) }
func (r *recorder) Skip(args ...any)                  { r.Log(args...); r.SkipNow() }
func (r *recorder) Skipf(format string, args ...any)  { r.Logf(format, args...); r.SkipNow() }
func (r *recorder) SkipNow() {
	r.mu.Lock()
	r.skipped = true
	r.mu.Unlock()
	runtime.Goexit()
}
func (r *recorder) Deadline() (time.Time, bool) {
	if !r.deadline.IsZero() {
		return r.deadline, true
	}
	return r.T.Deadline()
}
func (r *recorder) Skipped() bool { r.mu.Lock(); defer r.mu.Unlock(); return r.skipped }
func (r *recorder) Failed() bool  { r.mu.Lock(); defer r.mu.Unlock(); return r.failed }
func (r *recorder) Cleanup(f func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cleanups = append(r.cleanups, f)
}

// run runs f with r as its testing.TB, then r's clean-ups (last first).
func (r *recorder) run(f func(testing.TB)) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(r)
	}()
	<-done
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
}

// text is everything r recorded, failures first.
func (r *recorder) text() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(append(append([]string(nil), r.errs...), r.logs...), "\n")
}

// renewingLock is tokenLock with Extend (a Lua compare-and-PEXPIRE): a
// lock that renews on request, which Run drives.
type renewingLock struct{ *tokenLock }

var compareAndExpire = redis.NewScript(`if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("pexpire", KEYS[1], ARGV[2]) else return 0 end`)

func (l renewingLock) Extend(ctx context.Context, lease locktest.Lease) (time.Duration, error) {
	n, err := compareAndExpire.Run(ctx, l.rdb, []string{lease.Key}, lease.Token, l.ttl.Milliseconds()).Int64()
	switch {
	case err != nil:
		return 0, err
	case n == 0:
		return 0, locktest.ErrNotHeld
	}
	return 0, nil
}

// hashLock is a team's reentrant Redis lock, Redisson's hash: the owner's
// field counts its nesting. With deleteAll its release deletes the whole
// hash at once, whatever the count (the bug the reentrancy check
// catches: a nested release frees the lock while outer levels hold it).
type hashLock struct {
	rdb       redis.UniversalClient
	ttl       time.Duration
	owner     string
	deleteAll bool
}

// newHashLock is the constructor Run gets.
func newHashLock(deleteAll bool) func(c locktest.Clients) (locktest.Lock, error) {
	return func(c locktest.Clients) (locktest.Lock, error) {
		return &hashLock{rdb: c.Redis[0], ttl: c.TTL, owner: c.Owner + ":" + rand.Text(), deleteAll: deleteAll}, nil
	}
}

var (
	hashAcquire = redis.NewScript(`if redis.call('exists', KEYS[1]) == 0 or redis.call('hexists', KEYS[1], ARGV[1]) == 1 then
  local n = redis.call('hincrby', KEYS[1], ARGV[1], 1)
  redis.call('pexpire', KEYS[1], ARGV[2])
  return n
end
return 0`)
	hashRelease = redis.NewScript(`if redis.call('hexists', KEYS[1], ARGV[1]) == 0 then return -1 end
if ARGV[3] == '1' then redis.call('del', KEYS[1]) return 0 end
local n = redis.call('hincrby', KEYS[1], ARGV[1], -1)
if n > 0 then redis.call('pexpire', KEYS[1], ARGV[2]) return n end
redis.call('del', KEYS[1])
return 0`)
)

func (l *hashLock) Acquire(ctx context.Context, key string) (locktest.Lease, error) {
	n, err := hashAcquire.Run(ctx, l.rdb, []string{key}, l.owner, l.ttl.Milliseconds()).Int()
	switch {
	case err != nil:
		return locktest.Lease{}, err
	case n == 0:
		return locktest.Lease{}, locktest.ErrNotAcquired
	}
	return locktest.Lease{Token: l.owner, Count: n}, nil
}

func (l *hashLock) Release(ctx context.Context, lease locktest.Lease) error {
	_, err := l.ReleaseLevel(ctx, lease)
	return err
}

func (l *hashLock) ReleaseLevel(ctx context.Context, lease locktest.Lease) (int, error) {
	all := "0"
	if l.deleteAll {
		all = "1"
	}
	n, err := hashRelease.Run(ctx, l.rdb, []string{lease.Key}, lease.Token, l.ttl.Milliseconds(), all).Int()
	switch {
	case err != nil:
		return 0, err
	case n < 0:
		return 0, locktest.ErrNotHeld
	}
	return n, nil
}

// etcdLock is a team's lock on etcd, as its documentation suggests: a
// session (a lease kept alive by the client) per grant, the concurrency
// package's Mutex, its connections dialled through Clients.Dial so that a
// paused client's keep-alives pause with it. Lost closes when the
// session ends while the lease is held.
type etcdLock struct {
	cli *clientv3.Client
	ttl int // s
}

// newEtcdLock is the constructor Run gets.
func newEtcdLock(c locktest.Clients) (locktest.Lock, error) {
	cli, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints, DialTimeout: time.Second, Logger: zap.NewNop(),
		DialOptions: []grpc.DialOption{grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
			return c.Dial(ctx, "tcp", addr)
		})}})
	if err != nil {
		return nil, err
	}
	return &etcdLock{cli: cli, ttl: max(1, int(c.TTL/time.Second))}, nil
}

// etcdGrant is what Release needs of a grant.
type etcdGrant struct {
	sess     *concurrency.Session
	mutex    *concurrency.Mutex
	released chan struct{}
}

func (l *etcdLock) Acquire(ctx context.Context, key string) (locktest.Lease, error) {
	g, err := l.cli.Grant(ctx, int64(l.ttl))
	if err != nil {
		return locktest.Lease{}, err
	}
	sess, err := concurrency.NewSession(l.cli, concurrency.WithLease(g.ID))
	if err != nil {
		return locktest.Lease{}, err
	}
	m := concurrency.NewMutex(sess, key)
	if err := m.TryLock(ctx); err != nil {
		sess.Orphan() // its keys go with the lease, a TTL later
		if errors.Is(err, concurrency.ErrLocked) {
			err = fmt.Errorf("%w: %w", locktest.ErrNotAcquired, err)
		}
		return locktest.Lease{}, err
	}
	lost, released := make(chan struct{}), make(chan struct{})
	go func() {
		select {
		case <-sess.Done():
			close(lost)
		case <-released:
		}
	}()
	return locktest.Lease{Token: m.Key(), Lost: lost, Handle: etcdGrant{sess, m, released}}, nil
}

func (l *etcdLock) Release(ctx context.Context, lease locktest.Lease) error {
	g := lease.Handle.(etcdGrant)
	close(g.released)
	defer g.sess.Orphan() // keep-alives stop; the lease expires by its TTL
	resp, err := l.cli.Txn(ctx).If(g.mutex.IsOwner()).Then(clientv3.OpDelete(g.mutex.Key())).Commit()
	switch {
	case err != nil:
		return err
	case !resp.Succeeded:
		return locktest.ErrNotHeld
	}
	return nil
}

// Close closes the etcd client (Run calls it when the client is done).
func (l *etcdLock) Close() error { return l.cli.Close() }
