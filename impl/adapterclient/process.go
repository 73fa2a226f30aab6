package adapterclient

import (
	"time"

	"github.com/lockbench/lockbench/impl"
)

// ClientProcess is implemented by a Locker whose client runs in a process
// of its own (exec: strategies, one adapter process per client), so that a
// fault acts on that process and a pause or crash is real: every thread
// of the client, its renewals included, stops or dies with it. Faults
// call these methods beside the in-process ways (blocking at a Hook,
// returning ErrCrashed).
type ClientProcess interface {
	// Pause stops the process (SIGSTOP to its process group) until
	// Resume. Time paused does not count against a running call's deadline.
	Pause() error
	// Resume continues a paused process (SIGCONT).
	Resume() error
	// Kill kills the process (SIGKILL to its process group) as a client
	// crash and returns once it is gone; the Locker makes no further call
	// (they return ErrCrashed).
	Kill() error
}

// ClockStepper is implemented by a ClientProcess started with the
// clock-offset preload (WithAdapterClock): a fault can step the wall
// clock that process reads (CLOCK_REALTIME and CLOCK_REALTIME_COARSE,
// gettimeofday, time; its monotonic clock is never moved). With protocol
// 2's threads, every logical client of the process sees the step.
type ClockStepper interface {
	// StepClock moves the process's wall clock by step (negative: back)
	// from the offset now in force, from its next read on, and returns the
	// new offset from real time and its evidence: the offset file read
	// back and the preload mapped into the process, e.g. "pid 4242 wall
	// clock offset -400ms (offset file reads -400000000 ns; clock shim
	// mapped)". Errors: the process was started without the preload, it
	// is not mapped into the process (a statically linked program), or
	// the offset file could not be written or read back the offset.
	StepClock(step time.Duration) (offset time.Duration, evidence string, err error)
	// ClockSeen returns the offset the process last applied to a read of
	// its wall clock after an offset change (clockshim.Seen); ok is
	// false when it has applied none (it reads no wall clock, or not
	// through libc).
	ClockSeen() (d time.Duration, ok bool)
}

// RunScoped is implemented by a Strategy whose Lockers of one run share
// state: an exec strategy whose adapter serves several logical clients per
// process (protocol 2's threads). The workload calls ForRun once per run
// and makes that run's Lockers with the strategy it returns.
type RunScoped interface {
	ForRun() impl.Strategy
}

// ForRun returns st.ForRun() when st is RunScoped, else st.
func ForRun(st impl.Strategy) impl.Strategy {
	if r, ok := st.(RunScoped); ok {
		return r.ForRun()
	}
	return st
}

// SharedProcess is implemented by a ClientProcess that may serve several
// logical clients (an adapter declaring threads): a pause or crash of one
// of them stops or kills every one. Shared returns how many it serves now.
type SharedProcess interface {
	Shared() int
}

// SharedBy returns how many logical clients p's process serves: 1 unless
// p is a SharedProcess serving more.
func SharedBy(p ClientProcess) int {
	if s, ok := p.(SharedProcess); ok {
		return max(1, s.Shared())
	}
	return 1
}
