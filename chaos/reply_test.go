package chaos

import (
	"context"
	"errors"
	"github.com/lockbench/lockbench/internal/clustertest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockbench/lockbench/chaos/fault/link"
	"github.com/lockbench/lockbench/cluster"
	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/strategies"
	"github.com/lockbench/lockbench/workload"
	"github.com/redis/go-redis/v9"
)

// TestLostReplyLands drives the lost-reply scenarios by hand against a
// real redis-server, one real Locker behind a proxy: the struck call
// reaches the server and takes effect while the client sees an error
// (naive's SETNX leaves a key without TTL, token-lua's release deletes
// the key, reentrant's nested acquire raises the count, watchdog's first
// renewal extends the TTL), and the window records it as landed with the
// key read at the drop.
func TestLostReplyLands(t *testing.T) {
	const ttl = 300 * time.Millisecond
	cases := []struct {
		strategy string
		scenario Scenario
		effect   string // in the note
		check    func(t *testing.T, direct *redis.Client, l *impl.Lease)
	}{
		{"naive", lostReplyScenario(), "the acquire took effect", func(t *testing.T, direct *redis.Client, _ *impl.Lease) {
			if d, err := direct.PTTL(context.Background(), "k").Result(); err != nil || d != -1 {
				t.Errorf("PTTL %v (%v), want -1: SETNX ran, PEXPIRE never came", d, err)
			}
		}},
		{"token-lua", lostReplyReleaseScenario(), "the release took effect", func(t *testing.T, direct *redis.Client, _ *impl.Lease) {
			if n, _ := direct.Exists(context.Background(), "k").Result(); n != 0 {
				t.Error("the key is still there: the release must have run")
			}
		}},
		{"reentrant", lostReplyReentrantScenario(), "the hold count went up", func(t *testing.T, direct *redis.Client, l *impl.Lease) {
			if n, _ := direct.HGet(context.Background(), "k", l.Token).Int(); n != 2 {
				t.Errorf("count %d, want 2: the nested acquire must have run", n)
			}
		}},
		{"watchdog", lostReplyExtendScenario(), "the TTL was extended", nil},
	}
	c := clustertest.Start(t, cluster.Topology{Kind: cluster.Single}, cluster.Options{})
	node := c.Nodes()[0]
	direct := redis.NewClient(&redis.Options{Addr: node.Addr(), MaxRetries: -1})
	defer direct.Close()
	for _, tc := range cases {
		t.Run(tc.scenario.Name, func(t *testing.T) {
			ctx := clustertest.Context(t)
			direct.Del(ctx, "k")
			links, err := link.NewLinks(ctx, 1, c.Nodes())
			if err != nil {
				t.Fatal(err)
			}
			defer links.Close()
			rec := &recorder{}
			st, err := strategies.Lookup(tc.strategy)
			if err != nil {
				t.Fatal(err)
			}
			env := Env{TTL: ttl, Duration: time.Millisecond, Clock: history.NewClock(), History: rec, Info: st.Info(), Clients: 1, Cluster: c, Links: links}
			nem := tc.scenario.New(env)
			time.Sleep(2 * time.Millisecond) // past the first trigger
			rc := redis.NewClient(&redis.Options{Addr: links.Link(0, 0).Addr(), MaxRetries: -1, ContextTimeoutEnabled: true})
			defer rc.Close()
			var mu sync.Mutex
			var hold int64
			var lease *impl.Lease
			renewed := make(chan error, 4)
			cfg := impl.Config{Nodes: []redis.UniversalClient{rc}, TTL: ttl, Owner: "c0",
				Hook: func(ctx context.Context, p impl.Point) error {
					mu.Lock()
					ev := workload.Event{Client: 0, Point: workload.Point(p), Key: "k", Hold: hold, Lease: lease}
					mu.Unlock()
					return nem.At(ctx, ev)
				},
				OnRenew: func(rn impl.Renewal) { renewed <- rn.Err },
			}
			locker, err := st.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer locker.Close()
			at := func(p workload.Point, depth int) {
				mu.Lock()
				ev := workload.Event{Client: 0, Point: p, Key: "k", Hold: hold, Lease: lease, Depth: depth}
				mu.Unlock()
				if err := nem.At(ctx, ev); err != nil {
					t.Fatal(err)
				}
			}
			at(workload.PointBeforeAcquire, 1)
			l, err := locker.Acquire(ctx, "k")
			if tc.scenario.Name == "lost-reply" {
				if err == nil || errors.Is(err, impl.ErrNotAcquired) {
					t.Fatalf("acquire: %v, want an unknown outcome (the reply was lost)", err)
				}
				at(workload.PointBeforeAcquire, 1) // the client moves on: its retry
			} else {
				if err != nil {
					t.Fatal(err)
				}
				mu.Lock()
				hold, lease = 1, l
				mu.Unlock()
				at(workload.PointAcquired, 0)
				switch tc.scenario.Name {
				case "lost-reply-release":
					at(workload.PointBeforeRelease, 1)
					if _, err := locker.Release(ctx, l); err == nil || errors.Is(err, impl.ErrNotHeld) {
						t.Fatalf("release: %v, want an unknown outcome", err)
					}
					at(workload.PointReleased, 0)
				case "lost-reply-reentrant":
					at(workload.PointBeforeAcquire, 2)
					if _, err := locker.Acquire(ctx, "k"); err == nil || errors.Is(err, impl.ErrNotAcquired) {
						t.Fatalf("nested acquire: %v, want an unknown outcome", err)
					}
					at(workload.PointBeforeRelease, 1)
				case "lost-reply-extend":
					// The first renewal (TTL/3 after the grant) loses its
					// reply; the second goes through.
					if err := <-renewed; err == nil || errors.Is(err, impl.ErrNotHeld) {
						t.Fatalf("first renewal: %v, want an unknown outcome", err)
					}
					if err := <-renewed; err != nil {
						t.Fatalf("second renewal: %v", err)
					}
				}
			}
			if err := nem.Heal(ctx); err != nil {
				t.Fatal(err)
			}
			// The strike's window, however short: a nested acquire on
			// loopback can be struck, dropped and moved on within 1 ms.
			var ws []history.Operation
			for _, op := range rec.ops() {
				if op.Kind == history.Nemesis && op.Landing != "" {
					ws = append(ws, op)
				}
			}
			if len(ws) != 1 || ws[0].Landing != history.Landed || !strings.Contains(ws[0].Note, tc.effect) {
				t.Fatalf("windows %+v, want one landed window saying %q", ws, tc.effect)
			}
			t.Log(ws[0].Note)
			if tc.check != nil {
				tc.check(t, direct, l)
			}
		})
	}
}

