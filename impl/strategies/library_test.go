package strategies_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/strategies"
)

// tuned returns the named strategy with library settings applied at ttl.
func tuned(t *testing.T, name string, set map[string]string, ttl time.Duration) impl.Strategy {
	t.Helper()
	s, err := strategies.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	if s, err = strategies.Tune(s, set, ttl); err != nil {
		t.Fatalf("Tune(%s, %v): %v", name, set, err)
	}
	return s
}

// TestLibraryOutcomes provokes each outcome of the library adapters
// against real redis-servers and checks how it is mapped: the library's
// "not obtained" (redsync ErrTaken, redislock ErrNotObtained) is
// ErrNotAcquired (fail); a release after the lease expired (redsync
// ErrLockAlreadyExpired, redislock ErrLockNotHeld) is ErrNotHeld, as for
// the home-made strategies; a timeout (SIGSTOPped server) is an unknown
// outcome (info); a refused connection is a definite no for redsync (the
// command was never sent, as redlock counts it) and unknown for redislock
// (as token-lua reports it).
func TestLibraryOutcomes(t *testing.T) {
	// A TTL of 1 s: the libraries' per-call timeouts follow the TTL, and at
	// 100 ms a busy machine lost the reply of a SET that landed (redsync
	// then called its own key "taken").
	const ttl = time.Second
	adapters := []struct {
		name  string
		nodes int
		set   map[string]string
		// libTaken and libExpired are the library's own error texts.
		libTaken, libExpired string
		refusedIsFail        bool
	}{
		{"redsync", 3, nil, "lock already taken", "lock was already expired", true},
		{"redsync-single", 1, nil, "lock already taken", "lock was already expired", true},
		{"redislock", 1, map[string]string{"redislock-refresh": "off"}, "redislock: not obtained", "redislock: lock not held", false},
	}
	cases := []struct {
		name string
		// run provokes the outcome with locker a (and b, another owner) on
		// nodes of cluster c and returns the error to classify.
		run  func(t *testing.T, a, b impl.Locker, nodes []redis.UniversalClient, pause func(bool)) error
		want string // "fail", "not-held" or "info"
		lib  func(taken, expired string) string
	}{
		{"held by another owner", func(t *testing.T, a, b impl.Locker, _ []redis.UniversalClient, _ func(bool)) error {
			if _, err := b.Acquire(context.Background(), "k"); err != nil {
				t.Fatalf("b.Acquire: %v", err)
			}
			_, err := a.Acquire(context.Background(), "k")
			return err
		}, "fail", func(taken, _ string) string { return taken }},
		{"lease expired before release", func(t *testing.T, a, _ impl.Locker, nodes []redis.UniversalClient, _ func(bool)) error {
			l, err := a.Acquire(context.Background(), "k")
			if err != nil {
				t.Fatalf("a.Acquire: %v", err)
			}
			waitGone(t, nodes, "k")
			_, err = a.Release(context.Background(), l)
			return err
		}, "not-held", func(_, expired string) string { return expired }},
		{"server paused at acquire", func(t *testing.T, a, _ impl.Locker, _ []redis.UniversalClient, pause func(bool)) error {
			pause(true)
			defer pause(false)
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			defer cancel()
			_, err := a.Acquire(ctx, "k")
			return err
		}, "info", nil},
		{"server paused at release", func(t *testing.T, a, _ impl.Locker, _ []redis.UniversalClient, pause func(bool)) error {
			l, err := a.Acquire(context.Background(), "k")
			if err != nil {
				t.Fatalf("a.Acquire: %v", err)
			}
			pause(true)
			defer pause(false)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
			defer cancel()
			_, err = a.Release(ctx, l)
			return err
		}, "info", nil},
	}
	for _, ad := range adapters {
		for _, tc := range cases {
			t.Run(ad.name+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				c, nodes := startNodes(t, ad.nodes)
				pause := func(on bool) {
					for _, n := range c.Nodes() {
						var err error
						if on {
							err = n.Pause()
						} else {
							err = n.Resume()
						}
						if err != nil {
							t.Fatalf("pause %v: %v", on, err)
						}
					}
				}
				s := tuned(t, ad.name, ad.set, ttl)
				cfg := impl.Config{Nodes: nodes, TTL: ttl, Owner: "a"}
				a := newLocker(t, s, cfg)
				cfg.Owner, cfg.TTL = "b", 10*time.Second
				b := newLocker(t, s, cfg)
				err := tc.run(t, a, b, nodes, pause)
				got := "info"
				switch {
				case errors.Is(err, impl.ErrNotAcquired):
					got = "fail"
				case errors.Is(err, impl.ErrNotHeld):
					got = "not-held"
				case err == nil:
					got = "ok"
				}
				if got != tc.want {
					t.Fatalf("err = %v: mapped to %s, want %s", err, got, tc.want)
				}
				if tc.lib != nil && !strings.Contains(err.Error(), tc.lib(ad.libTaken, ad.libExpired)) {
					t.Errorf("err = %v: want the library's %q in it", err, tc.lib(ad.libTaken, ad.libExpired))
				}
			})
		}
		t.Run(ad.name+"/connection refused", func(t *testing.T) {
			t.Parallel()
			var nodes []redis.UniversalClient
			for range ad.nodes {
				rc := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialerRetries: 1, DialTimeout: 100 * time.Millisecond})
				t.Cleanup(func() { _ = rc.Close() })
				nodes = append(nodes, rc)
			}
			a := newLocker(t, tuned(t, ad.name, ad.set, ttl), impl.Config{Nodes: nodes, TTL: ttl, Owner: "a"})
			_, err := a.Acquire(context.Background(), "k")
			if ad.refusedIsFail && !errors.Is(err, impl.ErrNotAcquired) {
				t.Errorf("err = %v: want ErrNotAcquired (the command was never sent)", err)
			}
			if !ad.refusedIsFail && !unknown(err) {
				t.Errorf("err = %v: want an unknown outcome", err)
			}
		})
	}
}

