package chaos

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/lockbench/lockbench/chaos/fault"
	"github.com/lockbench/lockbench/cluster"
	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/workload"
	"github.com/redis/go-redis/v9"
)

// clusterScenarios are the Redis Cluster faults: a slot's primary fails
// over to a replica that missed a fresh grant, and a slot moves to
// another primary during a hold.
func clusterScenarios() []Scenario {
	return []Scenario{clusterFailoverScenario(), slotMigrationScenario()}
}

// Timings of cluster-failover: the cluster flags a SIGKILLed primary
// failed after the cluster package's node timeout (500 ms) and its replica wins
// the election 0.5-1 s later (measured: 1.5-2.5 s from the kill on 2
// busy cores); the struck client must still be inside its lease when the
// next holder is granted on the promoted replica, after the clients'
// back-off (TTL/5 at most).
const (
	clusterFailoverTTL         = 5 * time.Second
	clusterFailoverMinDuration = 5 * time.Second
	// clusterHoldShare is the hold of replication, in TTLs: from a
	// release to the key's next grant and the kill.
	clusterHoldShare = 0.5
	// clusterHoldLeft is the least hold still to run at a strike: the
	// kill must reach the primary, and the replica see its link drop,
	// before the hold ends and the replica applies what it buffered.
	clusterHoldLeft = 300 * time.Millisecond
	// clusterWaitMinDuration is the shortest cluster-failover run of a
	// lock that waits for a replica: the hold (from 20% of the run, TTL/2
	// long), a grant after it, the election and the struck holder's
	// lease must fit, and the holds before the hold must give the checks
	// their evidence, since nothing is granted after the election (its
	// new primary has no replica): 10 s runs had 9-17 holds, 9 too few.
	clusterWaitMinDuration = 16 * time.Second
	// clusterWaitFrom is when such a lock's hold may begin, in percent
	// of the run: 6.4 s into a 16 s run, ~25 holds at TTL 5 s.
	clusterWaitFrom = 40
)

// naNotCluster is why the cluster scenarios do not apply to a lock that
// does not live on a Redis Cluster.
const naNotCluster = "acts on a Redis Cluster (a slot's primary, its replica, the slot's owner): the strategy's lock lives elsewhere (token-lua-cluster runs token-lua on a cluster)"

// clusterOnly is the Applies of a scenario written for a lock on a Redis
// Cluster (impl.Info.Cluster).
func clusterOnly(in impl.Info) (bool, string) {
	if !in.Cluster {
		return false, naNotCluster
	}
	return true, ""
}

// clusterFailoverScenario loses a fresh lock at a Redis Cluster failover. At the
// first release after 20% of the run that leaves the key's replica
// without the key (read on the replica, READONLY), the nemesis holds the
// replica's replication back (CLIENT PAUSE ALL on it for TTL/2: its
// master link buffers the stream unapplied). It strikes the key's next
// grant made after the hold began: the slot's primary is SIGKILLed, the
// replica drops what it buffered when its link breaks, and the cluster's
// own failure detection and election (cluster-node-timeout 500 ms) make
// it the slot's primary, without the grant. Another client B is granted
// the key there while the struck client A, held at its grant (at most
// 0.9×TTL after its acquire; race orders their reads and writes as in
// failover-lost-write), is still inside its lease: exclusion breaks.
//
// A lock that waits for a replica (impl.Claims.ReplicaAck: WAIT, as
// token-lua-wait-cluster) is granted nothing while its replica is held
// back, so no grant can be struck in the hold: the hold is a window of its
// own (the lock must grant nothing in it; it begins at the first release
// after 40% of the run, whether or not a grant came in while it was set
// up), and the key's first grant after the hold ended, which the replica
// acknowledged, is struck instead; the
// window of the failover runs from the kill to the election, and the
// elected replica still has the holder's key (the window's note reads it).
//
// Why the election rather than CLUSTER FAILOVER FORCE on the replica:
// the election is what a deployment gets, and at 1.5-2.5 s it fits a 5 s
// lease; FORCE would only shorten the window, not change the loss.
func clusterFailoverScenario() Scenario {
	return Scenario{Name: "cluster-failover", Kind: Replication, OnCluster: true,
		Faults:  []fault.Fault{&fault.ReplicaHold{}, &fault.ClusterElection{}},
		Applies: clusterOnly,
		Summary: "Redis Cluster: the key's replica has its replication held back (CLIENT PAUSE), a client is granted the key on its primary, the primary is SIGKILLed and the cluster elects the replica (~1.5-2.5 s): the fresh lock is gone and another client is granted it; TTL ≥ 5 s so the struck client is still inside its lease (a lock that waits for a replica: the hold must grant nothing, then a grant the replica acknowledged is struck)",
		Setup: func(in impl.Info) Setup {
			d := clusterFailoverMinDuration
			if in.Claims.ReplicaAck {
				d = clusterWaitMinDuration
			}
			return Setup{TTL: clusterFailoverTTL, MinDuration: d,
				TTLWhy: "the cluster takes 1.5-2.5 s to elect the replica, and the struck client must still be inside its lease when another client is granted the key there"}
		},
		New: func(env Env) Nemesis { return newClusterFail(env) },
	}
}