// TestScheduleWaitsForReadiness: a nemesis's triggers count from the
// readiness barrier: before it closes no event-placed fault strikes and a
// timed one waits; after it, a trigger is due its fraction of the
// duration after the barrier, not after the run clock's start.
func TestScheduleWaitsForReadiness(t *testing.T) {
	const ttl = 20 * time.Millisecond
	rec := &recorder{}
	ready := workload.NewReadiness()
	clock := history.NewClock()
	env := Env{TTL: ttl, Duration: 100 * time.Millisecond, Clock: clock, History: rec, Clients: 2, Ready: ready}
	nem := longCSScenario().New(env)
	ctx := context.Background()
	time.Sleep(150 * time.Millisecond) // past every trigger on the run clock
	if err := nem.At(ctx, workload.Event{Client: 0, Point: workload.PointInCS, Key: "k", Hold: 1}); err != nil {
		t.Fatal(err)
	}
	if ws := rec.windows(); len(ws) != 0 {
		t.Fatalf("a fault struck before the barrier: %+v", ws)
	}
	if _, ok := env.since(); ok {
		t.Error("since() reports a schedule before the barrier")
	}
	waited := make(chan time.Duration, 1)
	go func() {
		start := time.Now()
		sleepUntil(ctx, env, int64(10*time.Millisecond))
		waited <- time.Since(start)
	}()
	time.Sleep(50 * time.Millisecond)
	ready.Close(clock.Now(), 200*time.Millisecond)
	if d := <-waited; d < 60*time.Millisecond {
		t.Errorf("sleepUntil(10ms) returned after %v: want the barrier (50 ms) and 10 ms after it", d)
	}
	// The first trigger is at 20% of the duration after the barrier.
	if err := nem.At(ctx, workload.Event{Client: 0, Point: workload.PointInCS, Key: "k", Hold: 2}); err != nil {
		t.Fatal(err)
	}
	if ws := rec.windows(); len(ws) != 0 {
		t.Fatalf("a fault struck before its trigger (20 ms after the barrier): %+v", ws)
	}
	time.Sleep(25 * time.Millisecond)
	if err := nem.At(ctx, workload.Event{Client: 0, Point: workload.PointInCS, Key: "k", Hold: 3}); err != nil {
		t.Fatal(err)
	}
	if ws := rec.windows(); len(ws) != 1 {
		t.Fatalf("windows %+v, want one after the trigger", ws)
	}
}
