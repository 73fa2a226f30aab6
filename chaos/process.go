package chaos

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/lockbench/lockbench/chaos/fault"
	"github.com/lockbench/lockbench/chaos/fault/link"
	"github.com/lockbench/lockbench/cluster"
	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/workload"
)

// processScenarios are the Redis process faults: node kills, restarts
// (immediate, delayed, AOF), pauses, Redlock minority and majority down.
func processScenarios() []Scenario {
	return []Scenario{nodeRestartScenario(), nodeRestartDelayedScenario(), nodeRestartAOFScenario(), nodePauseScenario(), redlockMinorityDownScenario(), redlockMajorityDownScenario(), heldKeyLossScenario(), heldKeyRetakenScenario()}
}

// strikes is how many times a run's restart or pause hits a held lock,
// spread over the run by triggers.
const strikes = 2

// The bare-quorum layout of the restart scenarios for quorum strategies
// (Kleppmann 2016, "How to do distributed locking"; the redis.io distlock
// page's section on persistence): client A (0) is cut off from nodes 4-5,
// so it can only win with nodes 1-3; client B (1) is cut off from nodes 1-2,
// so it can only win with nodes 3-5; node 3, in both quorums, is struck.
// The layout is symmetric, so either client's grant is struck: with two
// clients one often re-acquires right after its own release, and waiting
// for A's grant alone could starve the scenario.
const (
	clientA    = 0
	clientB    = 1
	sharedNode = 2 // index of node 3
)

var (
	cutFromA = []int{3, 4} // nodes 4-5
	cutFromB = []int{0, 1} // nodes 1-2
)

// Timing of the restart scenarios. A kill and restart takes 10-30 ms and
// the next grant comes after the other clients' retry back-off (up to TTL/5),
// which must fit in the TTL/2 the struck client is kept: with a 50 ms TTL it
// does not, reliably, so these runs use restartTTL, and restartMinDuration
// leaves room for two strikes with a delayed restart (1.2×TTL) each.
const (
	restartTTL         = 200 * time.Millisecond
	restartMinDuration = 600 * time.Millisecond
	restartWhy         = "a kill and restart (10-30 ms) and the other clients' retry back-off must fit in the TTL/2 the struck holder is kept"
)

// restartSetup is the Setup of the restart scenarios: TTL restartTTL and at
// least restartMinDuration; for quorum strategies two clients on per-link
// proxies (the bare-quorum layout), else the strategy's default topology;
// persistence p.
func restartSetup(p cluster.Persistence) func(in impl.Info) Setup {
	return func(in impl.Info) Setup {
		s := Setup{Persistence: p, TTL: restartTTL, TTLWhy: restartWhy, MinDuration: restartMinDuration}
		if quorum(in) {
			s.Proxies, s.Clients = true, 2
		}
		return s
	}
}

// nodeRestartScenario kills the node holding a fresh lock and restarts it at once
// without persistence: the lock is gone while its owner still holds a valid
// lease. For quorum strategies the struck node is node 3 of a bare quorum:
// A holds nodes 1-3 and B, cut off from nodes 1-2, then wins nodes 3-5, or
// the other way round (Kleppmann 2016; the redis.io distlock page's own
// warning). A strike lands when another client is granted the key while
// the holder the fault hit is still held in its critical section (the
// node-restart family and NodePause alike): under a lock that survives
// the fault nobody is, and every strike misses.
func nodeRestartScenario() Scenario {
	return Scenario{Name: "node-restart", Kind: Process,
		Faults:  []fault.Fault{&fault.NodeRestart{}, &link.Cut{}},
		Summary: "at a fresh grant the lock's node is SIGKILLed and restarted at once, empty (no persistence); the holder is kept until another client is granted (≤ TTL/2); Redlock: A holds the bare quorum n1-n3, n3 restarts, B (cut off from n1-n2) takes n3-n5 (or B and A swapped); TTL ≥ 200 ms; twice a run",
		Applies: redisOnly(naRestart, nil),
		Setup:   restartSetup(cluster.PersistenceNone),
		New:     func(env Env) Nemesis { return newNodeRestart(env, "node-restart", false, cluster.PersistenceNone) }}
}