// TestRedislockRefresh: by default the redislock adapter refreshes the key
// every TTL/3 (reported to OnRenew) so a hold of 3×TTL keeps it, and fires
// Lost once a refresh finds another owner's value; with
// --redislock-refresh off the key expires after the TTL and Lost is nil.
func TestRedislockRefresh(t *testing.T) {
	const ttl = 90 * time.Millisecond
	_, nodes := startNodes(t, 1)
	ctx := context.Background()
	renews := make(chan error, 100)
	onRenew := func(r impl.Renewal) { renews <- r.Err }
	l := newLocker(t, tuned(t, "redislock", nil, ttl), impl.Config{Nodes: nodes, TTL: ttl, Owner: "a", OnRenew: onRenew})
	lease, err := l.Acquire(ctx, "r")
	if err != nil || lease.Lost == nil {
		t.Fatalf("Acquire = %+v, %v: want a lease with Lost", lease, err)
	}
	time.Sleep(3 * ttl)
	if holders(t, nodes, "r", lease.Token) != 1 || isClosed(lease.Lost) {
		t.Fatalf("after 3×TTL: key held %d, Lost closed %v: want the refreshed key and no Lost", holders(t, nodes, "r", lease.Token), isClosed(lease.Lost))
	}
	if n := len(renews); n < 5 {
		t.Errorf("%d refreshes in 3×TTL: want about 9 (every TTL/3)", n)
	}
	for len(renews) > 0 {
		if err := <-renews; err != nil {
			t.Errorf("refresh: %v", err)
		}
	}
	if err := nodes[0].Set(ctx, "r", "someone-else", 0).Err(); err != nil {
		t.Fatal(err)
	}
	waitClosed(t, lease.Lost, ttl, "Lost after the key changed owner")
	// OnRenew is told before Lost closes: the last outcome queued is the
	// refresh that found the key another owner's (a refresh that went up
	// before the SET may have succeeded just before it).
	var last error
	for len(renews) > 0 {
		last = <-renews
	}
	if !errors.Is(last, impl.ErrNotHeld) {
		t.Errorf("last refresh outcome %v, want ErrNotHeld", last)
	}
	if _, err := l.Release(ctx, lease); !errors.Is(err, impl.ErrNotHeld) {
		t.Errorf("Release after Lost: %v, want ErrNotHeld", err)
	}

	off := newLocker(t, tuned(t, "redislock", map[string]string{"redislock-refresh": "off"}, ttl), impl.Config{Nodes: nodes, TTL: ttl, Owner: "b"})
	lease, err = off.Acquire(ctx, "s")
	if err != nil || lease.Lost != nil {
		t.Fatalf("Acquire with refresh off = %+v, %v: want a lease without Lost", lease, err)
	}
	waitGone(t, nodes, "s")
}

