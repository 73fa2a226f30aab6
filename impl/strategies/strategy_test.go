package strategies_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/strategies"
)

func TestRegistry(t *testing.T) {
	want := []string{"naive", "set-nx-px", "token-lua", "token-lua-wait", "token-lua-cluster", "token-lua-wait-cluster", "watchdog", "watchdog-cluster", "reentrant", "redlock", "fenced", "fenced-cluster", "redsync", "redsync-single", "redislock", "redislock-cluster",
		"etcd-mutex", "etcd-fenced", "zk-lock", "zk-fenced"}
	if got := strategies.Names(); !slices.Equal(got, want) {
		t.Fatalf("Names() = %v, want %v", got, want)
	}
	for _, name := range want {
		s, err := strategies.Lookup(name)
		if err != nil || s.Name() != name {
			t.Errorf("Lookup(%q) = %v, %v", name, s, err)
		}
	}
	_, err := strategies.Lookup("x")
	if err == nil || !strings.Contains(err.Error(), `unknown strategy "x"`) || !strings.Contains(err.Error(), strings.Join(want, ", ")) {
		t.Errorf("Lookup(x) error = %v, want one listing the valid names", err)
	}
}

func TestInfo(t *testing.T) {
	tests := []struct {
		name   string
		claims impl.Claims
		policy impl.Policy
		nodes  int
	}{
		{"naive", impl.Claims{}, impl.Policy{}, 1},
		{"set-nx-px", impl.Claims{AtomicAcquire: true}, impl.Policy{}, 1},
		{"token-lua", impl.Claims{AtomicAcquire: true, TokenRelease: true}, impl.Policy{}, 1},
		{"token-lua-wait", impl.Claims{AtomicAcquire: true, TokenRelease: true, ReplicaAck: true}, impl.Policy{}, 1},
		{"token-lua-cluster", impl.Claims{AtomicAcquire: true, TokenRelease: true}, impl.Policy{}, 1},
		{"token-lua-wait-cluster", impl.Claims{AtomicAcquire: true, TokenRelease: true, ReplicaAck: true}, impl.Policy{}, 1},
		{"watchdog", impl.Claims{AtomicAcquire: true, TokenRelease: true, Renewal: true}, impl.Policy{HonourLost: true}, 1},
		{"watchdog-cluster", impl.Claims{AtomicAcquire: true, TokenRelease: true, Renewal: true}, impl.Policy{HonourLost: true}, 1},
		{"reentrant", impl.Claims{AtomicAcquire: true, TokenRelease: true, Reentrant: true}, impl.Policy{}, 1},
		{"redlock", impl.Claims{AtomicAcquire: true, TokenRelease: true, Quorum: true, Validity: true}, impl.Policy{CheckValidity: true}, 5},
		{"fenced", impl.Claims{AtomicAcquire: true, TokenRelease: true, Fencing: true}, impl.Policy{}, 1},
		{"fenced-cluster", impl.Claims{AtomicAcquire: true, TokenRelease: true, Fencing: true}, impl.Policy{}, 1},
		{"redsync", impl.Claims{AtomicAcquire: true, TokenRelease: true, Quorum: true, Validity: true}, impl.Policy{CheckValidity: true}, 5},
		{"redsync-single", impl.Claims{AtomicAcquire: true, TokenRelease: true, Validity: true}, impl.Policy{CheckValidity: true}, 1},
		{"redislock", impl.Claims{AtomicAcquire: true, TokenRelease: true, Renewal: true}, impl.Policy{HonourLost: true}, 1},
		{"redislock-cluster", impl.Claims{AtomicAcquire: true, TokenRelease: true, Renewal: true}, impl.Policy{HonourLost: true}, 1},
		{"etcd-mutex", impl.Claims{AtomicAcquire: true, TokenRelease: true, Renewal: true}, impl.Policy{HonourLost: true}, 3},
		{"etcd-fenced", impl.Claims{AtomicAcquire: true, TokenRelease: true, Renewal: true, Fencing: true}, impl.Policy{HonourLost: true}, 3},
		{"zk-lock", impl.Claims{AtomicAcquire: true, TokenRelease: true, Renewal: true}, impl.Policy{HonourLost: true}, 3},
		{"zk-fenced", impl.Claims{AtomicAcquire: true, TokenRelease: true, Renewal: true, Fencing: true}, impl.Policy{HonourLost: true}, 3},
	}
	if len(tests) != len(strategies.All()) {
		t.Fatalf("test table has %d strategies, All() %d", len(tests), len(strategies.All()))
	}
	for _, tt := range tests {
		s, err := strategies.Lookup(tt.name)
		if err != nil {
			t.Fatal(err)
		}
		info := s.Info()
		if info.Claims != tt.claims || info.Policy != tt.policy || info.Nodes != tt.nodes {
			t.Errorf("%s: Info = %+v, want claims %+v policy %+v nodes %d", tt.name, info, tt.claims, tt.policy, tt.nodes)
		}
		if info.Summary == "" || info.Source == "" || strings.Contains(info.Summary, "\n") {
			t.Errorf("%s: Summary %q / Source %q: want one non-empty line each", tt.name, info.Summary, info.Source)
		}
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	one := []redis.UniversalClient{redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})}
	two := append(one, redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}))
	t.Cleanup(func() {
		for _, c := range two {
			_ = c.Close()
		}
	})
	good := impl.Config{Nodes: one, TTL: time.Second, Owner: "a"}
	tests := []struct {
		name string
		edit func(*impl.Config)
	}{
		{"no nodes", func(c *impl.Config) { c.Nodes = nil }},
		{"no owner", func(c *impl.Config) { c.Owner = "" }},
		{"ttl below 1ms", func(c *impl.Config) { c.TTL = time.Microsecond }},
		{"negative drift", func(c *impl.Config) { c.DriftFactor = -1 }},
	}
	for _, s := range onRedis() {
		if _, err := s.New(good); err != nil {
			t.Errorf("%s.New(good config): %v", s.Name(), err)
		}
		for _, tt := range tests {
			cfg := good
			tt.edit(&cfg)
			if _, err := s.New(cfg); err == nil {
				t.Errorf("%s.New(%s): no error", s.Name(), tt.name)
			}
		}
		if s.Info().Nodes == 1 {
			cfg := good
			cfg.Nodes = two
			if _, err := s.New(cfg); err == nil {
				t.Errorf("%s.New(2 nodes): no error for a single-node strategy", s.Name())
			}
		}
	}
}

