package chaos

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/chaos/fault"
	"github.com/lockbench/lockbench/chaos/fault/link"
	"github.com/lockbench/lockbench/cluster"
	"github.com/lockbench/lockbench/cluster/proxy"
	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/workload"
)

// failoverScenarios are the replication faults: replica promotion with a
// lost write, Sentinel failover, and the promotion of the replica that did
// not acknowledge a grant.
func failoverScenarios() []Scenario {
	return []Scenario{failoverLostWriteScenario(), failoverBareQuorumScenario(), sentinelFailoverScenario(), failoverOtherReplicaScenario()}
}

// Timings of the sentinel-failover scenario. Sentinel promotes a replica
// ~2.2 s after the primary dies (cluster.SentinelDownAfterMilliseconds 1000,
// as measured) and contending clients come back within their
// retry cap (TTL/5): the lease must outlast both, so that the struck client
// is still inside it when the new primary grants the key to another client,
// and the run must last until that grant.
const (
	// SentinelTTL is the lock TTL of sentinel-failover runs.
	SentinelTTL = 4 * time.Second
	// SentinelMinDuration is the shortest sentinel-failover run: the strike
	// comes at the run's first release (after one critical section,
	// TTL/20) and another client is granted ~2.2-3.2 s later.
	SentinelMinDuration = 4 * time.Second
	// SentinelWaitMinDuration is the shortest sentinel-failover run of a
	// lock that waits for a replica: the hold (TTL/4), the struck client
	// kept until 0.9×TTL after its grant, and then a few seconds of
	// grants, so that the run has the holds its checks need (at
	// SentinelMinDuration one run had 3).
	SentinelWaitMinDuration = 8 * time.Second
)

// failoverLostWriteScenario loses a fresh lock at a failover. Single-node
// strategies run on replicated:1 with every client behind its own proxy (a
// virtual IP that moves at failover). The replica replicates through a
// proxy too; at the first release after 20% of the run that leaves the
// replica without a live copy of the key (read on the replica, which still
// answers), the nemesis cuts that replication link, freezing the replica.
// It strikes the key's next grant, the first write the replica misses: the
// primary is SIGKILLed, the replica promoted (REPLICAOF NO ONE) and every
// client's link moved to it. The key is gone on the new primary, so
// another client B is granted it while the struck client A, held at its
// grant, is still inside its lease. A goes on once B has read the
// protected resource, and B's write waits for A's read (see race), so the
// two holders' critical sections overlap the same way in every run; A is
// released 0.9×TTL after its acquire at the latest. The strike lands when
// B came; a run without a strike records a missed window ("the fault
// never landed").
//
// Quorum strategies (redlock, redsync) run on their five independent nodes
// plus a sixth that the nemesis makes a replica of n1: n1 fails over as
// above (only its links go through proxies) while the others stay up. It
// strikes only a grant whose token is on the failing node and on at least
// quorum+1 nodes (read from the nodes), so losing one node leaves the
// holder a majority: the quorum must hold. A holder left a bare quorum of
// three by split votes (common under contention) is FailoverBareQuorum's
// case.
//
// Why a cut link rather than CLIENT PAUSE on the replica
// (cluster.Node.HoldReplication): a pause also holds back the release of
// the holder before the struck one, so the replica resurrects that
// holder's key for up to a TTL; a paused replica cannot be read to check;
// and the replica applies the held stream when the pause ends unless it is
// promoted at that very moment (measured), which Sentinel never does.
//
// A lock that waits for a replica (impl.Claims.ReplicaAck: WAIT) is
// granted nothing while the link is cut, so for it the cut becomes a
// window of its own that holds replication back (at least holdFor and
// until holdAttempts acquires were invoked in it; the lock must grant
// nothing there); then the link is healed and the key's first grant after
// is struck. The replica promoted is the one that acknowledged that
// grant, so the key is still held on the new primary. The failover is the
// second window, from the kill until the clients reach the new primary:
// the killed primary restarts empty and rejoins as a replica of the new
// one before that (a primary without a replica grants such a lock
// nothing, which would keep it safe whatever became of the key), so that
// another client could be granted the key there unless the struck grant
// survived; the lock must grant nothing in the window. Its TTL is at
// least waitTTL, for the failover to end inside the struck lease.
func failoverLostWriteScenario() Scenario {
	return Scenario{Name: "failover-lost-write", Kind: Replication, OnReplicas: true,
		Faults:  []fault.Fault{&fault.Promotion{}, &fault.ReplicationCut{}, &link.Move{}},
		Applies: redisOnly(naFailover, nil),
		Summary: "the replication link is cut, a client acquires on the primary, the primary is killed, the replica promoted and clients moved to it: the fresh lock is gone (redlock/redsync: one of five nodes fails over so; a lock that waits for a replica: replication held back, then healed, and a grant the replica acknowledged is struck)",
		Setup: func(in impl.Info) Setup {
			if quorum(in) {
				return Setup{Topology: cluster.Topology{Kind: cluster.Independent, Nodes: nodesOf(in) + 1}, Proxies: true, ProxyNode: failingNode + 1, TTL: quorumTTL,
					TTLWhy: "a quorum lock's per-node timeout (TTL/10) must cover a fresh proxied connection while the spare node's full sync runs"}
			}
			// At least 800 ms: under load a clean cut (a release that leaves
			// the replica without the key) can take a few tries (seen: one
			// 400 ms run with no strike in a full make test). A lock that
			// waits for a replica also needs the hold, a fresh link and a
			// grant on it before the run ends.
			s := Setup{Topology: cluster.Topology{Kind: cluster.Replicated, Replicas: 1}, Proxies: true, MinDuration: 800 * time.Millisecond}
			if in.Claims.ReplicaAck {
				s.TTL, s.MinDuration = waitTTL, waitMinDuration
				s.TTLWhy = "the failover (kill, promotion, the old primary rejoining as a replica, links moved) must end inside the struck lease, with time left for other clients to meet the key"
			}
			return s
		},
		New: func(env Env) Nemesis { return newFailover(env, false, false) },
	}
}

