package chaos

import (
	"context"
	"fmt"
	"sync"

	"github.com/lockbench/lockbench/chaos/fault"
	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/workload"
)

// clientScenarios are the client-side faults.
func clientScenarios() []Scenario {
	return []Scenario{longCSScenario(), gcPauseScenario(), crashBetweenScenario()}
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
	if o.busy || o.next >= len(o.times) || !o.env.due(o.times[o.next]) {
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

// gcPause is the nemesis of GCPause: at the trigger's first
// PointBeforeWrite it injects a fault.ClientPause of that client and holds the
// client there for 2×TTL; the client's renewal waits at PointRenew
// meanwhile.
type gcPause struct {
	onePerTrigger
	paused *fault.PausedClients
	seen   *cycles
}

// gcPauseScenario pauses the holder before its write for 2×TTL, three times a run.
// A pause lands when another client is granted the key meanwhile: the
// paused holder's lease ran out under it.
func gcPauseScenario() Scenario {
	return Scenario{Name: "gc-pause", Kind: Client, OnReplicas: true, OnCluster: true,
		Faults:  []fault.Fault{&fault.ClientPause{}},
		Summary: "the holder stops (every goroutine, renewal too) after its validity check and before its write, for 2×TTL, three times a run",
		New: func(env Env) Nemesis {
			return &gcPause{onePerTrigger: onePerTrigger{env: env, times: triggers(env.Duration, pauses)},
				paused: fault.NewPausedClients(), seen: newCycles()}
		}}
}

// At holds a paused client's renewal at PointRenew, and pauses the holder
// at the trigger's first PointBeforeWrite.
func (p *gcPause) At(ctx context.Context, ev workload.Event) error {
	p.seen.see(ev)
	switch ev.Point {
	case workload.PointRenew:
		return p.paused.Wait(ctx, ev.Client)
	case workload.PointBeforeWrite:
		if !p.take() {
			return nil
		}
		defer p.done()
		f := &fault.ClientPause{Clients: p.paused, Client: ev.Client, Process: ev.Process}
		d := 2 * p.env.TTL
		since := p.seen.mark()
		start := p.env.Clock.Now()
		if _, err := fault.Inject(ctx, f); err != nil {
			return nil // the workload ignores At's errors; the client goes on unpaused
		}
		sleepCtx(ctx, d)
		fault.Heal(ctx, f)
		other := p.seen.has(ev.Client, ev.Key, since, false)
		recordWindow(p.env, start, p.env.Clock.Now(), landing(other), fmt.Sprintf("gc-pause: client %d (hold %d on %s) stopped for %v before its write; %s",
			ev.Client, ev.Hold, ev.Key, d, grantedNote(other, "pause")))
	}
	return nil
}

// grantedNote says whether another client was granted the struck key
// during the fault (what), e.g. "another client was granted the key
// during the pause".
func grantedNote(other bool, what string) string {
	if other {
		return "another client was granted the key during the " + what
	}
	return "no other client was granted the key during the " + what
}

// longCS is the nemesis of LongCS: a fault.SlowCS at the trigger's first
// PointInCS.
type longCS struct {
	onePerTrigger
	seen *cycles
}

// longCSScenario makes a critical section run 2×TTL, three times a run. A slow
// critical section lands when another client is granted the key
// meanwhile (a lock that renews, or checks its validity, grants nobody).
func longCSScenario() Scenario {
	return Scenario{Name: "long-cs", Kind: Client, OnReplicas: true, OnCluster: true,
		Faults:      []fault.Fault{&fault.SlowCS{}},
		Summary:     "a critical section runs 2×TTL (the client keeps running, renewal too), three times a run",
		KeepsLeases: true,
		New: func(env Env) Nemesis {
			return &longCS{onePerTrigger: onePerTrigger{env: env, times: triggers(env.Duration, pauses)}, seen: newCycles()}
		}}
}

// At slows the trigger's first critical section down.
func (s *longCS) At(ctx context.Context, ev workload.Event) error {
	s.seen.see(ev)
	if ev.Point != workload.PointInCS || !s.take() {
		return nil
	}
	defer s.done()
	since := s.seen.mark()
	start := s.env.Clock.Now()
	evidence, _ := fault.Inject(ctx, &fault.SlowCS{D: 2 * s.env.TTL})
	other := s.seen.has(ev.Client, ev.Key, since, false)
	recordWindow(s.env, start, s.env.Clock.Now(), landing(other), fmt.Sprintf("long-cs: client %d (hold %d on %s) %s; %s",
		ev.Client, ev.Hold, ev.Key, evidence, grantedNote(other, "critical section")))
	return nil
}

// crashBetween kills one client once at its strategy's crash point
// (impl.Info.CrashPoint: naive between SETNX and EXPIRE, leaving the key
// without a TTL) or, for a strategy that declares none, inside its
// critical section.
type crashBetween struct {
	onePerTrigger
}

// crashBetweenScenario crashes one client once, at the strategy's declared crash
// point or inside the CS. The crash always lands: the client dies while
// it holds the lock, or part of it.
func crashBetweenScenario() Scenario {
	return Scenario{Name: "crash-between", Kind: Client, OnReplicas: true,
		Faults:  []fault.Fault{&fault.ClientCrash{}},
		Summary: "one client dies at its strategy's declared crash point (naive: after SETNX and before EXPIRE), else its holder inside its critical section",
		New: func(env Env) Nemesis {
			return &crashBetween{onePerTrigger{env: env, times: triggers(env.Duration, 1)}}
		}}
}

// crashPoint is where crash-between kills a client of the strategy in.
func crashPoint(in impl.Info) workload.Point {
	if in.CrashPoint != "" {
		return workload.Point(in.CrashPoint)
	}
	return workload.PointInCS
}

// At crashes the trigger's first client at the crash point.
func (c *crashBetween) At(ctx context.Context, ev workload.Event) error {
	if ev.Point != crashPoint(c.env.Info) || !c.take() {
		return nil
	}
	evidence, _ := fault.Inject(ctx, &fault.ClientCrash{Event: ev})
	t := c.env.Clock.Now()
	recordWindow(c.env, t, t, history.Landed, "crash-between: "+evidence)
	return impl.ErrCrashed
}