// TestAcquireRelease covers, for every strategy: acquire, a second owner
// refused while held, release, a second release refused, and the second
// owner's acquire after release.
// statesReasons are the Redis strategies whose failed calls state a
// reason (impl.Reason); triesTokens those whose failed acquires carry the
// token tried (impl.TriedToken). redislock's library neither says why nor
// shows the token of a failed Obtain; redsync's keeps a failed attempt's
// value to itself.
var (
	statesReasons = map[string]bool{"naive": true, "set-nx-px": true, "token-lua": true, "watchdog": true, "reentrant": true,
		"redlock": true, "fenced": true, "redsync": true, "redsync-single": true}
	triesTokens = map[string]bool{"naive": true, "set-nx-px": true, "token-lua": true, "watchdog": true, "reentrant": true,
		"redlock": true, "fenced": true}
)

func TestAcquireRelease(t *testing.T) {
	_, nodes := startNodes(t, 5)
	for _, s := range onRedis() {
		t.Run(s.Name(), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			ns := nodesFor(s, nodes)
			key := "k:" + t.Name()
			cfg := impl.Config{Nodes: ns, TTL: 500 * time.Millisecond, Owner: "a"}
			a := newLocker(t, s, cfg)
			cfg.Owner = "b"
			b := newLocker(t, s, cfg)

			before := time.Now()
			la, err := a.Acquire(ctx, key)
			if err != nil {
				t.Fatalf("a.Acquire: %v", err)
			}
			if la.Key != key || la.Token == "" || la.Start.Before(before) || la.End.Before(la.Start) {
				t.Errorf("lease = %+v: want key %q, a token, Start <= End", la, key)
			}
			if got := holders(t, ns, key, la.Token); got != len(ns) {
				t.Errorf("token on %d of %d nodes after acquire", got, len(ns))
			}
			_, err = b.Acquire(ctx, key)
			if !errors.Is(err, impl.ErrNotAcquired) {
				t.Errorf("b.Acquire while a holds: err = %v, want ErrNotAcquired", err)
			}
			if statesReasons[s.Name()] && impl.Reason(err) != impl.ReasonTaken {
				t.Errorf("b.Acquire while a holds: reason %q, want taken", impl.Reason(err))
			}
			if tried := impl.TriedToken(err); triesTokens[s.Name()] && (tried == "" || tried == la.Token) {
				t.Errorf("b.Acquire while a holds: token tried %q: want b's own token", tried)
			}
			if got := holders(t, ns, key, la.Token); got != len(ns) {
				t.Errorf("a's token on %d of %d nodes after b's failed acquire", got, len(ns))
			}
			if rem, err := a.Release(ctx, la); err != nil || rem != 0 {
				t.Fatalf("a.Release = %d, %v; want 0, nil", rem, err)
			}
			if got := exists(t, ns, key); got != 0 {
				t.Errorf("key on %d nodes after release", got)
			}
			_, err = a.Release(ctx, la)
			if !errors.Is(err, impl.ErrNotHeld) {
				t.Errorf("second a.Release: err = %v, want ErrNotHeld", err)
			}
			if statesReasons[s.Name()] && impl.Reason(err) != impl.ReasonExpired {
				t.Errorf("second a.Release (no key): reason %q, want expired", impl.Reason(err))
			}
			lb, err := b.Acquire(ctx, key)
			if err != nil {
				t.Fatalf("b.Acquire after release: %v", err)
			}
			if lb.Token == la.Token {
				t.Errorf("b's token %q equals a's", lb.Token)
			}
			if _, err := b.Release(ctx, lb); err != nil {
				t.Errorf("b.Release: %v", err)
			}
		})
	}
}