// clusterFail is cluster-failover's nemesis.
type clusterFail struct {
	env  Env
	race *race
	from int64 // earliest hold, ns since the schedule started

	// wait: the lock waits for a replica (impl.Claims.ReplicaAck), so
	// the hold is a window of its own and the key's first grant after it
	// is struck.
	wait bool

	mu       sync.Mutex
	busy     bool   // an At call is checking or holding
	checking string // the key whose hold is being set up
	dirty    bool   // a grant of that key came in meanwhile
	armed    bool   // replication of key is held back until heldUntil
	struck   bool
	key      string
	slot     int
	primary  *cluster.Node
	replica  *cluster.Node
	hold     *fault.ReplicaHold
	heldAt   time.Time // when the hold was in force
	holdNs   int64     // the same, ns since run start
	tries    int
	election *fault.ClusterElection
	clients  map[*cluster.Node]*redis.Client
}

func newClusterFail(env Env) *clusterFail {
	f := &clusterFail{env: env, race: newRace(), from: triggers(env.Duration, 1)[0], wait: env.Info.Claims.ReplicaAck, clients: map[*cluster.Node]*redis.Client{}}
	if f.wait {
		// Nothing is granted after the election (its new primary has no
		// replica): the holds before the hold give the checks their
		// evidence, so it comes later.
		f.from = int64(env.Duration) * clusterWaitFrom / 100
	}
	return f
}

// Run has no timed fault: everything happens at lock events (At).
func (f *clusterFail) Run(context.Context) error { return nil }

// At orders the struck client and the next holder (race), holds the
// key's replica back at a release and strikes the key's next grant.
// Errors go to the history as zero-length nemesis operations.
func (f *clusterFail) At(ctx context.Context, ev workload.Event) error {
	if err := f.race.at(ctx, ev); err != nil {
		return nil
	}
	var err error
	switch ev.Point {
	case workload.PointReleased:
		err = f.arm(ctx, ev.Key)
	case workload.PointAcquired:
		if ev.Lease == nil {
			return nil
		}
		f.mu.Lock()
		if f.checking == ev.Key {
			f.dirty = true
		}
		ok := f.armed && !f.struck && !f.busy && ev.Key == f.key && ev.Lease.Start.After(f.heldAt)
		switch {
		case ok && f.wait:
			// A grant in the hold would break the lock's promise (the
			// hold's window says so); the one struck comes after it.
			ok = ev.Lease.Start.After(f.heldAt.Add(f.hold.D))
		case ok && time.Until(f.heldAt.Add(f.hold.D)) < clusterHoldLeft:
			ok, f.armed = false, false // too late in the hold: a later release tries again
		}
		f.struck = f.struck || ok
		f.mu.Unlock()
		if ok {
			err = f.strike(ctx, ev)
		}
	}
	if err != nil && ctx.Err() == nil {
		t := f.env.Clock.Now()
		recordWindow(f.env, t, t, "", fmt.Sprintf("cluster-failover: error: %v", err))
	}
	return nil
}

