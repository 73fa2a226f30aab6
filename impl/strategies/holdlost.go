package strategies

import "sync"

// holdLost is one lease's Lost for a lock whose loss signal belongs to its
// session, shared by every lease the session granted (etcd's
// concurrency.Session.Done, a ZooKeeper session's expiry): a lease must
// not be said lost once its holder released it, yet the session, which
// lives on for the next Acquire, may expire a moment later (a leader
// kill, a cut link) and close its signal for every lease it ever granted.
// The workload watches a lease's Lost for a TTL after its release, and the
// lost check counts a signal after an ok release as a violation
// (checker.Lost, docs/verdicts.md); it was the strategies' shared channel
// that fired it (etcd-fenced under leader-kill: 3 lost signals for
// released leases in a run).
//
// ch closes when the session's signal closes before end was called, and
// never after: end runs at the start of the lease's Release, under the
// same mutex the forwarding takes, so a signal seen after it is dropped.
type holdLost struct {
	mu    sync.Mutex
	ch    chan struct{}
	stop  chan struct{} // closed by end
	ended bool
}

// newHoldLost returns the Lost of a lease granted by a session whose loss
// signal is session, forwarded by a goroutine that ends when session
// closes, when end is called, or when life closes (the Locker's Close).
func newHoldLost(session, life <-chan struct{}) *holdLost {
	h := &holdLost{ch: make(chan struct{}), stop: make(chan struct{})}
	go func() {
		select {
		case <-session:
			h.mu.Lock()
			if !h.ended {
				close(h.ch)
				h.ended = true
			}
			h.mu.Unlock()
		case <-h.stop:
		case <-life:
		}
	}()
	return h
}

// end stops the forwarding: the lease's Lost never closes after it
// returns (it stays closed if it closed before). Safe to call more than
// once and concurrently.
func (h *holdLost) end() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.ended {
		h.ended = true
		close(h.stop)
	}
}
