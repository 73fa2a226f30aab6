package workload

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/impl"
)

// events is a Faults that keeps every event, in the order each client
// passed its points.
type events struct {
	mu  sync.Mutex
	evs []Event
}

func (e *events) At(_ context.Context, ev Event) error {
	e.mu.Lock()
	e.evs = append(e.evs, ev)
	e.mu.Unlock()
	return nil
}

// TestFaultPoints: a reentrant client passes before-acquire right before
// every acquire (depth 1 without a lease, nested ones with the outermost
// lease), before-release right before every release with the lease
// released, and a renewing client's renew point carries its hold and
// lease; crashing at before-acquire records the crash and no acquire.
func TestFaultPoints(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, tc := range []struct {
		strategy    string
		reentrancy  int
		wantRenewal bool
	}{
		{"reentrant", 2, false},
		{"watchdog", 1, true},
	} {
		t.Run(tc.strategy, func(t *testing.T) {
			c, st := startSingle(ctx, t, tc.strategy)
			rec, fs := &collect{}, &events{}
			env := Env{
				Strategy: st,
				Nodes: func(int) ([]redis.UniversalClient, error) {
					return []redis.UniversalClient{redis.NewClient(&redis.Options{Addr: c.Nodes()[0].Addr(), MaxRetries: -1})}, nil
				},
				History: rec, Clock: history.NewClock(), IDs: &history.IDs{}, Faults: fs,
			}
			// One client: every acquire is granted; the critical section
			// outlasts two renewal periods (TTL/3) for the watchdog.
			cfg := Config{Clients: 1, TTL: 60 * time.Millisecond, Duration: 150 * time.Millisecond, Reentrancy: tc.reentrancy,
				CS: CSDist{Kind: "fixed", Min: 50 * time.Millisecond}, Seed: 1}
			if _, err := Run(ctx, cfg, env); err != nil {
				t.Fatal(err)
			}
			var acquires, releases, renewals int
			var last *impl.Lease
			for _, ev := range fs.evs {
				switch ev.Point {
				case PointBeforeAcquire:
					acquires++
					if ev.Depth == 1 && (ev.Lease != nil || ev.Hold != 0) {
						t.Errorf("outermost before-acquire carries hold %d lease %v, want none", ev.Hold, ev.Lease)
					}
					if ev.Depth > 1 && (ev.Lease == nil || ev.Lease != last || ev.Hold == 0) {
						t.Errorf("nested before-acquire (depth %d) carries hold %d lease %v, want the outermost lease %v", ev.Depth, ev.Hold, ev.Lease, last)
					}
				case PointAcquired:
					last = ev.Lease
				case PointBeforeRelease:
					releases++
					if ev.Lease == nil || ev.Depth < 1 || ev.Hold == 0 {
						t.Errorf("before-release without lease, depth or hold: %+v", ev)
					}
				case PointRenew:
					renewals++
					if ev.Hold != 0 && ev.Lease == nil {
						t.Errorf("renew of hold %d without its lease", ev.Hold)
					}
				}
			}
			var opAcq, opRel int
			for _, op := range rec.ops {
				switch {
				case op.Kind == history.Acquire && op.Client >= 0 && op.Node == "":
					opAcq++
				case op.Kind == history.Release:
					opRel++
				}
			}
			if acquires == 0 || acquires != opAcq || releases != opRel {
				t.Errorf("before-acquire %d, acquires recorded %d; before-release %d, releases recorded %d: want one point per call", acquires, opAcq, releases, opRel)
			}
			if tc.wantRenewal && renewals == 0 {
				t.Error("no renew point seen in critical sections of 50 ms at TTL 60 ms")
			}
		})
	}
	t.Run("crash before acquire", func(t *testing.T) {
		c, st := startSingle(ctx, t, "token-lua")
		rec := &collect{}
		env := Env{
			Strategy: st,
			Nodes: func(int) ([]redis.UniversalClient, error) {
				return []redis.UniversalClient{redis.NewClient(&redis.Options{Addr: c.Nodes()[0].Addr(), MaxRetries: -1})}, nil
			},
			History: rec, Clock: history.NewClock(), IDs: &history.IDs{}, Faults: crashAt(PointBeforeAcquire),
		}
		cfg := Config{Clients: 1, TTL: 60 * time.Millisecond, Duration: 100 * time.Millisecond, Seed: 1}
		st2, err := Run(ctx, cfg, env)
		if err != nil {
			t.Fatal(err)
		}
		if st2.Crashed != 1 || len(rec.ops) != 1 || rec.ops[0].Kind != history.Crash || rec.ops[0].Note != string(PointBeforeAcquire) {
			t.Errorf("crashed %d, ops %+v: want one crash at before-acquire and no acquire", st2.Crashed, rec.ops)
		}
	})
}