// failoverBareQuorumScenario is FailoverLostWrite for quorum strategies with the
// other half of the case: it strikes only a grant whose token is on the
// failing node n1 and on exactly a quorum of nodes (3 of 5, read from the
// nodes), as split votes under contention often leave a holder. n1 fails
// over to a replica that never saw the grant, the holder keeps 2 of 5, and
// another client takes n1 and the two nodes the holder does not hold: two
// quorums at once (Kleppmann 2016; the distlock page's crash-recovery
// argument, with a failover in place of a restart without persistence).
func failoverBareQuorumScenario() Scenario {
	return Scenario{Name: "failover-bare-quorum", Kind: Replication,
		Faults: []fault.Fault{&fault.Promotion{}, &fault.ReplicationCut{}, &link.Move{}},
		Applies: redisOnly(naFailover, func(in impl.Info) (bool, string) {
			if !quorum(in) {
				return false, "strikes a quorum lock's grant held on a bare quorum of its nodes; the strategy uses a single node (failover-lost-write is its case)"
			}
			return true, ""
		}),
		Summary: "quorum strategies: as failover-lost-write, but the struck grant is held on exactly a quorum (3 of 5, n1 among them): n1 fails over to a replica without it, the holder keeps 2 of 5 and another client can take n1 and the two free nodes",
		Setup:   failoverLostWriteScenario().Setup,
		New:     func(env Env) Nemesis { return newFailover(env, false, true) },
	}
}

// sentinelFailoverScenario kills the primary of replicated:1 watched by three
// Sentinels, which detect it and promote the replica (~2.2 s); clients
// follow through Sentinel (go-redis failover client). As in
// FailoverLostWrite the replica replicates through a proxy whose link is
// cut at the run's first release, and the next grant is struck, so the
// failover also loses that fresh lock; with a TTL of SentinelTTL the struck
// client, held at its grant as in FailoverLostWrite (at most 0.9×TTL after
// its acquire), is still inside its lease when the next holder is granted
// the key on the new primary. The run's liveness figures give the
// unavailability and the recovery time (fault to next grant). A lock
// that waits for a replica meets the cut as in FailoverLostWrite: a hold
// in which it must grant nothing, a healed link, and a strike on a grant
// the replica Sentinel promotes has acknowledged.
func sentinelFailoverScenario() Scenario {
	return Scenario{Name: "sentinel-failover", Kind: Replication, OnReplicas: true,
		Faults:  []fault.Fault{&fault.SentinelFailover{}, &fault.ReplicationCut{}},
		Summary: "the replication link is cut and the primary killed at a fresh grant; 3 Sentinels detect it and promote the replica (~2.2 s); clients follow via Sentinel; TTL ≥ 4 s so the struck client is still inside its lease (a lock that waits for a replica: replication held back, then healed, and a grant the replica acknowledged is struck)",
		Applies: redisOnly(naFailover, func(in impl.Info) (bool, string) {
			if quorum(in) {
				return false, "a quorum lock runs on independent primaries without replication: there is nothing for Sentinel to fail over"
			}
			return true, ""
		}),
		Setup: func(in impl.Info) Setup {
			d := SentinelMinDuration
			if in.Claims.ReplicaAck {
				d = SentinelWaitMinDuration
			}
			return Setup{Topology: cluster.Topology{Kind: cluster.Replicated, Replicas: 1, Sentinels: 3}, Sentinel: true,
				TTL: SentinelTTL, MinDuration: d,
				TTLWhy: "Sentinel takes ~2.2 s to promote the replica, and the struck client must still be inside its lease then"}
		},
		New: func(env Env) Nemesis { return newFailover(env, true, false) },
	}
}

