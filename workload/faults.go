package workload

import (
	"context"

	"github.com/lockbench/lockbench/impl"
)

// Point names a place in a client's loop where Faults.At is called.
type Point string

// Points of the client loop, in the order a hold passes them. The strategy's
// own fault points (impl.PointAfterSetNX, impl.PointRenew) reach Faults.At
// too, converted to Point.
const (
	// PointAcquired: right after an outermost acquire succeeded, before the CS starts.
	PointAcquired Point = "acquired"
	// PointInCS: after the resource read, before the CS wait.
	PointInCS Point = "in-cs"
	// PointBeforeWrite: after the usage-policy check (validity, Lost) and
	// before the resource write: where a GC-like pause hurts most.
	PointBeforeWrite Point = "before-write"
	// PointReleased: after the outermost release returned (any result).
	PointReleased Point = "released"
	// PointAfterSetNX is impl.PointAfterSetNX (naive only).
	PointAfterSetNX Point = Point(impl.PointAfterSetNX)
	// PointRenew is impl.PointRenew (watchdog, before each renewal; runs on
	// the renewal goroutine).
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
	// Process is the client's own process when its Locker runs in one
	// (exec: strategies), for faults to pause or kill; nil otherwise.
	Process impl.ClientProcess
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
