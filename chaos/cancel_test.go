package chaos

import (
	"context"
	"errors"
	"github.com/lockbench/lockbench/internal/clustertest"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/cluster"
	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/strategies"
	"github.com/lockbench/lockbench/workload"
)

// TestCancelLands drives the cancel scenario by hand against a real
// redis-server: the node is stopped at the struck acquire, the acquire's
// SET queues in it, the call is cancelled and the node resumed, so the
// SET still runs. A client that abandons its call at the cancel (as an
// adapter serving cancel does) returns before the resume and leaves the
// key holding its token; a client that ignores the cancel (go-redis
// waits for a written command's reply) returns granted after the resume.
// Either way the window is landed, with the key's "set" after the resume
// as its evidence.
func TestCancelLands(t *testing.T) {
	const ttl = 400 * time.Millisecond
	cases := []struct {
		name    string
		abandon bool   // the client returns at the cancel
		outcome string // in the note
	}{
		{"abandoned", true, "returned without a grant"},
		{"ignored", false, "returned granted"},
	}
	c := clustertest.Start(t, cluster.Topology{Kind: cluster.Single}, cluster.Options{})
	node := c.Nodes()[0]
	direct := redis.NewClient(&redis.Options{Addr: node.Addr(), MaxRetries: -1})
	defer direct.Close()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := clustertest.Context(t)
			direct.Del(ctx, "k")
			rec := &recorder{}
			st, err := strategies.Lookup("token-lua")
			if err != nil {
				t.Fatal(err)
			}
			env := Env{TTL: ttl, Duration: time.Millisecond, Clock: history.NewClock(), History: rec, Info: st.Info(), Clients: 1, Cluster: c}
			nem := cancelScenario().New(env)
			time.Sleep(2 * time.Millisecond) // past the first trigger
			rc := redis.NewClient(&redis.Options{Addr: node.Addr(), MaxRetries: -1, ContextTimeoutEnabled: true})
			defer rc.Close()
			call := &workload.Call{}
			if err := nem.At(ctx, workload.Event{Client: 0, Point: workload.PointBeforeAcquire, Key: "k", Depth: 1, Call: call}); err != nil {
				t.Fatal(err)
			}
			// The nemesis made the call cancellable; the test's client
			// learns of the cancel from the strike in flight.
			cctx, cancel := context.WithCancel(ctx)
			defer cancel()
			go func() {
				// Stand in for workload's call machinery: poll the
				// nemesis's cancel through the canceller it holds.
				for cctx.Err() == nil {
					if cancelledByNemesis(nem) {
						cancel()
						return
					}
					time.Sleep(time.Millisecond)
				}
			}()
			type res struct {
				ok  bool
				err error
			}
			ch := make(chan res, 1)
			go func() {
				ok, err := rc.SetNX(ctx, "k", "tok", ttl).Result()
				ch <- res{ok, err}
			}()
			var r res
			if tc.abandon {
				select {
				case r = <-ch:
					t.Fatalf("the SET answered %v, %v while the node was stopped", r.ok, r.err)
				case <-cctx.Done():
					r = res{false, errors.New("abandoned")}
				}
			} else {
				r = <-ch
				if !r.ok || r.err != nil {
					t.Fatalf("SET NX: %v, %v: want it granted after the resume", r.ok, r.err)
				}
			}
			ev := workload.Event{Client: 0, Point: workload.PointBeforeAcquire, Key: "k", Depth: 1}
			if r.ok {
				ev = workload.Event{Client: 0, Point: workload.PointAcquired, Key: "k", Hold: 1, Lease: &impl.Lease{Key: "k", Token: "tok"}}
			}
			if err := nem.At(ctx, ev); err != nil {
				t.Fatal(err)
			}
			if err := nem.Heal(ctx); err != nil {
				t.Fatal(err)
			}
			var ws []history.Operation
			for _, op := range rec.ops() {
				if op.Kind == history.Nemesis && op.Landing != "" {
					ws = append(ws, op)
				}
			}
			if len(ws) != 1 || ws[0].Landing != history.Landed || !strings.Contains(ws[0].Note, tc.outcome) ||
				!strings.Contains(ws[0].Note, "the struck command ran after the cancel") {
				t.Fatalf("windows %+v, want one landed window saying %q and that the SET ran", ws, tc.outcome)
			}
			t.Log(ws[0].Note)
			if v, err := direct.Get(ctx, "k").Result(); err != nil || v != "tok" {
				t.Errorf("key %q (%v), want the struck SET's token", v, err)
			}
		})
	}
}

// cancelledByNemesis reports whether the nemesis's strike in flight has
// cancelled its call (the strike's cancel time is past).
func cancelledByNemesis(nem Nemesis) bool {
	c, ok := nem.(*cancels)
	if !ok {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, st := range c.pending {
		if st.f.Cancelled() {
			return true
		}
	}
	return false
}