// failoverOtherReplicaScenario is what WAIT does not buy: a primary with two
// replicas, n2 replicating directly and n3 through a proxy whose link is
// cut at a release that leaves n3 without the key (as in
// FailoverLostWrite). The key's next grant is struck once n2 holds it
// and n3 does not: a lock that waits for one replica (WAIT 1) was
// granted on n2's acknowledgement. The primary is SIGKILLed, n3, the
// replica that did not acknowledge, is promoted, n2 is re-pointed at it
// (as Sentinel reconfigures the other replicas; its offset runs past
// n3's, so it resyncs in full and drops the grant) and the clients'
// links move to n3. Another client is granted the key there, n2
// acknowledging it, while the struck client still holds its lease (race
// orders their reads and writes as in FailoverLostWrite). Sentinel
// itself prefers the replica with the largest offset, so this is the
// case of a replica-priority that favours n3, of n2 lost too, or of an
// operator's choice. It applies to locks that wait for a replica only: a
// lock that does not loses its fresh grant at any failover
// (FailoverLostWrite).
func failoverOtherReplicaScenario() Scenario {
	return Scenario{Name: "failover-other-replica", Kind: Replication, OnReplicas: true,
		Faults: []fault.Fault{&fault.Promotion{}, &fault.ReplicationCut{}, &link.Move{}},
		Applies: redisOnly(naFailover, func(in impl.Info) (bool, string) {
			if !in.Claims.ReplicaAck {
				return false, "strikes a grant one replica acknowledged (WAIT) and promotes the other: a lock that does not wait for a replica loses its fresh grant at any failover (failover-lost-write is its case)"
			}
			return true, ""
		}),
		Summary: "a lock that waits for a replica, on a primary with two: replication to n3 is cut, a grant n2 acknowledged (WAIT 1) is struck: the primary is killed, n3 promoted, n2 re-pointed at it (a full resync drops the grant) and clients moved: the acknowledged lock is gone",
		Setup: func(impl.Info) Setup {
			return Setup{Topology: cluster.Topology{Kind: cluster.Replicated, Replicas: 2}, Proxies: true,
				TTL: otherReplicaTTL, MinDuration: otherReplicaMinDuration,
				TTLWhy: "the failover includes a full resync of the acknowledging replica from the promoted one, and the struck client must still be inside its lease when another client is granted after it"}
		},
		New: func(env Env) Nemesis { return newFailoverOf(env, false, false, true) },
	}
}

// Timings of failover-other-replica: its failover adds a full resync of
// one replica to a promotion, which takes tens of ms on a loaded machine.
const (
	otherReplicaTTL         = 500 * time.Millisecond
	otherReplicaMinDuration = 1600 * time.Millisecond
)

// naFailover is why the failover scenarios do not apply to etcd and
// ZooKeeper locks.
const naFailover = "fails a Redis primary over to an asynchronous replica; etcd and ZooKeeper commit a grant on a quorum (Raft, ZAB) before they answer: leader-kill is their failover"

// quorumTTL is the lock TTL of failover-lost-write for quorum strategies:
// their per-node timeout is TTL/10, and 5 ms (at the matrix's 50 ms TTL)
// is less than a fresh connection through a proxy takes on a loaded
// machine while the spare node's full sync runs, which leaves a run
// without a single grant; 20 ms is enough.
const quorumTTL = 200 * time.Millisecond

// Timings of a lock that waits for a replica (impl.Claims.ReplicaAck)
// under failover-lost-write and sentinel-failover.
const (
	// holdAttempts is how many acquires the hold must see invoked
	// (before holdFor's end less two WAIT timeouts, so that they were
	// answered inside it) before the link heals.
	holdAttempts = 4
	// waitTTL is the shortest lock TTL of a failover-lost-write run of
	// such a lock: its failover also restarts the old primary and syncs
	// it (measured: a promotion alone took ~150 ms on a loaded machine).
	waitTTL = 500 * time.Millisecond
	// waitMinDuration is the shortest failover-lost-write run of such a
	// lock at waitTTL: the cut at 20% of the run, the hold, a fresh link
	// and a grant on it must come before the run ends.
	waitMinDuration = 2 * time.Second
)

// holdFor is the shortest hold of replication of a lock that waits for a
// replica: TTL/4, and at least three of its WAIT timeouts.
func holdFor(ttl time.Duration) time.Duration {
	return max(ttl/4, 3*impl.DefaultWaitTimeout(ttl))
}

// failingNode is the index of the node of a quorum strategy that fails
// over in failover-lost-write (n1); only its links go through proxies.
const failingNode = 0

// nodesOf is the node count of a strategy (at least 1).
func nodesOf(in impl.Info) int { return max(in.Nodes, 1) }