// TestRedsyncTries: --redsync-tries makes Acquire run the library's retry
// loop (LockContext), waiting --redsync-retry-delay between attempts; a
// context that ends during the retries leaves the outcome unknown.
func TestRedsyncTries(t *testing.T) {
	_, nodes := startNodes(t, 1)
	ctx := context.Background()
	s := tuned(t, "redsync-single", map[string]string{"redsync-tries": "3", "redsync-retry-delay": "40ms"}, time.Second)
	b := newLocker(t, s, impl.Config{Nodes: nodes, TTL: time.Second, Owner: "b"})
	if _, err := b.Acquire(ctx, "t"); err != nil {
		t.Fatal(err)
	}
	a := newLocker(t, s, impl.Config{Nodes: nodes, TTL: time.Second, Owner: "a"})
	start := time.Now()
	_, err := a.Acquire(ctx, "t")
	if !errors.Is(err, impl.ErrNotAcquired) {
		t.Fatalf("err = %v, want ErrNotAcquired", err)
	}
	if d := time.Since(start); d < 80*time.Millisecond {
		t.Errorf("3 tries took %v: want two 40ms retry delays", d)
	}
	// The context ends during the library's retries: LockContext says
	// ErrFailed, but an attempt cut by the deadline may have set keys, so
	// the outcome is unknown.
	ctx, cancel := context.WithTimeout(ctx, 60*time.Millisecond)
	defer cancel()
	if _, err := a.Acquire(ctx, "t"); !unknown(err) {
		t.Errorf("err = %v when ctx ended during the retries, want an unknown outcome", err)
	}
}

