package locktest_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

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