// failover is the nemesis of the failover scenarios: Run routes
// replication through a proxy, At cuts it at a release (fault.ReplicationCut)
// and strikes a later grant (promotion and link.Move, or
// fault.SentinelFailover).
type failover struct {
	env      Env
	sentinel bool // Sentinel promotes; otherwise the nemesis promotes and moves links
	quorum   bool // one node of the strategy's N fails over
	bare     bool // quorum: strike a grant on exactly a quorum, not on more
	// wait: the lock waits for a replica (impl.Claims.ReplicaAck), so
	// the cut holds replication back (refusing its grants) until the
	// link heals, and the first grant after is struck.
	wait bool
	// other: failover-other-replica; acker replicates directly and
	// acknowledges grants, replica (cut) is promoted and acker re-pointed
	// at it.
	other bool
	acker *cluster.Node
	race  *race

	nodes    []*cluster.Node // the strategy's nodes, in link order
	node     int             // index in nodes of the node that fails over
	primary  *cluster.Node
	replica  *cluster.Node
	from     int64   // earliest cut, ns since run start
	capShare float64 // the struck client waits until its lease's Start + capShare×TTL at most

	relink chan struct{}  // asks Run for a fresh replication link
	bg     sync.WaitGroup // a strike's failover still running after the struck client's release (quorum)

	mu       sync.Mutex
	link     *proxy.Proxy // the replication link primary → replica, once Run made it
	ready    bool         // the replica is in sync through link
	busy     bool         // an At call is cutting or checking a candidate
	cutting  string       // the key of a cut being checked
	dirty    bool         // a grant of that key came in during the check
	armed    bool         // the link is cut, the replica has no live copy of cutKey
	cutKey   string       // the key whose next grant is struck
	cutNs    int64        // when the link was cut, ns since run start
	struck   bool         // a strike has begun (one per run)
	cuts     int          // replication-link cuts tried (each at a release)
	failover fault.Fault  // the strike's promotion or fault.SentinelFailover, once it began
	move     *link.Move   // the strike's move of the clients' links (no Sentinel)
	clients  map[*cluster.Node]*redis.Client
	attempts []int64 // wait: when the acquires invoked since the cut were, ns since run start
	unheld   bool    // wait: the hold has ended and a fresh link was asked for
	unheldNs int64   // wait: when the hold ended, ns since run start
	// failedOver and others (wait): the strike's failover is done, and
	// how many acquires of the struck key other clients invoked since,
	// while the struck client held it.
	failedOver bool
	others     int
}

func newFailover(env Env, sentinel, bare bool) *failover {
	return newFailoverOf(env, sentinel, bare, false)
}

// newFailoverOf is newFailover, for failover-other-replica when other is
// set.
func newFailoverOf(env Env, sentinel, bare, other bool) *failover {
	f := &failover{env: env, sentinel: sentinel, quorum: quorum(env.Info), bare: bare, other: other, race: newRace(),
		relink: make(chan struct{}, 1), clients: map[*cluster.Node]*redis.Client{}}
	f.wait = env.Info.Claims.ReplicaAck && !other && !f.quorum
	all := env.Cluster.Nodes()
	n := min(nodesOf(env.Info), len(all))
	f.nodes = all[:n]
	switch {
	case f.quorum && len(all) > n:
		f.node = failingNode
		f.primary, f.replica = all[f.node], all[n]
	case other && len(all) > 2:
		f.primary, f.acker, f.replica = all[0], all[1], all[2]
	case len(all) > 1:
		f.primary, f.replica = all[0], all[1]
	}
	f.capShare = 0.9
	if f.quorum {
		// Nobody else gets a quorum: release the holder early enough to
		// write inside its validity time (TTL minus drift and margin).
		f.capShare = 0.5
	}
	if !sentinel {
		f.from = triggers(env.Duration, 1)[0]
	}
	return f
}

func (f *failover) name() string {
	switch {
	case f.sentinel:
		return "sentinel-failover"
	case f.bare:
		return "failover-bare-quorum"
	case f.other:
		return "failover-other-replica"
	}
	return "failover-lost-write"
}