// nodeRestartDelayedScenario is NodeRestart with the restart delayed past the TTL
// (1.2×TTL after the kill): the Redlock spec's fix for restarts without
// persistence ("delayed restarts", redis.io distlock page).
func nodeRestartDelayedScenario() Scenario {
	return Scenario{Name: "node-restart-delayed", Kind: Process,
		Faults:  []fault.Fault{&fault.NodeRestart{}, &link.Cut{}},
		Summary: "as node-restart, but the killed node stays down 1.2×TTL before it restarts empty (the distlock page's delayed restart); twice a run",
		Applies: redisOnly(naRestart, nil),
		Setup: func(in impl.Info) Setup {
			// The run is longer by the time the node is down, in which
			// Redlock's bare-quorum clients are refused: the same share
			// of the run has a node up as in node-restart.
			s := restartSetup(cluster.PersistenceNone)(in)
			s.MinDuration += strikes * restartDelay(restartTTL)
			return s
		},
		New: func(env Env) Nemesis {
			return newNodeRestart(env, "node-restart-delayed", true, cluster.PersistenceNone)
		}}
}

// nodeRestartAOFScenario is NodeRestart on nodes with AOF and appendfsync always:
// the restarted node reloads the lock key with its absolute expiry.
func nodeRestartAOFScenario() Scenario {
	return Scenario{Name: "node-restart-aof", Kind: Process,
		Faults:  []fault.Fault{&fault.NodeRestart{}, &link.Cut{}},
		Summary: "as node-restart, on nodes with appendonly yes, appendfsync always: the restarted node reloads the lock; twice a run",
		Applies: redisOnly(naRestart, nil),
		Setup:   restartSetup(cluster.PersistenceAOF),
		New:     func(env Env) Nemesis { return newNodeRestart(env, "node-restart-aof", false, cluster.PersistenceAOF) }}
}

// naRestart is why the node-restart family does not apply to etcd and
// ZooKeeper locks.
const naRestart = "restarts a Redis node with its keyspace emptied (or reloaded from AOF); etcd and ZooKeeper members keep their log on disk and rejoin their quorum: leader-kill is their restart"

// restartDelay is how long node-restart-delayed keeps a killed node down:
// past the TTL, so every key it held would have expired anyway.
func restartDelay(ttl time.Duration) time.Duration { return ttl + ttl/5 }

// nodeRestarts is the nemesis of the node-restart family: the quorum
// layout's link cuts for the whole run, and a fault.NodeRestart of the lock's
// node at each strike.
type nodeRestarts struct {
	onePerTrigger
	faultLog
	name        string
	delayed     bool
	persistence cluster.Persistence
	quorum      bool
	seen        *grants
}

func newNodeRestart(env Env, name string, delayed bool, p cluster.Persistence) *nodeRestarts {
	r := &nodeRestarts{onePerTrigger: onePerTrigger{env: env, times: triggers(env.Duration, strikes)},
		name: name, delayed: delayed, persistence: p, quorum: quorum(env.Info), seen: newGrants()}
	if r.quorum {
		// For the whole run (before any client connects): A reaches only
		// n1-n3, B only n3-n5. Heal restores the links (healAll).
		for _, c := range []*link.Cut{{Links: env.Links, Client: clientA, Nodes: cutFromA}, {Links: env.Links, Client: clientB, Nodes: cutFromB}} {
			if _, err := fault.Inject(context.Background(), c); err != nil {
				r.fail(fmt.Errorf("%s: quorum layout: %w", name, err))
			}
		}
	}
	return r
}

// Run returns the setup error, if any: the faults act at lock events.
func (r *nodeRestarts) Run(context.Context) error { return r.err() }