// crashAt is a Faults that crashes every client at its first pass of p.
type crashAt Point

func (p crashAt) At(_ context.Context, ev Event) error {
	if ev.Point == Point(p) {
		return impl.ErrCrashed
	}
	return nil
}

// slowStart wraps a strategy so that client 0's first acquire waits d
// before it calls: a client slow to start, as an adapter process that
// takes seconds to answer its first call.
type slowStart struct {
	impl.Strategy
	d time.Duration
}

func (s slowStart) New(cfg impl.Config) (impl.Locker, error) {
	l, err := s.Strategy.New(cfg)
	if err != nil || cfg.Owner[:3] != "c0-" {
		return l, err
	}
	return &slowLocker{Locker: l, d: s.d}, nil
}

type slowLocker struct {
	impl.Locker
	d    time.Duration
	done bool
}

func (l *slowLocker) Acquire(ctx context.Context, key string) (*impl.Lease, error) {
	if !l.done {
		l.done = true
		time.Sleep(l.d)
	}
	return l.Locker.Acquire(ctx, key)
}

// TestReadiness: the readiness barrier closes once every client made its
// first call, so a client 300 ms slow to start delays it by that much, and
// the clients run the duration after it; the other clients' calls before
// it are recorded as usual.
func TestReadiness(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, st := startSingle(ctx, t, "token-lua")
	const slow, dur = 300 * time.Millisecond, 200 * time.Millisecond
	rec := &collect{}
	ready := NewReadiness()
	clock := history.NewClock()
	env := Env{
		Strategy: slowStart{Strategy: st, d: slow},
		Nodes: func(int) ([]redis.UniversalClient, error) {
			return []redis.UniversalClient{redis.NewClient(&redis.Options{Addr: c.Nodes()[0].Addr(), MaxRetries: -1})}, nil
		},
		History: rec, Clock: clock, IDs: &history.IDs{}, Ready: ready,
	}
	if _, ok := ready.At(); ok {
		t.Fatal("the barrier is closed before the run")
	}
	stats, err := Run(ctx, Config{Clients: 3, TTL: 100 * time.Millisecond, Duration: dur, Seed: 1}, env)
	if err != nil {
		t.Fatal(err)
	}
	at, ok := ready.At()
	if !ok {
		t.Fatal("the barrier never closed")
	}
	if stats.ReadyAfter < slow || stats.Elapsed < slow+dur {
		t.Errorf("ready after %v, run took %v: want ≥ %v and ≥ %v (the duration after the barrier)", stats.ReadyAfter, stats.Elapsed, slow, slow+dur)
	}
	var before, c0 int
	for _, op := range rec.ops {
		if op.Kind != history.Acquire {
			continue
		}
		if op.Client == 0 && op.Invoke < at {
			c0++
		}
		if op.Invoke < at && op.Client != 0 {
			before++
		}
	}
	if c0 != 1 || before == 0 {
		t.Errorf("before the barrier: client 0 made %d acquires (want its first, 1), the others made %d (want some)", c0, before)
	}
}
