package workload

import (
	"sync"
	"sync/atomic"
	"time"
)

// Readiness is a run's readiness barrier: it closes once every client has
// made its first lock call (the call returned, whatever its outcome) or
// stopped before it could (it crashed, or the run ended). A nemesis times
// its faults from then (chaos.Env.Ready): a client slow to start, an
// adapter process that takes seconds to answer its first call, delays the
// fault schedule instead of missing it, and Run lets the clients go on for
// Config.Duration after it. Jepsen's generators start a test's nemesis
// schedule with its clients for the same reason. Safe for concurrent use.
type Readiness struct {
	done chan struct{}
	once sync.Once
	at   atomic.Int64 // history-clock ns when it closed
	wait atomic.Int64 // ns from the clients' start to then
}

// NewReadiness returns an open barrier.
func NewReadiness() *Readiness { return &Readiness{done: make(chan struct{})} }

// Done is closed when the barrier is.
func (r *Readiness) Done() <-chan struct{} { return r.done }

// At returns when the barrier closed, in ns on the run's history clock;
// ok is false while it is open.
func (r *Readiness) At() (ns int64, ok bool) {
	select {
	case <-r.done:
		return r.at.Load(), true
	default:
		return 0, false
	}
}

// Waited returns how long the clients ran before the barrier closed (0
// while it is open).
func (r *Readiness) Waited() time.Duration { return time.Duration(r.wait.Load()) }

// Close closes the barrier at history-clock time at (ns), waited after
// the clients started; later calls do nothing. Run closes its Env.Ready
// itself; a nemesis driven without a workload (a test) may close one.
func (r *Readiness) Close(at int64, waited time.Duration) {
	r.once.Do(func() {
		r.at.Store(at)
		r.wait.Store(int64(waited))
		close(r.done)
	})
}

// readyCount closes a Readiness when its last client is ready.
type readyCount struct {
	r     *Readiness
	left  atomic.Int64
	start time.Time
	now   func() int64
}

// ready marks one client ready; the caller does it once per client.
func (c *readyCount) ready() {
	if c.left.Add(-1) == 0 {
		c.r.Close(c.now(), time.Since(c.start))
	}
}