// TestTune covers the library settings: effective values, what they change,
// and the usage errors for impossible values and non-adapters.
func TestTune(t *testing.T) {
	const ttl = 100 * time.Millisecond
	def, _ := strategies.Lookup("redsync")
	if got := def.(strategies.Tunable).Settings(); got["redsync-tries"] != "1" || got["redsync-drift-factor"] != "0.01" ||
		got["redsync-timeout-factor"] != "0.05" || got["redsync-retry-delay"] != "rand(50ms,250ms)" || got["redsync-fail-fast"] != "false" {
		t.Errorf("redsync default settings = %v", got)
	}
	s := tuned(t, "redsync", map[string]string{"redsync-tries": "4", "redsync-retry-delay": "10ms", "redsync-drift-factor": "0.05", "redsync-fail-fast": "true"}, ttl)
	if got := s.(strategies.Tunable).Settings(); got["redsync-tries"] != "4" || got["redsync-retry-delay"] != "10ms" || got["redsync-drift-factor"] != "0.05" || got["redsync-fail-fast"] != "true" {
		t.Errorf("tuned redsync settings = %v", got)
	}
	off := tuned(t, "redislock", map[string]string{"redislock-refresh": "off"}, ttl)
	if in := off.Info(); in.Claims.Renewal || in.Policy != (impl.Policy{}) {
		t.Errorf("redislock with refresh off: claims %+v policy %+v: want no renewal, checks nothing", in.Claims, in.Policy)
	}
	if got := tuned(t, "redislock", map[string]string{"redislock-refresh": "20ms"}, ttl).(strategies.Tunable).Settings()["redislock-refresh"]; got != "20ms" {
		t.Errorf("redislock-refresh 20ms recorded as %q", got)
	}
	bad := []struct {
		strategy string
		set      map[string]string
		want     string
	}{
		{"token-lua", map[string]string{"redsync-tries": "3"}, "not to strategy token-lua"},
		{"redislock", map[string]string{"redsync-tries": "3"}, "applies only to redsync, redsync-single"},
		{"redsync", map[string]string{"redislock-refresh": "off"}, "applies only to redislock"},
		{"redsync", map[string]string{"redsync-nope": "1"}, "unknown library setting"},
		{"redsync", map[string]string{"redsync-tries": "0"}, "at least 1"},
		{"redsync", map[string]string{"redsync-tries": "two"}, "not a number"},
		{"redsync", map[string]string{"redsync-retry-delay": "10ms"}, "--redsync-tries 2 or more"},
		{"redsync", map[string]string{"redsync-tries": "2", "redsync-retry-delay": "-1ms"}, "positive"},
		{"redsync", map[string]string{"redsync-drift-factor": "1"}, "0 <= f < 1"},
		{"redsync", map[string]string{"redsync-drift-factor": "NaN"}, "0 <= f < 1"},
		{"redsync", map[string]string{"redsync-timeout-factor": "0"}, "0 < f <= 1"},
		{"redsync", map[string]string{"redsync-timeout-factor": "0.001"}, "at least 1ms"},
		{"redsync", map[string]string{"redsync-fail-fast": "maybe"}, "true or false"},
		{"redislock", map[string]string{"redislock-refresh": "100ms"}, "too late"},
		{"redislock", map[string]string{"redislock-refresh": "ttl/1"}, "at least 2"},
		{"redislock", map[string]string{"redislock-refresh": "soon"}, "not a duration"},
	}
	for _, tc := range bad {
		st, _ := strategies.Lookup(tc.strategy)
		_, err := strategies.Tune(st, tc.set, ttl)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("Tune(%s, %v) = %v: want one line containing %q", tc.strategy, tc.set, err, tc.want)
		}
	}
}

// TestLibraryVersionsMatchGoMod: each adapter reports the version of its
// library that go.mod requires.
func TestLibraryVersionsMatchGoMod(t *testing.T) {
	mod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	require := map[string]string{}
	for _, line := range strings.Split(string(mod), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && strings.Contains(f[0], "/") {
			require[f[0]] = f[1]
		}
	}
	for name, module := range map[string]string{"redsync": "github.com/go-redsync/redsync/v4", "redsync-single": "github.com/go-redsync/redsync/v4", "redislock": "github.com/bsm/redislock",
		"etcd-mutex": "go.etcd.io/etcd/client/v3", "etcd-fenced": "go.etcd.io/etcd/client/v3", "zk-lock": "github.com/go-zookeeper/zk", "zk-fenced": "github.com/go-zookeeper/zk"} {
		s, _ := strategies.Lookup(name)
		want := module + " " + require[module]
		if require[module] == "" || s.Info().Library != want {
			t.Errorf("%s: Info().Library = %q, want %q (go.mod)", name, s.Info().Library, want)
		}
	}
	for _, s := range onRedis() { // consensus strategies name their client library too (consensus_test.go)
		_, lib := s.(strategies.Tunable)
		if (s.Info().Library != "") != lib {
			t.Errorf("%s: Library %q: want it set exactly for library adapters", s.Name(), s.Info().Library)
		}
	}
}