// TestStaleRelease: a acquires with a short TTL, the lease expires (a
// watchdog client is paused before its first renewal), b
// acquires, then a releases its stale lease. Token strategies refuse
// (ErrNotHeld) and keep b's lock; naive and set-nx-px delete it (their
// documented flaw).
func TestStaleRelease(t *testing.T) {
	_, nodes := startNodes(t, 5)
	deletesOthers := map[string]bool{"naive": true, "set-nx-px": true}
	for _, s := range onRedis() {
		t.Run(s.Name(), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			ns := nodesFor(s, nodes)
			key := "k:" + t.Name()
			// a is paused at its first renewal (watchdog), so its lease expires.
			pauseRenewal := func(ctx context.Context, p impl.Point) error {
				if p == impl.PointRenew {
					<-ctx.Done()
					return ctx.Err()
				}
				return nil
			}
			cfg := impl.Config{Nodes: ns, TTL: 100 * time.Millisecond, Owner: "a", Hook: pauseRenewal}
			a := newLocker(t, s, cfg)
			cfg.Owner, cfg.TTL, cfg.Hook = "b", 2*time.Second, nil
			b := newLocker(t, s, cfg)

			la, err := a.Acquire(ctx, key)
			if err != nil {
				t.Fatalf("a.Acquire: %v", err)
			}
			waitGone(t, ns, key)
			lb, err := b.Acquire(ctx, key)
			if err != nil {
				t.Fatalf("b.Acquire after a's lease expired: %v", err)
			}
			_, err = a.Release(ctx, la)
			if deletesOthers[s.Name()] {
				if err != nil {
					t.Errorf("stale a.Release: %v, want nil (DEL without token check)", err)
				}
				if got := exists(t, ns, key); got != 0 {
					t.Errorf("b's key still on %d nodes: want it deleted by a's stale release", got)
				}
				return
			}
			if !errors.Is(err, impl.ErrNotHeld) {
				t.Errorf("stale a.Release: err = %v, want ErrNotHeld", err)
			}
			if statesReasons[s.Name()] && impl.Reason(err) != impl.ReasonTaken {
				t.Errorf("stale a.Release (b holds): reason %q, want taken", impl.Reason(err))
			}
			if got := holders(t, ns, key, lb.Token); got != len(ns) {
				t.Errorf("b's token on %d of %d nodes after a's stale release: want all", got, len(ns))
			}
			if _, err := b.Release(ctx, lb); err != nil {
				t.Errorf("b.Release: %v", err)
			}
		})
	}
}