// arm holds back the replication of key's slot at a release of key, once
// the release reached the replica; a grant of key that came in meanwhile
// (it may be on the replica) leaves it unarmed, for a later release.
func (f *clusterFail) arm(ctx context.Context, key string) error {
	f.mu.Lock()
	if f.busy || f.struck || f.armed || !f.env.due(f.from) || (f.hold != nil && time.Now().Before(f.heldAt.Add(f.hold.D))) {
		f.mu.Unlock()
		return nil
	}
	f.busy = true
	f.tries++
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.busy, f.checking = false, ""
		f.mu.Unlock()
	}()
	c := f.env.Cluster
	slot, err := c.KeySlot(ctx, key)
	if err != nil {
		return err
	}
	p, reps, err := c.SlotPrimary(ctx, slot)
	if err != nil {
		return err
	}
	if len(reps) == 0 {
		return fmt.Errorf("slot %d's primary %s has no replica", slot, p.Name())
	}
	r := reps[0]
	// The release's DEL is on its way to the replica: let it land.
	deadline := time.Now().Add(max(f.env.TTL/10, 2*time.Millisecond))
	for {
		n, err := f.client(r).Exists(ctx, key).Result()
		if err != nil {
			return fmt.Errorf("EXISTS %s on replica %s: %w", key, r.Name(), err)
		}
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			return nil // still there: a later release tries again
		}
		time.Sleep(time.Millisecond)
	}
	f.mu.Lock()
	f.checking, f.dirty = key, false
	f.mu.Unlock()
	h := &fault.ReplicaHold{Replica: r, D: time.Duration(clusterHoldShare * float64(f.env.TTL))}
	if _, err := fault.Inject(ctx, h); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hold, f.heldAt, f.holdNs = h, time.Now(), f.env.Clock.Now()
	if f.dirty && !f.wait {
		return nil // a grant got in before the hold: the replica may have it
	}
	// A lock that waits for a replica is struck after the hold, so a grant
	// before it does not matter: its window counts only acquires invoked
	// in it, after the pause was in force.
	f.armed, f.key, f.slot, f.primary, f.replica = true, key, slot, p, r
	return nil
}

// strike kills the slot's primary, waits for the cluster to elect the
// held-back replica, holds the struck client until the key's next holder
// has read the resource (race) and records the window, from the hold to
// the election; it lands when that next holder came.
func (f *clusterFail) strike(ctx context.Context, ev workload.Event) error {
	env := f.env
	f.mu.Lock()
	p, r, slot, h, holdNs, tries := f.primary, f.replica, f.slot, f.hold, f.holdNs, f.tries
	f.mu.Unlock()
	capA := ev.Lease.Start.Add(time.Duration(0.9 * float64(env.TTL)))
	f.race.start(ev.Client, ev.Key, capA, env.TTL/4)
	held := fmt.Sprintf("replication of slot %d (%s) held back on replica %s for %v (CLIENT PAUSE ALL, after %d tries) at a release that left it without the key", slot, ev.Key, r.Name(), h.D, tries)
	notes := []string{held, fmt.Sprintf("client %d granted %s (hold %d) on primary %s after the hold began", ev.Client, ev.Key, ev.Hold, p.Name())}
	if f.wait {
		// The hold was a window of its own; this one starts at the kill.
		f.recordHold()
		holdNs = env.Clock.Now()
		notes = []string{fmt.Sprintf("client %d granted %s (hold %d) on primary %s after the hold of replica %s ended (its own window): the replica acknowledged the grant (WAIT)", ev.Client, ev.Key, ev.Hold, p.Name(), r.Name())}
	}
	el := &fault.ClusterElection{Cluster: env.Cluster, Primary: p, Replica: r, Slot: slot}
	f.mu.Lock()
	f.election = el
	f.mu.Unlock()
	evidence, err := fault.Inject(ctx, el)
	if err != nil {
		return err
	}
	notes = append(notes, evidence)
	end := env.Clock.Now()
	if _, err := fault.Heal(ctx, h); err == nil {
		if s, err := f.holder(ctx, r, ev.Key, ev.Lease.Token); err == nil {
			notes = append(notes, fmt.Sprintf("%s on the new primary %s: %s", ev.Key, r.Name(), s))
		}
	}
	if past := time.Since(ev.Lease.Start); past > env.TTL {
		notes = append(notes, fmt.Sprintf("the failover ended %v after the struck client's acquire, past its %v lease", past.Round(time.Millisecond), env.TTL))
	}
	b, other := f.race.waitOther(ctx)
	if other {
		notes = append(notes, fmt.Sprintf("client %d held until client %d, granted %s on the new primary, had read the resource, %v after its acquire; client %d's write waited for client %d's read",
			ev.Client, b, ev.Key, time.Since(ev.Lease.Start).Round(time.Millisecond), b, ev.Client))
	} else {
		notes = append(notes, fmt.Sprintf("client %d held until its cap (0.9×TTL after its acquire): no other client was granted %s and read the resource by then", ev.Client, ev.Key))
	}
	recordWindow(env, holdNs, end, landing(other), "cluster-failover: "+strings.Join(notes, "; "))
	return nil
}

