package chaos

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/workload"
)

// clientScenarios are the client-side faults.
func clientScenarios() []Scenario {
	return []Scenario{LongCS(), GCPause(), CrashBetween()}
}

// pauses is how many client pauses or slow critical sections a run gets,
// spread over the run by triggers.
const pauses = 3

// onePerTrigger hands out each trigger time once: the first client event
// after trigger i (while no other injection is active) takes it.
type onePerTrigger struct {
	env   Env
	times []int64
	mu    sync.Mutex
	next  int
	busy  bool
}

// Run and Heal do nothing: a nemesis that acts only at lock events (At)
// gets them by embedding onePerTrigger.
func (o *onePerTrigger) Run(context.Context) error { return nil }

// Heal does nothing; see Run.
func (o *onePerTrigger) Heal(context.Context) error { return nil }

// take reports whether the caller gets the next due trigger.
func (o *onePerTrigger) take() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.busy || o.next >= len(o.times) || o.env.Clock.Now() < o.times[o.next] {
		return false
	}
	o.next++
	o.busy = true
	return true
}

func (o *onePerTrigger) done() {
	o.mu.Lock()
	o.busy = false
	o.mu.Unlock()
}

// clientPause stops every goroutine of the holder (its renewal too) right
// after its usage-policy check and before its resource write, for 2×TTL: a
// stop-the-world GC pause or a process freeze (Kleppmann 2016).
type clientPause struct {
	onePerTrigger
	mu     sync.Mutex
	paused map[int]chan struct{} // client → closed when its pause ends
}

// GCPause pauses the holder before its write for 2×TTL, three times a run.
func GCPause() Scenario {
	return Scenario{Name: "gc-pause", Kind: Client,
		Summary: "the holder stops (every goroutine, renewal too) after its validity check and before its write, for 2×TTL, three times a run",
		New: func(env Env) Nemesis {
			return &clientPause{onePerTrigger: onePerTrigger{env: env, times: triggers(env.Duration, pauses)}, paused: map[int]chan struct{}{}}
		}}
}

func (p *clientPause) At(ctx context.Context, ev workload.Event) error {
	switch ev.Point {
	case workload.PointRenew:
		p.mu.Lock()
		ch := p.paused[ev.Client]
		p.mu.Unlock()
		if ch != nil {
			select {
			case <-ch:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	case workload.PointBeforeWrite:
		if !p.take() {
			return nil
		}
		defer p.done()
		ch := make(chan struct{})
		p.mu.Lock()
		p.paused[ev.Client] = ch
		p.mu.Unlock()
		d := 2 * p.env.TTL
		start := p.env.Clock.Now()
		sleepCtx(ctx, d)
		p.mu.Lock()
		delete(p.paused, ev.Client)
		p.mu.Unlock()
		close(ch)
		recordWindow(p.env, start, p.env.Clock.Now(), fmt.Sprintf("gc-pause: client %d (hold %d on %s) stopped for %v before its write", ev.Client, ev.Hold, ev.Key, d))
	}
	return nil
}

// slowCS makes chosen critical sections take 2×TTL longer (the client keeps
// running: its renewal goes on).
type slowCS struct {
	onePerTrigger
}

// LongCS makes a critical section run 2×TTL, three times a run.
func LongCS() Scenario {
	return Scenario{Name: "long-cs", Kind: Client,
		Summary: "a critical section runs 2×TTL (the client keeps running, renewal too), three times a run",
		New: func(env Env) Nemesis {
			return &slowCS{onePerTrigger{env: env, times: triggers(env.Duration, pauses)}}
		}}
}

func (s *slowCS) At(ctx context.Context, ev workload.Event) error {
	if ev.Point != workload.PointInCS || !s.take() {
		return nil
	}
	defer s.done()
	d := 2 * s.env.TTL
	start := s.env.Clock.Now()
	sleepCtx(ctx, d)
	recordWindow(s.env, start, s.env.Clock.Now(), fmt.Sprintf("long-cs: client %d (hold %d on %s) critical section +%v", ev.Client, ev.Hold, ev.Key, d))
	return nil
}

// crashBetween kills one client at a named point: a naive client between
// SETNX and EXPIRE (the key is left without a TTL), any other holder inside
// its critical section.
type crashBetween struct {
	onePerTrigger
}

// CrashBetween crashes one client once: naive between SETNX and EXPIRE,
// others inside the CS.
func CrashBetween() Scenario {
	return Scenario{Name: "crash-between", Kind: Client,
		Summary: "one client dies: naive after SETNX and before EXPIRE; other strategies' holder inside its critical section",
		New: func(env Env) Nemesis {
			return &crashBetween{onePerTrigger{env: env, times: triggers(env.Duration, 1)}}
		}}
}

func (c *crashBetween) At(ctx context.Context, ev workload.Event) error {
	want := workload.PointInCS
	if c.env.Strategy == "naive" {
		want = workload.PointAfterSetNX
	}
	if ev.Point != want || !c.take() {
		return nil
	}
	t := c.env.Clock.Now()
	recordWindow(c.env, t, t, fmt.Sprintf("crash-between: client %d dies at %s on %s", ev.Client, ev.Point, ev.Key))
	return impl.ErrCrashed
}

func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
