package fault

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/lockbench/lockbench/cluster"
	"github.com/lockbench/lockbench/impl/adapterclient"
	"github.com/lockbench/lockbench/workload"
)

// ClientPause stops every goroutine of one client, its renewal too: a
// stop-the-world GC pause or a process freeze (Kleppmann 2016). Inject
// marks the client paused in clients, so its renewal blocks at
// impl.PointRenew (PausedClients.wait) until Heal; the client's own
// goroutine is stopped by the scenario, which holds it at the lock event
// where it injected the pause. A client whose lock runs in a process of
// its own (exec: adapters) has that process stopped too (SIGSTOP until
// Heal), every thread of it, its renewal threads included. Evidence:
// "client 3 stopped, renewal too".
type ClientPause struct {
	Clients *PausedClients
	Client  int
	// process is the client's own process (workload.Event.Process); nil: none.
	Process adapterclient.ClientProcess
}

// Name is the primitive's name, "client-pause" (Fault.Name).
func (*ClientPause) Name() string { return "client-pause" }

// Needs lists the backend features Inject and Heal use (Fault.Needs).
func (*ClientPause) Needs() []cluster.Feature { return nil }

// Inject marks the client paused; it must not be paused already.
func (p *ClientPause) Inject(context.Context) (string, error) {
	if !p.Clients.pause(p.Client) {
		return "", fmt.Errorf("client %d is paused already", p.Client)
	}
	if p.Process != nil {
		if err := p.Process.Pause(); err != nil {
			p.Clients.resume(p.Client)
			return "", fmt.Errorf("client %d: %w", p.Client, err)
		}
		return fmt.Sprintf("client %d stopped, renewal too, its adapter process with it (SIGSTOP)%s", p.Client, sharedNote(p.Process, "stop")), nil
	}
	return fmt.Sprintf("client %d stopped, renewal too", p.Client), nil
}

// Heal lets the client's renewal go on if it is paused.
func (p *ClientPause) Heal(context.Context) (string, error) {
	if p.Clients == nil || !p.Clients.resume(p.Client) {
		return "", nil
	}
	if p.Process != nil {
		if err := p.Process.Resume(); err != nil {
			return "", fmt.Errorf("client %d: %w", p.Client, err)
		}
	}
	return fmt.Sprintf("client %d resumed", p.Client), nil
}

// PausedClients is the set of clients a run's client pauses stopped.
// Safe for concurrent use.
type PausedClients struct {
	mu     sync.Mutex
	paused map[int]chan struct{} // client → closed when its pause ends
}

// NewPausedClients returns an empty set of paused clients, for one run.
func NewPausedClients() *PausedClients {
	return &PausedClients{paused: map[int]chan struct{}{}}
}

// pause marks client paused; false if it is already.
func (c *PausedClients) pause(client int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.paused[client] != nil {
		return false
	}
	c.paused[client] = make(chan struct{})
	return true
}

// resume ends client's pause; false if it was not paused.
func (c *PausedClients) resume(client int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := c.paused[client]
	if ch == nil {
		return false
	}
	delete(c.paused, client)
	close(ch)
	return true
}

// wait blocks while client is paused; it returns ctx's error if ctx ends
// first.
func (c *PausedClients) Wait(ctx context.Context, client int) error {
	c.mu.Lock()
	ch := c.paused[client]
	c.mu.Unlock()
	if ch == nil {
		return nil
	}
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// SlowCS makes one critical section longer by d: Inject, called from the
// client's own goroutine at its lock event, sleeps d (less if ctx ends
// first). The client keeps running meanwhile: its renewal goes on.
// Evidence: "critical section +100ms".
type SlowCS struct {
	D time.Duration
}

// Name is the primitive's name, "slow-cs" (Fault.Name).
func (*SlowCS) Name() string { return "slow-cs" }

// Needs lists the backend features Inject and Heal use (Fault.Needs).
func (*SlowCS) Needs() []cluster.Feature { return nil }

// Inject sleeps d in the calling client.
func (s *SlowCS) Inject(ctx context.Context) (string, error) {
	sleepCtx(ctx, s.D)
	return fmt.Sprintf("critical section +%v", s.D), nil
}

// Heal has nothing to undo: the critical section went on after Inject.
func (*SlowCS) Heal(context.Context) (string, error) { return "", nil }

// ClientCrash kills a client at a lock event: the scenario that injects
// it returns impl.ErrCrashed from workload.Faults.At, and the client dies
// there (it records a crash operation and makes no further call). Inject
// only says so. Evidence: "client 3 dies at after-setnx on lb:k0".
type ClientCrash struct {
	Event workload.Event
}

// Name is the primitive's name, "client-crash" (Fault.Name).
func (*ClientCrash) Name() string { return "client-crash" }

// Needs lists the backend features Inject and Heal use (Fault.Needs).
func (*ClientCrash) Needs() []cluster.Feature { return nil }

// Inject returns the evidence; the crash is the caller's impl.ErrCrashed.
func (c *ClientCrash) Inject(context.Context) (string, error) {
	return fmt.Sprintf("client %d dies at %s on %s%s", c.Event.Client, c.Event.Point, c.Event.Key, sharedNote(c.Event.Process, "die")), nil
}

// sharedNote says, for a client whose adapter process serves other
// logical clients too (protocol 2's threads), that they all verb with it;
// "" otherwise.
func sharedNote(p adapterclient.ClientProcess, verb string) string {
	if p == nil {
		return ""
	}
	if n := adapterclient.SharedBy(p); n > 1 {
		return fmt.Sprintf("; its adapter process serves %d logical clients: all of them %s with it", n, verb)
	}
	return ""
}

// Heal has nothing to undo: a crashed client stays dead for the run.
func (*ClientCrash) Heal(context.Context) (string, error) { return "", nil }