// Run puts a proxy on the replication link (REPLICAOF the proxy; for
// quorum strategies this makes the spare node a replica of the failing
// one) and waits until the replica is in sync through it; then, until ctx
// ends, it gives the replica a fresh link whenever At asks (a cut that
// froze the replica with a live copy of the key). It returns nil when ctx
// ends, or an error if the replica does not sync within 10 s.
func (f *failover) Run(ctx context.Context) error {
	if f.primary == nil || f.replica == nil {
		return fmt.Errorf("needs a primary and a replica, the cluster has %d nodes", len(f.env.Cluster.Nodes()))
	}
	for {
		if err := f.newLink(ctx); err != nil {
			return endErr(ctx, err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-f.relink:
		}
	}
}

// newLink starts a proxy to the primary, points the replica at it (a
// partial resync: same replication id) and waits until it is in sync, then
// closes the previous link and marks the new one ready.
func (f *failover) newLink(ctx context.Context) error {
	link, err := proxy.New(ctx, fmt.Sprintf("repl-%s-%s", f.primary.Name(), f.replica.Name()), f.primary.Addr())
	if err != nil {
		return err
	}
	f.mu.Lock()
	old := f.link
	f.link = link
	f.mu.Unlock()
	if old != nil {
		old.Close()
	}
	host, port, err := net.SplitHostPort(link.Addr())
	if err != nil {
		return fmt.Errorf("proxy address %q: %w", link.Addr(), err)
	}
	if err := f.client(f.replica).Do(ctx, "REPLICAOF", host, port).Err(); err != nil {
		return fmt.Errorf("%s REPLICAOF %s: %w", f.replica.Name(), link.Addr(), err)
	}
	if err := fault.WaitSynced(ctx, f.replica, port); err != nil {
		return err
	}
	f.mu.Lock()
	f.ready = true
	f.mu.Unlock()
	return nil
}

// endErr drops an error caused by the end of the run.
func endErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// At orders the struck client and the next holder (race), cuts the
// replication link at the first release after the trigger time that leaves
// the frozen replica without a live copy of the released key, and strikes
// that key's next grant. It always returns nil: errors are recorded in the
// history as zero-length nemesis operations ("...: error: ...").
func (f *failover) At(ctx context.Context, ev workload.Event) error {
	if err := f.race.at(ctx, ev); err != nil {
		return nil // the run is ending
	}
	var err error
	switch ev.Point {
	case workload.PointBeforeAcquire:
		if f.wait {
			f.attempt(ev)
		}
	case workload.PointReleased:
		token := ""
		if ev.Lease != nil {
			token = ev.Lease.Token
		}
		err = f.cut(ctx, ev.Key, token)
	case workload.PointAcquired:
		if ev.Lease == nil || !f.claim(ev.Key) {
			return nil
		}
		var ok bool
		ok, err = f.candidate(ctx, ev)
		f.mu.Lock()
		f.busy, f.struck = false, ok && err == nil
		f.mu.Unlock()
		if ok && err == nil {
			err = f.strike(ctx, ev)
		}
	}
	if err != nil && ctx.Err() == nil {
		// The workload ignores At's errors: leave them in the history.
		t := f.env.Clock.Now()
		recordWindow(f.env, t, t, "", fmt.Sprintf("%s: error: %v", f.name(), err))
	}
	return nil
}

// cut cuts the replication link once the replica is in sync through it and
// the trigger time has come, at a release of key: the replica freezes with
// the key gone, and the key's next grant is the first write the replica
// misses, the one to strike. If the replica still holds a live copy of the
// key (another client's grant got through before the cut, or naive's
// SETNX without its EXPIRE), or a grant of the key came in while this was
// checked (a write lost before the struck one), it asks Run for a fresh
// link and a later release tries again.
func (f *failover) cut(ctx context.Context, key, token string) error {
	f.mu.Lock()
	if !f.ready || f.busy || f.struck || f.armed || !f.env.due(f.from) {
		f.mu.Unlock()
		return nil
	}
	f.busy = true
	link := f.link
	f.mu.Unlock()
	// The release's DEL is on its way to the replica: let it land first.
	wait := time.Now().Add(max(f.env.TTL/10, 2*time.Millisecond))
	for time.Now().Before(wait) {
		if s, err := f.holderOn(ctx, f.replica, key, token); err != nil || s != holderIt {
			break
		}
	}
	f.mu.Lock()
	f.cutting, f.dirty = key, false
	f.cuts++
	f.mu.Unlock()
	_, err := fault.Inject(ctx, &fault.ReplicationCut{Link: link, Primary: f.primary, Replica: f.replica})
	ns := f.env.Clock.Now()
	var s string
	if err == nil {
		s, err = f.holderOn(ctx, f.replica, key, "")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.busy, f.cutting = false, ""
	if err == nil && s == holderNone && !f.dirty {
		f.armed, f.cutKey, f.cutNs = true, key, ns
		return nil
	}
	f.ready = false
	select {
	case f.relink <- struct{}{}:
	default:
	}
	if err != nil {
		return fmt.Errorf("cut the replication link: %w", err)
	}
	return nil
}

// attempt notes an acquire invoked while a lock that waits for a replica
// has its replication held back (after the strike's failover: counts the
// struck key's acquires by other clients), and ends the hold once it has lasted
// holdFor and holdAttempts acquires were invoked two WAIT timeouts before
// now (so they were answered inside it): it records the hold as a window
// of its own and asks Run for a fresh link, after which the key's next
// grant is struck.
func (f *failover) attempt(ev workload.Event) {
	now := f.env.Clock.Now()
	wt := int64(2 * impl.DefaultWaitTimeout(f.env.TTL))
	f.mu.Lock()
	if f.failedOver && ev.Key == f.cutKey && ev.Client != f.race.struck() {
		f.others++
	}
	if !f.armed || f.unheld || f.struck {
		f.mu.Unlock()
		return
	}
	f.attempts = append(f.attempts, now)
	answered := 0
	for _, t := range f.attempts {
		if t <= now-wt {
			answered++
		}
	}
	if now-f.cutNs < int64(holdFor(f.env.TTL)) || answered < holdAttempts {
		f.mu.Unlock()
		return
	}
	f.unheld, f.unheldNs, f.ready = true, now, false
	cutNs, n := f.cutNs, len(f.attempts)
	f.mu.Unlock()
	recordWindow(f.env, cutNs, now, "", f.holdNote(cutNs, now, n))
	select {
	case f.relink <- struct{}{}:
	default:
	}
}

// holdNote is the note of the hold's window, from the cut at cutNs to
// end (ns since run start), with n acquires invoked in it.
func (f *failover) holdNote(cutNs, end int64, n int) string {
	return fmt.Sprintf("%s: replication held back: link %s→%s cut at %.1f ms for %.1f ms, %d acquires invoked meanwhile; a lock that waits for a replica cannot be granted while none acknowledges (WAIT %v)",
		f.name(), f.primary.Name(), f.replica.Name(), float64(cutNs)/1e6, float64(end-cutNs)/1e6, n, impl.DefaultWaitTimeout(f.env.TTL))
}

// claim reports whether a grant of key may be checked as the one to
// strike, and marks the check busy. A grant of a key whose cut is being
// checked makes that cut dirty. A lock that waits for a replica is struck
// only once the hold ended and the fresh link is in sync.
func (f *failover) claim(key string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cutting == key {
		f.dirty = true
	}
	if f.busy || f.struck || !f.armed || key != f.cutKey {
		return false
	}
	if f.wait && (!f.unheld || !f.ready) {
		return false
	}
	f.busy = true
	return true
}

// candidate reports whether the grant ev is the one to strike: lost at
// the failover, the replica holding no live copy of its key (read on the
// replica); for quorum strategies also the holder holds the failing node
// and keeps a majority after losing it (bare: holds exactly a quorum, so
// it keeps none). A lock that waits for a replica: the replica to be
// promoted holds it (it acknowledged the grant); failover-other-replica:
// the replica to be promoted holds no copy and the other one holds it.
func (f *failover) candidate(ctx context.Context, ev workload.Event) (bool, error) {
	s, err := f.holderOn(ctx, f.replica, ev.Key, ev.Lease.Token)
	if err != nil {
		return false, err
	}
	if f.wait {
		return s == holderIt, nil
	}
	if s != holderNone {
		return false, nil
	}
	if f.other {
		a, err := f.holderOn(ctx, f.acker, ev.Key, ev.Lease.Token)
		return a == holderIt, err
	}
	if !f.quorum {
		return true, nil
	}
	held, onFailing := 0, false
	for i, n := range f.nodes {
		s, err := f.holderOn(ctx, n, ev.Key, ev.Lease.Token)
		if err != nil {
			return false, err
		}
		if s == holderIt {
			held++
			onFailing = onFailing || i == f.node
		}
	}
	q := len(f.nodes)/2 + 1
	if f.bare {
		return onFailing && held == q, nil
	}
	return onFailing && held-1 >= q, nil
}

// strike fails the primary over (promotion, then link.Move; or
// fault.SentinelFailover), holds the struck client until the key's next holder
// has read the resource (see race; at most until capShare×TTL after its
// acquire), and records the fault window, from the cut to the promotion,
// with its evidence. The strike lands when that next holder came: a
// second client was granted the lost lock while the struck one held it.
//
// For a quorum strategy the struck client is released at its cap also
// when the failover outlasts it (measured: 2.5 s on a loaded machine at
// TTL 1 s): held past its validity time, a correct holder would read
// after its lease expired and another client's grant on the expired
// nodes, which is no fault of the lock, would count against it. The
// failover then finishes in the background (Heal waits for it) and its
// window records the miss with the time it took. A single-node
// strategy's client waits for the failover (its lock is lost whatever the
// timing); a failover that ended past the struck lease says so in the
// window's note.
func (f *failover) strike(ctx context.Context, ev workload.Event) error {
	env := f.env
	capA := ev.Lease.Start.Add(time.Duration(f.capShare * float64(env.TTL)))
	f.race.start(ev.Client, ev.Key, capA, env.TTL/4)
	start := f.cutNs
	notes := []string{
		fmt.Sprintf("replication link %s→%s cut at %.1f ms", f.primary.Name(), f.replica.Name(), float64(f.cutNs)/1e6),
		fmt.Sprintf("client %d granted %s (hold %d) on %s after the cut; %s on %s", ev.Client, ev.Key, ev.Hold, f.primary.Name(), holderNone, f.replica.Name()),
	}
	switch {
	case f.wait:
		// The hold was a window of its own; this one starts at the kill,
		// after the struck grant.
		start = env.Clock.Now()
		f.mu.Lock()
		healed := f.unheldNs
		f.mu.Unlock()
		notes = []string{
			fmt.Sprintf("replication link %s→%s cut at %.1f ms and healed at %.1f ms (the hold: its own window)", f.primary.Name(), f.replica.Name(), float64(f.cutNs)/1e6, float64(healed)/1e6),
			fmt.Sprintf("client %d granted %s (hold %d) on %s after the link healed; %s on %s: the replica acknowledged the grant (WAIT)", ev.Client, ev.Key, ev.Hold, f.primary.Name(), holderIt, f.replica.Name()),
		}
	case f.other:
		notes = []string{
			fmt.Sprintf("replication link %s→%s cut at %.1f ms; %s replicates %s directly", f.primary.Name(), f.replica.Name(), float64(f.cutNs)/1e6, f.acker.Name(), f.primary.Name()),
			fmt.Sprintf("client %d granted %s (hold %d) on %s after the cut; %s on %s, which acknowledged the grant (WAIT); %s on %s", ev.Client, ev.Key, ev.Hold, f.primary.Name(), holderIt, f.acker.Name(), holderNone, f.replica.Name()),
		}
	}
	type outcome struct {
		notes []string
		err   error
	}
	done := make(chan outcome, 1)
	f.bg.Add(1)
	go func() {
		defer f.bg.Done()
		n, err := f.failOver(ctx, ev)
		done <- outcome{n, err}
	}()
	var o outcome
	if f.quorum {
		t := time.NewTimer(time.Until(capA))
		defer t.Stop()
		select {
		case o = <-done:
		case <-t.C:
			// Release the struck client now; the window is recorded once
			// the failover is done.
			f.bg.Add(1)
			go func() {
				defer f.bg.Done()
				o := <-done
				if o.err != nil {
					if ctx.Err() == nil {
						t := env.Clock.Now()
						recordWindow(env, t, t, "", fmt.Sprintf("%s: error: %v", f.name(), o.err))
					}
					return
				}
				notes = append(notes, o.notes...)
				notes = append(notes, fmt.Sprintf("the failover took %v, past the struck client's cap (%.2f×TTL after its acquire): client %d was released at its cap, inside its validity time, before the failover was done",
					time.Since(ev.Lease.Start).Round(time.Millisecond), f.capShare, ev.Client))
				recordWindow(env, f.cutNs, env.Clock.Now(), history.Missed, f.name()+": "+strings.Join(notes, "; "))
			}()
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	} else {
		o = <-done
	}
	if o.err != nil {
		return o.err
	}
	notes = append(notes, o.notes...)
	end := env.Clock.Now()
	if past := time.Since(ev.Lease.Start); past > env.TTL {
		notes = append(notes, fmt.Sprintf("the failover ended %v after the struck client's acquire, past its %v lease: a break here shows the failover's loss only as far as the held client outlived its lease", past.Round(time.Millisecond), env.TTL))
	}
	b, other := f.race.waitOther(ctx)
	if f.wait {
		f.mu.Lock()
		n := f.others
		f.mu.Unlock()
		notes = append(notes, fmt.Sprintf("%d acquires of %s by other clients were invoked between the end of the failover and client %d's release", n, ev.Key, ev.Client))
	}
	if other {
		notes = append(notes, fmt.Sprintf("client %d held until client %d, granted %s on the new primary, had read the resource, %v after its acquire; client %d's write waited for client %d's read",
			ev.Client, b, ev.Key, time.Since(ev.Lease.Start).Round(time.Millisecond), b, ev.Client))
	} else {
		notes = append(notes, fmt.Sprintf("client %d held until its cap (%.2f×TTL after its acquire): no other client was granted %s and read the resource by then",
			ev.Client, f.capShare, ev.Key))
	}
	recordWindow(env, start, end, landing(other), f.name()+": "+strings.Join(notes, "; "))
	return nil
}

// failOver kills the primary and promotes the replica (promotion, then
// link.Move of the clients' links; or fault.SentinelFailover) for the strike of
// ev, and returns the faults' evidence as notes.
func (f *failover) failOver(ctx context.Context, ev workload.Event) ([]string, error) {
	env := f.env
	var notes []string
	var fo fault.Fault = &fault.SentinelFailover{Cluster: env.Cluster, Primary: f.primary}
	if !f.sentinel {
		p := &fault.Promotion{Primary: f.primary, Replica: f.replica}
		if f.other {
			p.Others = []*cluster.Node{f.acker}
		}
		fo = p
	}
	f.mu.Lock()
	f.failover = fo
	f.mu.Unlock()
	evidence, err := fault.Inject(ctx, fo)
	if err != nil {
		return nil, err
	}
	notes = append(notes, evidence)
	if f.sentinel && f.wait {
		if s, err := f.holderOn(ctx, f.replica, ev.Key, ev.Lease.Token); err == nil {
			notes = append(notes, fmt.Sprintf("%s on new primary %s: %s", ev.Key, f.replica.Name(), s))
		}
	}
	if !f.sentinel {
		// Nobody reaches the new primary before the links move.
		if s, err := f.holderOn(ctx, f.replica, ev.Key, ev.Lease.Token); err == nil {
			notes = append(notes, fmt.Sprintf("%s on new primary %s: %s", ev.Key, f.replica.Name(), s))
		}
	}
	if f.wait {
		// A primary without a replica grants a lock that waits for one
		// nothing, which would keep the lock whatever the failover did
		// to the key: the old primary comes back as a replica of the new
		// one before the clients reach it, so that another client could
		// be granted the key unless the struck grant survived.
		if err := f.rejoin(ctx); err != nil {
			return nil, err
		}
		notes = append(notes, fmt.Sprintf("%s restarted empty and rejoined as a replica of %s (synced): the new primary can acknowledge grants", f.primary.Name(), f.replica.Name()))
		f.mu.Lock()
		f.failedOver = true
		f.mu.Unlock()
	}
	if !f.sentinel {
		mv := &link.Move{Links: env.Links, Node: f.node, To: f.replica}
		f.mu.Lock()
		f.move = mv
		f.mu.Unlock()
		moved, err := fault.Inject(ctx, mv)
		if err != nil {
			return nil, err
		}
		if moved != "" {
			notes = append(notes, moved)
		}
	}
	return notes, nil
}

// Heal leaves a healthy primary for the probe. After a strike it heals
// the failover (promotion: promote and move the links if the strike did
// not; fault.SentinelFailover: wait until the Sentinels name the new primary);
// the killed primary stays down (the probe does not need it). Without a
// strike it heals the replication cut (the replica replicates from its
// primary directly) and records that the fault never landed. It then
// closes the replication proxy and the nemesis's own Redis clients.
func (f *failover) Heal(ctx context.Context) error {
	defer f.closeAll()
	f.bg.Wait() // a failover that outlasted the struck client's cap
	f.mu.Lock()
	fo, mv, repl, cuts := f.failover, f.move, f.link, f.cuts
	f.mu.Unlock()
	if fo != nil && !f.primary.Running() {
		var errs []error
		_, err := fault.Heal(ctx, fo)
		errs = append(errs, err)
		if !f.sentinel {
			if mv == nil {
				mv = &link.Move{Links: f.env.Links, Node: f.node, To: f.replica}
			}
			_, err := fault.Heal(ctx, mv)
			errs = append(errs, err)
		}
		if f.wait {
			errs = append(errs, f.rejoin(ctx))
		}
		return errors.Join(errs...)
	}
	if fo != nil && f.wait {
		return nil // the strike's rejoin brought the old primary back
	}
	// Said in the words readers look for; the landing says it to code:
	// without a strike the run says nothing about the lock.
	t := f.env.Clock.Now()
	why := fmt.Sprintf("no release left the replica without the key before the run ended (%d cuts of the replication link tried)", cuts)
	if f.wait {
		f.mu.Lock()
		armed, unheld, cutNs, n, key := f.armed, f.unheld, f.cutNs, len(f.attempts), f.cutKey
		f.mu.Unlock()
		switch {
		case unheld:
			why = fmt.Sprintf("replication was held back and healed, but no grant of %s came on the fresh link before the run ended", key)
		case armed:
			// The hold was in force until now: its window.
			recordWindow(f.env, cutNs, t, "", f.holdNote(cutNs, t, n))
			why = fmt.Sprintf("replication was still held back when the run ended (%d acquires invoked in the hold), so no grant came to strike", n)
		}
	}
	recordWindow(f.env, t, t, history.Missed, fmt.Sprintf("%s: the fault never landed: %s", f.name(), why))
	if repl != nil {
		_, err := fault.Heal(ctx, &fault.ReplicationCut{Link: repl, Primary: f.primary, Replica: f.replica})
		return err
	}
	return nil
}

// rejoin restarts the killed primary, empty, as a replica of the new one
// and waits until it is in sync, as it rejoins in a deployment (Sentinel
// re-points a returning primary): a lock that waits for a replica is
// granted nothing by a primary without one, so without it the probe would
// find the lock unavailable for good.
func (f *failover) rejoin(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, fault.Timeout)
	defer cancel()
	if err := f.primary.Restart(ctx, 0); err != nil {
		return fmt.Errorf("rejoin %s: %w", f.primary.Name(), err)
	}
	if err := f.primary.ReplicaOf(ctx, f.replica); err != nil {
		return fmt.Errorf("rejoin %s: %w", f.primary.Name(), err)
	}
	if err := fault.WaitSynced(ctx, f.primary, strconv.Itoa(f.replica.Port())); err != nil {
		return fmt.Errorf("rejoin %s: %w", f.primary.Name(), err)
	}
	return nil
}

// client returns the nemesis's own direct client to n (not through a proxy).
func (f *failover) client(n *cluster.Node) *redis.Client {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.clients[n]
	if c == nil {
		c = redis.NewClient(n.Security().Apply(&redis.Options{Addr: n.Addr(), PoolSize: 2, MaxRetries: -1, DialerRetries: 1,
			DialTimeout: time.Second, ReadTimeout: time.Second, WriteTimeout: time.Second, DisableIdentity: true}))
		f.clients[n] = c
	}
	return c
}

// closeAll closes the replication proxy and the nemesis's clients.
func (f *failover) closeAll() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.link != nil {
		f.link.Close()
	}
	for n, c := range f.clients {
		c.Close()
		delete(f.clients, n)
	}
}

// What holderOn finds.
const (
	holderIt      = "held by the struck client"
	holderNone    = "no live copy of the key"
	holderAnother = "held by another owner"
)

// holderOn reads who holds key on n: the owner with token (a string key
// with that value, or a reentrant hash with that field), nobody (a replica
// reports a logically expired key as absent), or another owner.
func (f *failover) holderOn(ctx context.Context, n *cluster.Node, key, token string) (string, error) {
	rc := f.client(n)
	cctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	typ, err := rc.Type(cctx, key).Result()
	if err != nil {
		return "", fmt.Errorf("TYPE %s on %s: %w", key, n.Name(), err)
	}
	var mine bool
	switch typ {
	case "none":
		return holderNone, nil
	case "string":
		v, err := rc.Get(cctx, key).Result()
		if errors.Is(err, redis.Nil) {
			return holderNone, nil
		}
		if err != nil {
			return "", fmt.Errorf("GET %s on %s: %w", key, n.Name(), err)
		}
		mine = v == token
	case "hash":
		mine, err = rc.HExists(cctx, key, token).Result()
		if err != nil {
			return "", fmt.Errorf("HEXISTS %s on %s: %w", key, n.Name(), err)
		}
	}
	if mine {
		return holderIt, nil
	}
	return holderAnother, nil
}
