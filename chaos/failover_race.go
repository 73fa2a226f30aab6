package chaos

import (
	"context"
	"sync"
	"time"

	"github.com/lockbench/lockbench/workload"
)

// race orders the struck client A (its grant lost at a failover) and the
// key's next holder B so that the lost lock becomes a lost update in every
// run, whatever the scheduling: A, held at its grant, goes on only once B
// has read the protected resource, and B, before its write, waits until A
// has read it too. Both then read the same value, so the second write
// overwrites the first (unless a usage policy stops A's write, e.g. the
// watchdog's Lost). Both stay inside their leases: A's wait ends at its cap
// at the latest, B's at capB. Safe for concurrent use.
type race struct {
	mu    sync.Mutex
	a, b  int    // A and B, -1 until known
	key   string // the struck key
	capA  time.Time
	capB  time.Duration
	bRead chan struct{} // closed when B has read
	aRead chan struct{} // closed when A has read
	bDone bool          // bRead is closed
	aDone bool          // aRead is closed
}

func newRace() *race {
	return &race{a: -1, b: -1, bRead: make(chan struct{}), aRead: make(chan struct{})}
}

// start names A (client) and its key; A waits until capA at the latest,
// B for A's read at most capB.
func (r *race) start(client int, key string, capA time.Time, capB time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.a, r.key, r.capA, r.capB = client, key, capA, capB
}

// at sees every client event: the first other client granted the key after
// start is B; A's and B's reads (PointInCS comes right after the read) are
// noted; B waits at PointBeforeWrite until A has read. It returns ctx's
// error if ctx ends while B waits.
func (r *race) at(ctx context.Context, ev workload.Event) error {
	r.mu.Lock()
	if r.a < 0 || ev.Key != r.key {
		r.mu.Unlock()
		return nil
	}
	switch {
	case ev.Point == workload.PointAcquired && ev.Client != r.a && r.b < 0:
		r.b = ev.Client
	case ev.Point == workload.PointInCS && r.b >= 0 && ev.Client == r.b && !r.bDone:
		r.bDone = true
		close(r.bRead)
	case ev.Point == workload.PointInCS && ev.Client == r.a && !r.aDone:
		r.aDone = true
		close(r.aRead)
	case ev.Point == workload.PointBeforeWrite && r.b >= 0 && ev.Client == r.b && !r.aDone:
		aRead, capB := r.aRead, r.capB
		r.mu.Unlock()
		t := time.NewTimer(capB)
		defer t.Stop()
		select {
		case <-aRead:
		case <-t.C:
		case <-ctx.Done():
			return ctx.Err()
		}
		return nil
	}
	r.mu.Unlock()
	return nil
}

// struck returns A, -1 until start named it.
func (r *race) struck() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.a
}

// waitOther holds A until B has read or A's cap passes (or ctx ends). It
// returns B and whether B had read.
func (r *race) waitOther(ctx context.Context) (int, bool) {
	r.mu.Lock()
	bRead, capA := r.bRead, r.capA
	r.mu.Unlock()
	t := time.NewTimer(time.Until(capA))
	defer t.Stop()
	select {
	case <-bRead:
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.b, true
	case <-t.C:
	case <-ctx.Done():
	}
	return -1, false
}
