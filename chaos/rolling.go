package chaos

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/lockbench/lockbench/chaos/fault"
	"github.com/lockbench/lockbench/cluster"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/workload"
)

// rollingScenarios are the faults that strike several nodes one after
// another during one hold: a rolling restart under a renewed lease.
func rollingScenarios() []Scenario {
	return []Scenario{rollingRestartScenario()}
}

// Timing of rolling-restart. Each strike restarts three nodes, each
// followed by the holder's next renewal (at most rollingRenewWait) and
// rollingSettle for its answer, then waits for another grant (at most
// 2×TTL): about 3.5 TTL at a 200 ms TTL, longer on a loaded machine
// (restarts took up to 2 s at a load average of 30, and a starved holder
// may lose its lease before the last restart: that strike shows nothing).
// The three strikes fall at 12%, 28.5% and 45% of the run, so
// rollingMinDuration (10 TTL) leaves the last one the rest.
const (
	rollingStrikes     = 3
	rollingTTL         = 200 * time.Millisecond
	rollingMinDuration = 2 * time.Second
	rollingWhy         = "three kills and restarts (10-30 ms each), each followed by the holder's next renewal (every TTL/3) and its answer, must fit in the holder's renewed lease"
)

// rollingRenewWait bounds the wait for the holder's next renewal after a
// restart: a renewal comes every TTL/3, so TTL/2 is one and a margin.
func rollingRenewWait(ttl time.Duration) time.Duration { return ttl / 2 }

// rollingSettle is how long after a renewal starts its answer is taken to
// be in: a quorum lock's per-node timeout (TTL/10) and a margin.
func rollingSettle(ttl time.Duration) time.Duration { return ttl/8 + 5*time.Millisecond }

// naRolling is why rolling-restart does not apply to etcd and ZooKeeper.
const naRolling = "restarts Redis nodes one after another, each empty (no persistence); etcd and ZooKeeper members keep their log on disk and rejoin their quorum, and leader-kill restarts their leader"

// rollingRestartScenario restarts the nodes a renewed hold depends on one after
// another while the holder keeps renewing, three times a run (an operator's
// rolling restart during a long hold). Quorum locks: a majority (3 of 5,
// in a seeded order) restart empty, each after the holder's renewal saw
// the previous one, so the holder's lease is left on a minority only;
// single-node locks run on a primary with two replicas, which restart
// first, then the primary, empty, and the replicas copy its empty
// keyspace. The other clients' acquires of the key wait meanwhile and
// until the holder's renewal after the last restart has answered: a lock
// that checks its renewal's answer says lost there; one that counts a
// minority as renewed, or a missing key, runs on. Then the others are let
// in, and the holder is kept until another client is granted the key (at
// most 2×TTL) and TTL/10 more before its write. A strike lands when
// another client is granted the key meanwhile.
func rollingRestartScenario() Scenario {
	return Scenario{Name: "rolling-restart", Kind: Process,
		Faults:  []fault.Fault{&fault.RollingRestart{}},
		Summary: "during a renewed hold the lock's nodes restart one after another, empty, each after the holder's next renewal (quorum: 3 of 5 in a seeded order; one node: its two replicas, then the primary); others' acquires wait until the renewal after the last restart answered, then the holder runs on until another client is granted (at most 2×TTL) and TTL/10 more and writes; TTL ≥ 200 ms, at least 10 TTL; three times a run",
		Applies: redisOnly(naRolling, func(in impl.Info) (bool, string) {
			if !in.Claims.Renewal {
				return false, "strikes a renewed hold (the holder is kept through three restarts, each a renewal period apart, longer than a lease nothing renews); node-restart covers one restart under a fresh lease"
			}
			return true, ""
		}),
		Setup: func(in impl.Info) Setup {
			s := Setup{Persistence: cluster.PersistenceNone, TTL: rollingTTL, TTLWhy: rollingWhy, MinDuration: rollingMinDuration}
			if !quorum(in) {
				s.Topology = cluster.Topology{Kind: cluster.Replicated, Replicas: 2}
			}
			return s
		},
		New: func(env Env) Nemesis {
			return &rollingRestarts{onePerTrigger: onePerTrigger{env: env, times: triggers(env.Duration*6/10, rollingStrikes)},
				seen: newCycles(), rng: newRand(env.Seed), holder: -1, renewed: make(chan struct{}, 1)}
		}}
}

// rollingRestarts is the nemesis of RollingRestart.
type rollingRestarts struct {
	onePerTrigger
	faultLog
	seen *cycles
	rng  *rand.Rand

	mu      sync.Mutex
	key     string        // the struck key while others are held back
	holder  int           // the struck client (-1: none)
	hold    int64         // the struck hold
	gate    chan struct{} // closed when the others may acquire the key again
	renewed chan struct{} // the holder's renewals of the struck hold (PointRenew)
}

// Run does nothing: the faults act at lock events.
func (r *rollingRestarts) Run(context.Context) error { return nil }

// Heal restarts any node still down and returns the errors of the run's
// restarts.
func (r *rollingRestarts) Heal(ctx context.Context) error {
	return errors.Join(r.err(), healAll(ctx, r.env))
}

