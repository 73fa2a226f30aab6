package workload

import (
	"context"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/adapterclient"
)

// Point names a place in a client's loop where Faults.At is called.
type Point string

// Points of the client loop, in the order a hold passes them. The strategy's
// own fault points (impl.PointAfterSetNX, impl.PointRenew) reach Faults.At
// too, converted to Point.
const (
	// PointBeforeAcquire: right before each acquire call (every attempt,
	// nested ones too: Event.Depth says which), after the retry back-off.
	// A nemesis may arm a fault on the client's links here (a lost reply)
	// or crash the client before it calls. Event.Lease is the outermost
	// lease for a nested acquire, nil otherwise.
	PointBeforeAcquire Point = "before-acquire"
	// PointAcquired: right after an outermost acquire succeeded, before the CS starts.
	PointAcquired Point = "acquired"
	// PointInCS: after the resource read, before the CS wait.
	PointInCS Point = "in-cs"
	// PointBeforeWrite: after the usage-policy check (validity, Lost) and
	// before the resource write: where a GC-like pause hurts most.
	PointBeforeWrite Point = "before-write"
	// PointBeforeRelease: right before each release call (nested ones
	// too: Event.Depth says which); Event.Lease is the lease released.
	PointBeforeRelease Point = "before-release"
	// PointReleased: after the outermost release returned (any result).
	PointReleased Point = "released"
	// PointBeforeExtend (impl.PointExtend): right before each extend
	// lockbench itself sends an adapter that serves extend, after
	// PointRenew, on the renewal goroutine; Event.Lease is the lease
	// extended, Event.Call the extend. Renewals a strategy makes on its own
	// (watchdog) reach Faults at PointRenew only.
	PointBeforeExtend Point = Point(impl.PointExtend)
	// PointAfterSetNX is impl.PointAfterSetNX (naive only).
	PointAfterSetNX Point = Point(impl.PointAfterSetNX)
	// PointRenew is impl.PointRenew (before each renewal a strategy makes
	// on its own: watchdog, redislock's refresh, an adapter's extend
	// requests; runs on the renewal goroutine). Event.Hold and Event.Lease
	// are the hold being renewed (0 and nil if it ended meanwhile).
	PointRenew Point = Point(impl.PointRenew)
)

// Event is what a client tells Faults at a point.
type Event struct {
	// Client is the logical client number.
	Client int
	// Point is where the client is.
	Point Point
	// Key is the key being acquired or held ("" when unknown).
	Key string
	// Hold is the hold id (0 before the acquire returned).
	Hold int64
	// Lease is the current lease (nil before the acquire returned).
	Lease *impl.Lease
	// Depth is the reentrancy depth of the acquire or release about to be
	// called at PointBeforeAcquire and PointBeforeRelease (1: outermost);
	// 0 at every other point.
	Depth int
	// Process is the client's own process when its Locker runs in one
	// (exec: strategies), for faults to pause or kill; nil otherwise.
	Process adapterclient.ClientProcess
	// Call is the lock call about to be made at PointBeforeAcquire,
	// PointBeforeRelease and PointBeforeExtend, which a nemesis may make
	// cancellable (Call.Cancellable) to cancel it in flight; nil at every
	// other point.
	Call *Call
}

// Faults is the client-side nemesis: it is called at every Point of every
// client and may act there. At returns nil to continue, may block (a client
// pause; it must return when ctx ends), or returns impl.ErrCrashed to make
// the client die at that point: the client records a crash operation,
// kills its process (Event.Process) if it has one and makes no further
// call. At is called concurrently from all clients.
type Faults interface {
	At(ctx context.Context, ev Event) error
}

// NoFaults is a Faults that never acts.
type NoFaults struct{}

// At returns nil.
func (NoFaults) At(context.Context, Event) error { return nil }