// Heal waits for a delayed restart in flight, heals what is still broken
// (healAll: a node left down, the quorum layout's cut links) and returns
// the errors of the run's fault actions.
func (r *nodeRestarts) Heal(ctx context.Context) error {
	r.bg.Wait()
	return errors.Join(r.err(), healAll(ctx, r.env))
}

// At strikes at the first grant after each trigger (quorum strategies:
// a grant of A or B, which then holds a bare quorum): in the background it
// SIGKILLs the lock's node and restarts it (at once, or after
// restartDelay), while the holder is kept until another client is granted
// the key or half its lease has passed, whichever comes first; a slow
// restart never keeps the holder longer. The next strike waits until the
// node is back.
func (r *nodeRestarts) At(ctx context.Context, ev workload.Event) error {
	r.seen.see(ev)
	if ev.Point != workload.PointAcquired || (r.quorum && ev.Client != clientA && ev.Client != clientB) || !r.take() {
		return nil
	}
	idx := 0
	if r.quorum {
		idx = sharedNode
	}
	n := r.env.Cluster.Nodes()[idx]
	strikeAside(ctx, &r.faultLog, &r.onePerTrigger, r.seen, ev, func(ctx context.Context, held <-chan holdOutcome) {
		r.strike(ctx, n, ev, held)
	})
	return nil
}

// strikeAside runs fault in the background, so a slow kill, restart or
// pause never keeps the holder longer, while the struck client (ev) is
// held until another client is granted its key or half its lease has
// passed; fault receives the outcome of that hold through held. The
// trigger is done when fault returns; Heal waits for it (faultLog.bg).
func strikeAside(ctx context.Context, f *faultLog, o *onePerTrigger, seen *grants, ev workload.Event, fault func(ctx context.Context, held <-chan holdOutcome)) {
	held := make(chan holdOutcome, 1)
	f.bg.Add(1)
	go func() {
		defer f.bg.Done()
		defer o.done()
		fault(context.WithoutCancel(ctx), held)
	}()
	other, who := holdForOther(ctx, seen, ev, o.env.TTL, leaseStart(ev))
	held <- holdOutcome{other, who, -1}
}

// holdOutcome is how the hold of a struck client ended: whether another
// client was granted its key meanwhile (the strike landed), and which.
type holdOutcome struct {
	other bool
	who   int
	// tries is how many acquire calls of the key other clients began
	// during the hold (-1: not counted): with none, a strike that missed
	// kept nobody out, since nobody tried.
	tries int
}

// landing is Landed when another client was granted the key.
func (h holdOutcome) landing() history.Landing { return landing(h.other) }

// String is the note text on the hold.
func (h holdOutcome) String() string {
	if h.other {
		return fmt.Sprintf("client %d granted the key during the hold", h.who)
	}
	switch {
	case h.tries == 0:
		return "no other grant during the hold, and no other client began an acquire of the key during it: the hold was not tested"
	case h.tries > 0:
		return fmt.Sprintf("no other grant during the hold, in %d acquire calls other clients began during it", h.tries)
	}
	return "no other grant during the hold"
}

// strike restarts n (fault.NodeRestart) and records the window; held delivers
// the outcome of the struck client's hold.
func (r *nodeRestarts) strike(ctx context.Context, n *cluster.Node, ev workload.Event, held <-chan holdOutcome) {
	f := &fault.NodeRestart{Node: n, Persistence: r.persistence}
	if r.quorum {
		f.Links, f.Index = r.env.Links, sharedNode
	}
	if r.delayed {
		f.Delay = restartDelay(r.env.TTL)
	}
	start := r.env.Clock.Now()
	evidence, err := fault.Inject(ctx, f)
	if err != nil {
		r.fail(fmt.Errorf("%s: %w", r.name, err))
		return
	}
	end := r.env.Clock.Now()
	state := fault.KeyState(ctx, n, ev.Key, ev.Lease, r.env.TTL)
	h := <-held
	recordWindow(r.env, start, end, h.landing(), fmt.Sprintf("%s: %s; %s; struck client %d hold %d on %s; %s",
		r.name, evidence, state, ev.Client, ev.Hold, ev.Key, h))
}