// order returns the nodes of one strike in restart order: a seeded
// majority of a quorum lock's nodes, or a replicated topology's replicas
// and then its primary.
func (r *rollingRestarts) order() []*cluster.Node {
	nodes := r.env.Cluster.Nodes()
	if n := nodeCount(r.env); quorum(r.env.Info) && n > 1 {
		var out []*cluster.Node
		for _, i := range r.rng.Perm(n)[:n/2+1] {
			out = append(out, nodes[i])
		}
		return out
	}
	// A replicated topology's nodes are its primary, then its replicas.
	return append(slices.Clone(nodes[1:]), nodes[0])
}

// At holds the others back from the struck key, passes the holder's
// renewals to the strike, and strikes at the trigger's first PointInCS.
func (r *rollingRestarts) At(ctx context.Context, ev workload.Event) error {
	r.seen.see(ev)
	r.mu.Lock()
	key, holder, hold, gate := r.key, r.holder, r.hold, r.gate
	r.mu.Unlock()
	switch {
	case ev.Point == workload.PointRenew && ev.Client == holder && ev.Hold == hold:
		select {
		case r.renewed <- struct{}{}:
		default:
		}
		return nil
	case ev.Point == workload.PointBeforeAcquire && ev.Key == key && ev.Client != holder && gate != nil:
		select {
		case <-gate:
		case <-ctx.Done():
		}
		return nil
	case ev.Point != workload.PointInCS || ev.Lease == nil || !r.take():
		return nil
	}
	defer r.done()
	r.strike(ctx, ev)
	return nil
}

// strike runs one rolling restart under ev's hold and records its window.
func (r *rollingRestarts) strike(ctx context.Context, ev workload.Event) {
	env := r.env
	since := r.seen.mark()
	start := env.Clock.Now()
	gate := make(chan struct{})
	r.mu.Lock()
	r.key, r.holder, r.hold, r.gate = ev.Key, ev.Client, ev.Hold, gate
	r.mu.Unlock()
	open := func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.gate == gate {
			close(gate)
			r.key, r.holder, r.hold, r.gate = "", -1, 0, nil
		}
	}
	defer open()
	nodes := r.order()
	f := &fault.RollingRestart{Nodes: nodes, Persistence: cluster.PersistenceNone, Key: ev.Key, Lease: ev.Lease, TTL: r.env.TTL,
		Between: func(ctx context.Context, i int) string { return r.awaitRenewal(ctx, ev, i == len(nodes)-1) }}
	evidence, err := fault.Inject(ctx, f)
	if err != nil {
		r.fail(err)
		recordWindow(env, start, env.Clock.Now(), "", fmt.Sprintf("rolling-restart: client %d (hold %d on %s): %s: %v", ev.Client, ev.Hold, ev.Key, evidence, err))
		return
	}
	lost := isClosed(ev.Lease.Lost)
	open()
	other := r.seen.wait(ctx, ev.Client, ev.Key, since, false, 2*env.TTL)
	if other {
		sleepCtx(ctx, env.TTL/10) // the new owner's critical section writes first
	}
	state := "the holder's lease was not lost (no lost signal)"
	if lost {
		state = "the holder's lease was lost (lost signal) before the others were let in"
	}
	recordWindow(env, start, env.Clock.Now(), landing(other), fmt.Sprintf("rolling-restart: client %d (hold %d on %s): %s; %s; %s",
		ev.Client, ev.Hold, ev.Key, evidence, state, grantedNote(other, "rolling restart")))
}

// awaitRenewal waits for the holder's next renewal of ev's hold (at most
// rollingRenewWait: a lock that renews on its own, unseen by lockbench,
// such as an adapter that renews without extend requests, has renewed
// within it), then rollingSettle for its answer; after the last
// restart it waits for the lease's lost signal or the renewal after that
// instead (at most rollingRenewWait more), so that the answer of a
// renewal that saw the last restart is in before the others are let in.
// It returns its note.
func (r *rollingRestarts) awaitRenewal(ctx context.Context, ev workload.Event, last bool) string {
	ttl := r.env.TTL
	select { // a renewal sent before the restart does not count
	case <-r.renewed:
	default:
	}
	t0 := time.Now()
	if !r.waitRenewal(ctx, ev.Lease, rollingRenewWait(ttl)) {
		if isClosed(ev.Lease.Lost) {
			return fmt.Sprintf("the holder's lease was lost %v later", time.Since(t0).Round(time.Millisecond))
		}
		return fmt.Sprintf("no renewal of the hold within %v", rollingRenewWait(ttl))
	}
	seen := time.Since(t0).Round(time.Millisecond)
	if !last {
		sleepCtx(ctx, rollingSettle(ttl))
		return fmt.Sprintf("the holder's renewal %v later", seen)
	}
	t1 := time.Now()
	r.waitRenewal(ctx, ev.Lease, rollingRenewWait(ttl))
	if isClosed(ev.Lease.Lost) {
		return fmt.Sprintf("the holder's renewal %v later, and its lost signal %v after it", seen, time.Since(t1).Round(time.Millisecond))
	}
	return fmt.Sprintf("the holder's renewal %v later, and no lost signal in the %v after it", seen, time.Since(t1).Round(time.Millisecond))
}

// waitRenewal waits for the holder's next renewal, its lease's lost
// signal, timeout or ctx's end; it reports whether a renewal came.
func (r *rollingRestarts) waitRenewal(ctx context.Context, l *impl.Lease, timeout time.Duration) bool {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-r.renewed:
		return true
	case <-l.Lost:
	case <-t.C:
	case <-ctx.Done():
	}
	return false
}

// isClosed reports whether ch is closed (false for nil).
func isClosed(ch <-chan struct{}) bool {
	if ch == nil {
		return false
	}
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