// TestNaiveHook: a Hook returning ErrCrashed after SETNX leaves the key
// without TTL (a deadlock); a Hook returning nil lets PEXPIRE set the TTL.
func TestNaiveHook(t *testing.T) {
	_, nodes := startNodes(t, 1)
	ctx := context.Background()
	s, _ := strategies.Lookup("naive")
	tests := []struct {
		name     string
		hookErr  error
		wantErr  error
		wantPTTL func(int64) bool
	}{
		{"crash", impl.ErrCrashed, impl.ErrCrashed, func(p int64) bool { return p == -1 }},
		{"continue", nil, nil, func(p int64) bool { return p > 0 && p <= 1000 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var points []impl.Point
			hook := func(_ context.Context, p impl.Point) error {
				points = append(points, p)
				return tt.hookErr
			}
			key := "k:" + t.Name()
			l := newLocker(t, s, impl.Config{Nodes: nodes, TTL: time.Second, Owner: "a", Hook: hook})
			_, err := l.Acquire(ctx, key)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Fatalf("Acquire: err = %v, want %v", err, tt.wantErr)
			}
			if !slices.Equal(points, []impl.Point{impl.PointAfterSetNX}) {
				t.Errorf("hook points = %v, want [%s]", points, impl.PointAfterSetNX)
			}
			pttl, err := nodes[0].Do(ctx, "PTTL", key).Int64()
			if err != nil || !tt.wantPTTL(pttl) {
				t.Errorf("PTTL = %d, %v", pttl, err)
			}
			b := newLocker(t, s, impl.Config{Nodes: nodes, TTL: time.Second, Owner: "b"})
			if _, err := b.Acquire(ctx, key); !errors.Is(err, impl.ErrNotAcquired) {
				t.Errorf("b.Acquire: err = %v, want ErrNotAcquired", err)
			}
		})
	}
}

// TestReentrantNesting: counts 1,2,3 on acquire, 2,1,0 on release, another
// owner refused while nested, the key gone at 0.
func TestReentrantNesting(t *testing.T) {
	_, nodes := startNodes(t, 1)
	ctx := context.Background()
	s, _ := strategies.Lookup("reentrant")
	key := "k:reentrant"
	cfg := impl.Config{Nodes: nodes, TTL: 500 * time.Millisecond, Owner: "a"}
	a := newLocker(t, s, cfg)
	cfg.Owner = "b"
	b := newLocker(t, s, cfg)

	var leases []*impl.Lease
	for want := 1; want <= 3; want++ {
		l, err := a.Acquire(ctx, key)
		if err != nil {
			t.Fatalf("acquire %d: %v", want, err)
		}
		if l.Count != want {
			t.Errorf("acquire %d: Count = %d", want, l.Count)
		}
		leases = append(leases, l)
		if _, err := b.Acquire(ctx, key); !errors.Is(err, impl.ErrNotAcquired) {
			t.Errorf("b.Acquire at depth %d: err = %v, want ErrNotAcquired", want, err)
		}
	}
	for i, want := range []int{2, 1, 0} {
		rem, err := a.Release(ctx, leases[len(leases)-1-i])
		if err != nil || rem != want {
			t.Errorf("release %d: %d, %v; want %d, nil", i+1, rem, err, want)
		}
		if got, want := exists(t, nodes, key), min(want, 1); got != want {
			t.Errorf("after release %d: key exists on %d nodes, want %d", i+1, got, want)
		}
	}
	if _, err := a.Release(ctx, leases[0]); !errors.Is(err, impl.ErrNotHeld) {
		t.Errorf("release at count 0: err = %v, want ErrNotHeld", err)
	}
	if _, err := b.Acquire(ctx, key); err != nil {
		t.Errorf("b.Acquire after a released fully: %v", err)
	}
}

// TestFencedTokensIncrease: fencing tokens strictly increase across grants
// and owners; refused acquires consume none.
func TestFencedTokensIncrease(t *testing.T) {
	_, nodes := startNodes(t, 1)
	ctx := context.Background()
	s, _ := strategies.Lookup("fenced")
	key := "k:fenced"
	cfg := impl.Config{Nodes: nodes, TTL: 500 * time.Millisecond, Owner: "a"}
	a := newLocker(t, s, cfg)
	cfg.Owner = "b"
	b := newLocker(t, s, cfg)
	owners := []impl.Locker{a, b, b, a, b, a}
	var last int64
	for i, holder := range owners {
		other := a
		if holder == a {
			other = b
		}
		l, err := holder.Acquire(ctx, key)
		if err != nil {
			t.Fatalf("grant %d: %v", i, err)
		}
		if l.Fence != last+1 {
			t.Errorf("grant %d: Fence = %d, want %d (strictly increasing, no gaps from refused acquires)", i, l.Fence, last+1)
		}
		last = l.Fence
		if _, err := other.Acquire(ctx, key); !errors.Is(err, impl.ErrNotAcquired) {
			t.Errorf("grant %d: other's acquire: %v, want ErrNotAcquired", i, err)
		}
		if _, err := holder.Release(ctx, l); err != nil {
			t.Errorf("grant %d: release: %v", i, err)
		}
	}
	if v, err := nodes[0].Get(ctx, key+strategies.FenceSuffix).Int64(); err != nil || v != last {
		t.Errorf("counter %s = %d, %v; want %d", key+strategies.FenceSuffix, v, err, last)
	}
}