// holdForOther keeps a struck client until another client is granted its
// key (seen by g), or until TTL/2 after from: the struck client then still
// has half its lease for its critical section, so an overlap with a second
// grant happens while it is within its lease, not because the hold made it
// late. It returns whether another client was granted and which one (-1 if
// none).
func holdForOther(ctx context.Context, g *grants, ev workload.Event, ttl time.Duration, from time.Time) (bool, int) {
	d := time.Until(from.Add(ttl / 2))
	if d <= 0 || !g.waitOther(ctx, ev.Client, ev.Key, d) {
		return false, -1
	}
	return true, g.lastClient(ev.Key)
}

// leaseStart is when the event's lease began (its acquire was called), or
// now when the event carries none.
func leaseStart(ev workload.Event) time.Time {
	if ev.Lease != nil && !ev.Lease.Start.IsZero() {
		return ev.Lease.Start
	}
	return time.Now()
}

// lastClient returns the client of the latest grant of key seen (-1 if none).
func (g *grants) lastClient(key string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	if l, ok := g.last[key]; ok {
		return l.client
	}
	return -1
}

// nodePauseScenario stops the lock's node with SIGSTOP for 2×TTL, then SIGCONT.
// The holder is kept until another client is granted or half its lease has
// passed; nothing else is held. Commands sent during the pause run after
// SIGCONT: the others' queued acquires first (the node is paused TTL/10
// after the grant, so the holder's connection is not first in line), then
// the holder's queued release. Quorum strategies: one of the five nodes
// (seeded) is paused.
//
// Each lock call's budget is pauseOpTimeoutTTL×TTL (unless the user set
// --op-timeout): a queued command matters only while its client still
// waits for the answer, so the budget must outlast the pause at every
// TTL. With a fixed 500 ms budget and a 2 s pause (TTL 1 s) every acquire
// queued ahead of the holder's release had given up by SIGCONT, and the
// canary never landed (measured: set-nx-px, seeds 1-8, 8 of 8
// inconclusive). A strike lands when another client is granted the key
// by an acquire it sent before the struck holder's hold ended (so before
// its release was sent) and still waited for at SIGCONT: the order of
// queued commands a late unchecked release needs to free a live owner's
// lock.
func nodePauseScenario() Scenario {
	return Scenario{Name: "node-pause", Kind: Process,
		Faults:  []fault.Fault{&fault.NodePause{}},
		Summary: "TTL/10 after a fresh grant the lock's node (Redlock: one of five, seeded) is SIGSTOPped for 2×TTL, then SIGCONTed; the holder is kept until another client is granted (≤ TTL/2); lock calls wait 3×TTL (the pause must not outlast them); twice a run",
		Applies: redisOnly("pauses the Redis node that holds the key; on etcd and ZooKeeper, leader-pause stops their leader past the TTL", nil),
		Setup:   func(impl.Info) Setup { return Setup{OpTimeoutTTL: pauseOpTimeoutTTL} },
		New: func(env Env) Nemesis {
			return &nodePauses{onePerTrigger: onePerTrigger{env: env, times: triggers(env.Duration, strikes)}, seen: newGrants(), seed: env.Seed,
				queued: &queuedGrants{}}
		}}
}

// pauseOpTimeoutTTL is node-pause's call budget in TTLs: the pause ends
// 2.1×TTL after the struck grant, and an acquire queued right after the
// pause began must still wait for its answer then.
const pauseOpTimeoutTTL = 3

// pauseAfterGrant is how long after the struck grant the node is paused.
func pauseAfterGrant(ttl time.Duration) time.Duration { return ttl / 10 }

