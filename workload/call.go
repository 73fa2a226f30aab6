package workload

import (
	"context"
	"sync"

	"github.com/lockbench/lockbench/impl"
)

// Call is a lock call a client is about to make, as Faults.At sees it
// (Event.Call) at PointBeforeAcquire, PointBeforeRelease and
// PointBeforeExtend: a nemesis may make it cancellable there and cancel it
// in flight later (the cancel fault). A client reuses one Call for all its
// calls (one more for the extends lockbench drives on its renewal
// goroutine); each call is a new generation, so a canceller kept past its
// call does nothing.
type Call struct {
	mu     sync.Mutex
	gen    uint64
	armed  bool                    // Cancellable was called for this generation
	early  bool                    // Cancel came before the call started
	cancel context.CancelCauseFunc // the running armed call's, nil otherwise
	hit    bool                    // Cancel came while the call ran
}

// Cancellable makes the call about to start cancellable in flight and
// returns its canceller. Call it inside Faults.At (the call starts when
// At returns); the canceller may be used from any goroutine, at any time:
// cancelling before the call started cancels it as it starts, after it
// returned does nothing. The call's ctx then reports Done with
// context.Cause impl.ErrCancelled: an in-process strategy stops where it
// watches ctx, an adapter is sent a cancel request (or lockbench gives up
// its wait). Calls nobody made cancellable run without the machinery.
func (c *Call) Cancellable() impl.Canceller {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.armed = true
	return canceller{c: c, gen: c.gen}
}

// canceller cancels one generation of a Call.
type canceller struct {
	c   *Call
	gen uint64
}

// Cancel cancels the call of its generation, if it has not returned.
func (k canceller) Cancel() {
	c := k.c
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.gen != k.gen:
	case c.cancel != nil:
		c.hit = true
		c.cancel(impl.ErrCancelled)
	default:
		c.early = true
	}
}

// next starts a new generation: the call about to be offered to Faults.
func (c *Call) next() *Call {
	c.mu.Lock()
	c.gen++
	c.armed, c.early, c.cancel, c.hit = false, false, nil, false
	c.mu.Unlock()
	return c
}

// start returns the context the call runs under: ctx itself unless a
// nemesis made the call cancellable, then a child of ctx it can cancel
// (already cancelled when Cancel came first).
func (c *Call) start(ctx context.Context) context.Context {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.armed {
		return ctx
	}
	cctx, cancel := context.WithCancelCause(ctx)
	c.cancel = cancel
	if c.early {
		c.hit = true
		cancel(impl.ErrCancelled)
	}
	return cctx
}

// finish ends the call's generation (later cancels do nothing) and
// reports whether it was cancelled while it ran.
func (c *Call) finish() (cancelled bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cancel != nil {
		c.cancel(nil) // releases the context
	}
	hit := c.hit
	c.gen++
	c.armed, c.early, c.cancel, c.hit = false, false, nil, false
	return hit
}
