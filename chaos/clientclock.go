package chaos

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/lockbench/lockbench/chaos/fault"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/adapterclient"
	"github.com/lockbench/lockbench/workload"
)

// NAClientClockStep is why client-clock-step does not apply to a lock
// inside lockbench's own process: its wall clock cannot be stepped alone,
// and Go would not read it anyway.
const NAClientClockStep = "the lock runs inside lockbench's Go process: Go reads its clocks through the vDSO, never libc, so the clock-offset preload cannot step them, and it counts leases on its monotonic clock; client-clock-step steps the wall clock of an adapter process whose programs read it through libc (exec:, e.g. a Python adapter)"

// clientClockApplies is client-clock-step's Applies: the strategy's
// clients must run in adapter processes whose wall clock the shim
// reaches (impl.Info.ClientClock), whatever server the lock lives on.
func clientClockApplies(in impl.Info) (bool, string) {
	switch {
	case in.ClientClock.Steppable:
		return true, ""
	case in.ClientClock.Why != "":
		return false, "the adapter's wall clock cannot be stepped: " + in.ClientClock.Why
	}
	return false, NAClientClockStep
}

// stepHold bounds how long client-clock-step keeps the struck holder in
// its critical section after the step: 2×TTL, time for its key to expire
// (at most a TTL after its grant, which came right before its read) and
// for another client to be granted the key and release it.
func stepHold(ttl time.Duration) time.Duration { return 2 * ttl }

// clientClockStepScenario steps the holder's adapter clock back by 2×TTL right
// after its read, three times a run, and keeps the holder until another
// client was granted and released the key: a lock whose lease the
// adapter counts on the wall clock still believes it holds, and writes
// over that owner. A step lands when another client was granted and
// released the key while the struck holder was kept; its window ends at
// the holder's next release (or when the run heals), so its note can say
// whether the adapter read its wall clock at the new offset by then.
func clientClockStepScenario() Scenario {
	return Scenario{Name: "client-clock-step", Kind: Clock,
		Faults:      []fault.Fault{&fault.ClientClockStep{}},
		Summary:     "right after the holder's read, the wall clock of its adapter process steps back 2×TTL (an LD_PRELOAD clock offset; its monotonic clock stays); the holder is kept until another client was granted and released the key (at most 2×TTL), then checks its lease as its policy says and writes; three times a run; adapters whose programs read their clock through libc only",
		Applies:     clientClockApplies,
		Setup:       func(impl.Info) Setup { return Setup{ClientClock: true} },
		KeepsLeases: true,
		New: func(env Env) Nemesis {
			return &clockSteps{onePerTrigger: onePerTrigger{env: env, times: triggers(env.Duration, jumpsPerRun)},
				seen: newCycles(), open: map[int]*openStep{}}
		}}
}

// clockSteps is the nemesis of ClientClockStep.
type clockSteps struct {
	onePerTrigger
	seen *cycles
	errs faultLog
	mu   sync.Mutex
	open map[int]*openStep // client → its step whose window is still open
}

// openStep is a step whose window closes at the struck client's release.
type openStep struct {
	client int
	hold   int64
	start  int64
	clock  adapterclient.ClockStepper
	offset time.Duration
	note   string
	other  bool
}

// At steps the holder's clock at the trigger's first PointInCS and keeps
// it there (see ClientClockStep); at the struck client's release it
// closes the step's window.
func (c *clockSteps) At(ctx context.Context, ev workload.Event) error {
	c.seen.see(ev)
	switch ev.Point {
	case workload.PointBeforeRelease, workload.PointReleased:
		c.close(ev.Client, ev.Hold)
		return nil
	case workload.PointInCS:
	default:
		return nil
	}
	clock, ok := ev.Process.(adapterclient.ClockStepper)
	if !ok || !c.take() {
		return nil
	}
	defer c.done()
	env := c.env
	since := c.seen.mark()
	start := env.Clock.Now()
	f := &fault.ClientClockStep{Clock: clock, Client: ev.Client, Process: ev.Process, Step: -2 * env.TTL}
	evidence, err := fault.Inject(ctx, f)
	if err != nil {
		c.errs.fail(err) // not injected: no window
		return nil
	}
	other := c.seen.wait(ctx, ev.Client, ev.Key, since, true, stepHold(env.TTL))
	outcome := "another client was granted and released the key"
	if !other {
		outcome = fmt.Sprintf("no other client was granted and released the key within %v", stepHold(env.TTL))
	}
	c.mu.Lock()
	c.open[ev.Client] = &openStep{client: ev.Client, hold: ev.Hold, start: start, clock: clock, offset: f.Offset, other: other,
		note: fmt.Sprintf("client-clock-step: %s; client %d (hold %d on %s) kept in its critical section: %s", evidence, ev.Client, ev.Hold, ev.Key, outcome)}
	c.mu.Unlock()
	return nil
}

// close records the window of client's open step if it struck hold.
func (c *clockSteps) close(client int, hold int64) {
	c.mu.Lock()
	s := c.open[client]
	if s == nil || s.hold != hold {
		c.mu.Unlock()
		return
	}
	delete(c.open, client)
	c.mu.Unlock()
	c.record(s, "its release")
}

// record records s's window, ending now, with whether the adapter read
// its wall clock at the new offset by then (when: "its release").
func (c *clockSteps) record(s *openStep, when string) {
	seen := clockSeenNote(s.clock, s.offset, when)
	recordWindow(c.env, s.start, c.env.Clock.Now(), landing(s.other), s.note+"; "+seen)
}

// Heal closes the windows of steps whose client never released again (it
// crashed, or the run ended) and returns the errors of steps that could
// not be injected. Clock offsets stay (see fault.ClientClockStep).
func (c *clockSteps) Heal(ctx context.Context) error {
	c.mu.Lock()
	open := c.open
	c.open = map[int]*openStep{}
	c.mu.Unlock()
	for _, s := range open {
		c.record(s, "the end of the run")
	}
	return errors.Join(c.errs.err(), healAll(ctx, c.env))
}

// clockSeenNote says whether the stepped adapter process read its wall
// clock at offset (the shim's ".seen" file) by when ("its release").
func clockSeenNote(clock adapterclient.ClockStepper, offset time.Duration, when string) string {
	if d, ok := clock.ClockSeen(); ok && d == offset {
		return fmt.Sprintf("by %s the adapter had read its wall clock at offset %v (the clock shim applied it)", when, d)
	}
	return "by " + when + " the adapter had not read its wall clock through libc since the step (its lock keeps no time on it, or reads it without libc)"
}