// nodePauses is the nemesis of NodePause: a fault.NodePause of one node at each
// strike.
type nodePauses struct {
	onePerTrigger
	faultLog
	seen   *grants
	seed   int64
	queued *queuedGrants

	mu     sync.Mutex
	strike int // strikes so far (seeds the node choice)
}

// queuedGrants watches, during a node-pause strike, for the grant that
// makes the strike land: another client granted the struck key by an
// acquire invoked before the struck holder's hold ended. Safe for
// concurrent use.
type queuedGrants struct {
	mu      sync.Mutex
	key     string
	client  int
	holdEnd time.Time // zero while the struck client is held
	found   int       // the client granted so (-1: none yet)
	active  bool
	changed chan struct{}
}

// watch starts watching for a queued grant of key to a client other than
// client.
func (q *queuedGrants) watch(key string, client int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.key, q.client, q.holdEnd, q.found, q.active, q.changed = key, client, time.Time{}, -1, true, make(chan struct{})
}

// holdEnded notes when the struck client's hold ended.
func (q *queuedGrants) holdEnded(t time.Time) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.active && q.holdEnd.IsZero() {
		q.holdEnd = t
	}
}

// see checks a grant event against the watch.
func (q *queuedGrants) see(ev workload.Event) {
	if ev.Point != workload.PointAcquired || ev.Lease == nil {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.active || q.found >= 0 || ev.Key != q.key || ev.Client == q.client {
		return
	}
	if !q.holdEnd.IsZero() && !ev.Lease.Start.Before(q.holdEnd) {
		return // sent after the struck holder's release may have been
	}
	q.found = ev.Client
	close(q.changed)
}

// wait waits until a queued grant was seen, timeout passes or ctx ends,
// stops watching and returns the client granted (-1: none).
func (q *queuedGrants) wait(ctx context.Context, timeout time.Duration) int {
	q.mu.Lock()
	ch := q.changed
	q.mu.Unlock()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-ch:
	case <-t.C:
	case <-ctx.Done():
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.active = false
	return q.found
}

// Run does nothing: the faults act at lock events.
func (p *nodePauses) Run(context.Context) error { return nil }

// Heal waits for a pause in flight to end, heals what is left paused or
// down (healAll), and returns the errors of the run's fault actions.
func (p *nodePauses) Heal(ctx context.Context) error {
	p.bg.Wait()
	return errors.Join(p.err(), healAll(ctx, p.env))
}

// At pauses a node shortly after the first grant after each trigger (in
// the background: paused TTL/10 after the grant, resumed 2×TTL later) and
// keeps the holder until another grant or half its lease.
func (p *nodePauses) At(ctx context.Context, ev workload.Event) error {
	p.seen.see(ev)
	p.queued.see(ev)
	if ev.Point != workload.PointAcquired {
		return nil
	}
	if !p.take() {
		return nil
	}
	nodes := p.env.Cluster.Nodes()
	if n := p.env.Info.Nodes; n >= 1 && n < len(nodes) {
		nodes = nodes[:n]
	}
	p.mu.Lock()
	idx := 0
	if len(nodes) > 1 {
		idx = newRand(p.seed + int64(p.strike)).IntN(len(nodes))
	}
	p.strike++
	p.mu.Unlock()
	n := nodes[idx]
	p.queued.watch(ev.Key, ev.Client)
	strikeAside(ctx, &p.faultLog, &p.onePerTrigger, p.seen, ev, func(ctx context.Context, held <-chan holdOutcome) {
		p.pause(ctx, n, ev, held)
	})
	p.queued.holdEnded(time.Now())
	return nil
}

// queuedLanding waits (at most TTL/2 after SIGCONT) for a queued grant
// (queuedGrants) and returns the strike's landing and its note.
func (p *nodePauses) queuedLanding(ctx context.Context, h holdOutcome) (history.Landing, string) {
	who := p.queued.wait(ctx, p.env.TTL/2)
	switch {
	case who >= 0:
		return history.Landed, fmt.Sprintf("client %d granted the key after SIGCONT by an acquire queued before the hold ended", who)
	case h.other:
		return history.Landed, ""
	}
	return history.Missed, "no acquire queued before the hold ended was granted after SIGCONT"
}

// pause stops n for 2×TTL (fault.NodePause), resumes it and records the
// window; held delivers the outcome of the struck client's hold.
func (p *nodePauses) pause(ctx context.Context, n *cluster.Node, ev workload.Event, held <-chan holdOutcome) {
	// Let the server serve a few more commands and go back to waiting
	// before it stops. Stopped right after replying to the holder, it may
	// not have polled again, and the holder's connection, still first in
	// its ready list, would have its queued release served first after
	// SIGCONT, before the other clients' queued acquires.
	sleepCtx(ctx, pauseAfterGrant(p.env.TTL))
	d := 2 * p.env.TTL
	f := &fault.NodePause{Node: n, External: p.env.Cluster.Backend() == cluster.BackendExternal, D: d}
	if f.External {
		// DEBUG SLEEP blocks the server as SIGSTOP does, and commands sent
		// meanwhile run afterwards. The window runs from the command's
		// send for d (the server sleeps at least that long after it reads
		// the command).
		start := p.env.Clock.Now()
		evidence, err := fault.Inject(ctx, f)
		if err != nil {
			p.fail(fmt.Errorf("node-pause: %w", err))
			return
		}
		h := <-held
		sleepCtx(ctx, d-time.Duration(p.env.Clock.Now()-start))
		land, q := p.queuedLanding(ctx, h)
		recordWindow(p.env, start, start+int64(d), land, fmt.Sprintf("node-pause: %s; struck client %d hold %d on %s; %s; %s",
			evidence, ev.Client, ev.Hold, ev.Key, h, q))
		return
	}
	evidence, err := fault.Inject(ctx, f)
	if err != nil {
		p.fail(fmt.Errorf("node-pause: %w", err))
		return
	}
	// The window starts once the pause is in force: a docker pause (cgroup
	// freezer) takes tens of ms, during which the node still serves.
	start := p.env.Clock.Now()
	sleepCtx(ctx, d-time.Duration(p.env.Clock.Now()-start))
	// The window ends at SIGCONT: a command queued during the pause
	// completes after it, outside the window.
	end := p.env.Clock.Now()
	resumed, err := fault.Heal(ctx, f)
	if err != nil {
		p.fail(fmt.Errorf("node-pause: %w", err))
		return
	}
	h := <-held
	land, q := p.queuedLanding(ctx, h)
	recordWindow(p.env, start, end, land, fmt.Sprintf("node-pause: %s for %v, then %s; struck client %d hold %d on %s; %s; %s",
		evidence, time.Duration(end-start).Round(time.Millisecond), resumed, ev.Client, ev.Hold, ev.Key, h, q))
}

// nodesDown kills k of the quorum strategy's nodes at a grant (fault.NodeKill)
// and keeps them down until Heal.
type nodesDown struct {
	onePerTrigger
	faultLog
	name string
	k    int

	mu     sync.Mutex
	killed []*cluster.Node
	start  int64
	notes  []string
}

func quorumOnly(in impl.Info) (bool, string) {
	if onConsensus(in) {
		return false, "kills Redis nodes of a five-node Redlock quorum; on etcd and ZooKeeper, quorum-loss takes 2 of 3 members down"
	}
	if quorum(in) {
		return true, ""
	}
	return false, "kills nodes of a five-node quorum; the strategy uses a single node"
}

// redlockMinorityDownScenario kills 2 of 5 nodes (seeded) at the first grant after
// 20% of the run and keeps them down until Heal: a quorum of 3 remains, so
// Redlock must keep granting (redis.io distlock page: available as long as
// a majority is up). The window lands when every node picked went down (also in
// RedlockMajorityDown).
func redlockMinorityDownScenario() Scenario {
	return Scenario{Name: "redlock-minority-down", Kind: Process,
		Faults:  []fault.Fault{&fault.NodeKill{}},
		Summary: "quorum strategies: 2 of 5 nodes (seeded) SIGKILLed at a grant after 20% of the run, down until the run ends",
		Applies: quorumOnly,
		New: func(env Env) Nemesis {
			return &nodesDown{onePerTrigger: onePerTrigger{env: env, times: triggers(env.Duration, 1)}, name: "redlock-minority-down", k: 2}
		}}
}

// redlockMajorityDownScenario kills 3 of 5 nodes (seeded) at the first grant after
// 20% of the run and keeps them down until Heal: no quorum remains, so
// Redlock must grant nothing meanwhile.
func redlockMajorityDownScenario() Scenario {
	return Scenario{Name: "redlock-majority-down", Kind: Process,
		Faults:  []fault.Fault{&fault.NodeKill{}},
		Summary: "quorum strategies: 3 of 5 nodes (seeded) SIGKILLed at a grant after 20% of the run, down until the run ends",
		Applies: quorumOnly,
		New: func(env Env) Nemesis {
			return &nodesDown{onePerTrigger: onePerTrigger{env: env, times: triggers(env.Duration, 1)}, name: "redlock-majority-down", k: 3}
		}}
}

// Run does nothing: the fault acts at a lock event.
func (d *nodesDown) Run(context.Context) error { return nil }

// At kills k seeded nodes at the first grant after the trigger, in the
// background so that the holder goes on at once. The window starts when the
// last of them is gone.
func (d *nodesDown) At(ctx context.Context, ev workload.Event) error {
	if ev.Point != workload.PointAcquired || !d.take() {
		return nil
	}
	nodes := d.env.Cluster.Nodes()
	if n := d.env.Info.Nodes; n >= 1 && n < len(nodes) {
		nodes = nodes[:n]
	}
	pick := newRand(d.env.Seed).Perm(len(nodes))[:min(d.k, len(nodes))]
	sort.Ints(pick)
	d.bg.Add(1)
	go func() {
		defer d.bg.Done()
		var killed []*cluster.Node
		var notes []string
		for _, i := range pick {
			note, err := fault.Inject(context.WithoutCancel(ctx), &fault.NodeKill{Node: nodes[i]})
			if err != nil {
				d.fail(fmt.Errorf("%s: %w", d.name, err))
				continue
			}
			killed = append(killed, nodes[i])
			notes = append(notes, note)
		}
		d.mu.Lock()
		d.killed, d.start = killed, d.env.Clock.Now()
		d.notes = append(notes, fmt.Sprintf("struck at client %d hold %d on %s", ev.Client, ev.Hold, ev.Key))
		d.mu.Unlock()
	}()
	return nil // the trigger stays taken: one strike per run
}

// Heal closes the window (the nodes are down until now), restarts the
// killed nodes empty (healAll) and returns the errors of the run's fault
// actions.
func (d *nodesDown) Heal(ctx context.Context) error {
	d.bg.Wait()
	d.mu.Lock()
	killed, start, notes := d.killed, d.start, d.notes
	d.mu.Unlock()
	if len(killed) > 0 {
		end := d.env.Clock.Now()
		names := make([]string, len(killed))
		for i, n := range killed {
			names[i] = n.Name()
		}
		// The scenario measures availability with k nodes down: it lands
		// when all k went down.
		recordWindow(d.env, start, end, landing(len(killed) == d.k), fmt.Sprintf("%s: %d of %d nodes down (%s): %s; restarted empty at heal",
			d.name, len(killed), len(d.env.Cluster.Nodes()), strings.Join(names, ","), strings.Join(notes, "; ")))
	}
	return errors.Join(d.err(), healAll(ctx, d.env))
}