// recordHold records the hold of a lock that waits for a replica as a
// window of its own, in which the lock must grant nothing.
func (f *clusterFail) recordHold() {
	f.mu.Lock()
	h, holdNs, key, r, tries := f.hold, f.holdNs, f.key, f.replica, f.tries
	f.mu.Unlock()
	if h == nil || r == nil {
		return
	}
	recordWindow(f.env, holdNs, holdNs+int64(h.D), "", fmt.Sprintf("cluster-failover: replication of %s's slot held back on replica %s for %v (CLIENT PAUSE ALL, after %d tries) at a release that left it without the key; a lock that waits for a replica cannot be granted while none acknowledges (WAIT)", key, r.Name(), h.D, tries))
}

// holder reads who holds key on n (its primary now): holderIt,
// holderNone or holderAnother.
func (f *clusterFail) holder(ctx context.Context, n *cluster.Node, key, token string) (string, error) {
	v, err := f.client(n).Get(ctx, key).Result()
	switch {
	case errors.Is(err, redis.Nil):
		return holderNone, nil
	case err != nil:
		return "", err
	case v == token:
		return holderIt, nil
	}
	return holderAnother, nil
}

// client returns the nemesis's own client of n, which reads a replica
// (READONLY on every connection).
func (f *clusterFail) client(n *cluster.Node) *redis.Client {
	f.mu.Lock()
	defer f.mu.Unlock()
	if c := f.clients[n]; c != nil {
		return c
	}
	c := redis.NewClient(n.Security().Apply(&redis.Options{Addr: n.Addr(), PoolSize: 2, MaxRetries: -1, DialerRetries: 1, Protocol: 2, DisableIdentity: true,
		DialTimeout: time.Second, ReadTimeout: time.Second, WriteTimeout: time.Second,
		OnConnect: func(ctx context.Context, cn *redis.Conn) error { return cn.ReadOnly(ctx).Err() }}))
	f.clients[n] = c
	return c
}

// Heal waits for the election after a strike (the killed primary stays
// down: the cluster serves its slots from the replica) and for
// cluster_state:ok; without a strike it waits for the hold to end and
// records that the fault never landed. It closes the nemesis's clients.
func (f *clusterFail) Heal(ctx context.Context) error {
	defer func() {
		f.mu.Lock()
		for n, c := range f.clients {
			c.Close()
			delete(f.clients, n)
		}
		f.mu.Unlock()
	}()
	f.mu.Lock()
	el, h, tries := f.election, f.hold, f.tries
	f.mu.Unlock()
	var errs []error
	if h != nil {
		_, err := fault.Heal(ctx, h)
		errs = append(errs, err)
	}
	if el != nil {
		_, err := fault.Heal(ctx, el)
		errs = append(errs, err)
	} else {
		if f.wait {
			f.recordHold()
		}
		t := f.env.Clock.Now()
		recordWindow(f.env, t, t, history.Missed, fmt.Sprintf("cluster-failover: the fault never landed: no grant of a held-back key came in time before the run ended (%d holds tried)", tries))
	}
	errs = append(errs, f.env.Cluster.WaitClusterOK(ctx))
	return errors.Join(errs...)
}
