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

// cancelling is a Faults that cancels every third acquire and every
// second release of token-lua before it reaches Redis (a canceller used
// inside At cancels the call as it starts), and fires the canceller of
// each earlier call again, which must do nothing: its call has returned.
type cancelling struct {
	mu        sync.Mutex
	n         map[Point]int
	stale     impl.Canceller
	cancelled map[Point]int
}

func (f *cancelling) At(_ context.Context, ev Event) error {
	if ev.Point != PointBeforeAcquire && ev.Point != PointBeforeRelease {
		return nil
	}
	if ev.Call == nil {
		panic("no Event.Call at " + string(ev.Point))
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stale != nil {
		f.stale.Cancel()
	}
	k := ev.Call.Cancellable()
	f.stale = k
	f.n[ev.Point]++
	if ev.Point == PointBeforeAcquire && f.n[ev.Point]%3 == 0 || ev.Point == PointBeforeRelease && f.n[ev.Point]%2 == 0 {
		k.Cancel()
		f.cancelled[ev.Point]++
	}
	return nil
}

// TestCancelCall: calls a nemesis cancels are recorded info with reason
// cancelled (an in-process strategy's go-redis call sees its ctx done
// before it sends), exactly as many as it cancelled, and a canceller kept
// past its call cancels nothing.
func TestCancelCall(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, st := startSingle(ctx, t, "token-lua")
	rec := &collect{}
	fs := &cancelling{n: map[Point]int{}, cancelled: map[Point]int{}}
	env := Env{
		Strategy: st,
		Nodes: func(int) ([]redis.UniversalClient, error) {
			return []redis.UniversalClient{redis.NewClient(&redis.Options{Addr: c.Nodes()[0].Addr(), MaxRetries: -1})}, nil
		},
		History: rec, Clock: history.NewClock(), IDs: &history.IDs{}, Faults: fs,
	}
	cfg := Config{Clients: 1, TTL: 50 * time.Millisecond, Duration: 300 * time.Millisecond, Seed: 1}
	if _, err := Run(ctx, cfg, env); err != nil {
		t.Fatal(err)
	}
	got := map[history.Kind]int{}
	for _, op := range rec.ops {
		if op.Reason != history.ReasonCancelled {
			continue
		}
		if op.Result != history.Info {
			t.Errorf("%+v: a cancelled call recorded %s, want info", op, op.Result)
		}
		got[op.Kind]++
	}
	if got[history.Acquire] != fs.cancelled[PointBeforeAcquire] || got[history.Release] != fs.cancelled[PointBeforeRelease] || got[history.Acquire] == 0 || got[history.Release] == 0 {
		t.Errorf("recorded %d acquires and %d releases cancelled; the nemesis cancelled %d and %d (want equal, and some)",
			got[history.Acquire], got[history.Release], fs.cancelled[PointBeforeAcquire], fs.cancelled[PointBeforeRelease])
	}
}
