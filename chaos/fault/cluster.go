package fault

import (
	"context"
	"fmt"
	"time"

	"github.com/lockbench/lockbench/cluster"
)

// The Redis Cluster fault primitives: a replica's replication held back
// (ReplicaHold), a slot's primary killed and its replica elected by the
// cluster (ClusterElection), and a slot moved to another primary
// (SlotMove).

// ReplicaHold holds back a replica's replication for d: CLIENT PAUSE
// <ms> ALL on the replica (cluster.Node.HoldReplication), whose master
// link then buffers the primary's stream unapplied; if the primary dies
// meanwhile the replica drops what it buffered (measured for
// failover-lost-write: every time). The pause ends by itself; Heal
// waits for its end. Evidence: "replication held on n4 for 2000ms (CLIENT
// PAUSE ALL)".
type ReplicaHold struct {
	Replica *cluster.Node
	D       time.Duration
	until   time.Time
}

// Name is the primitive's name, "replica-hold" (Fault.Name).
func (*ReplicaHold) Name() string { return "replica-hold" }

// Needs lists the backend features Inject and Heal use (Fault.Needs).
func (*ReplicaHold) Needs() []cluster.Feature {
	return []cluster.Feature{cluster.FeatureRedisFaults}
}

// Inject pauses the replica's clients, the master link among them.
func (h *ReplicaHold) Inject(ctx context.Context) (string, error) {
	if err := h.Replica.HoldReplication(ctx, h.D); err != nil {
		return "", err
	}
	h.until = time.Now().Add(h.D)
	return fmt.Sprintf("replication held on %s for %v (CLIENT PAUSE ALL)", h.Replica.Name(), h.D), nil
}

// Heal waits until the pause has ended.
func (h *ReplicaHold) Heal(ctx context.Context) (string, error) {
	if h.until.IsZero() || time.Now().After(h.until) {
		return "", nil
	}
	sleepCtx(ctx, time.Until(h.until))
	return fmt.Sprintf("replication on %s resumed", h.Replica.Name()), ctx.Err()
}

// ClusterElection SIGKILLs the primary of a Redis Cluster slot and waits
// (at most Timeout) until the cluster has elected the slot's replica
// in its place: no Redis command of the nemesis takes part in the
// failover, only the cluster's failure detection (cluster-node-timeout,
// the cluster package's node timeout) and its replicas' election. Evidence: "n1
// pid 42 SIGKILLed (...); the cluster elected n4 primary of slot 1450
// 1.652s after the kill". Heal waits for the election if Inject did not
// see it; the killed primary stays down.
type ClusterElection struct {
	Cluster *cluster.Cluster
	Primary *cluster.Node
	Replica *cluster.Node
	Slot    int
	took    time.Duration
	forced  bool // the election had not come by electionPatience: FORCE
}

// electionPatience is how long ClusterElection waits for the cluster's
// own election before it sends CLUSTER FAILOVER FORCE to the replica:
// an election round that fails (measured: 1 run of 5 on 2 busy cores)
// is retried only after 4 s (2 × the failover auth timeout of
// max(2 × cluster-node-timeout, 2 s)), which would end the failover past
// the struck client's lease.
const electionPatience = 2500 * time.Millisecond

// Name is the primitive's name, "cluster-election" (Fault.Name).
func (*ClusterElection) Name() string { return "cluster-election" }

// Needs lists the backend features Inject and Heal use (Fault.Needs).
func (*ClusterElection) Needs() []cluster.Feature { return []cluster.Feature{cluster.FeatureKill} }

// Inject kills the primary and waits for the replica's election.
func (e *ClusterElection) Inject(ctx context.Context) (string, error) {
	killed, err := (&NodeKill{Node: e.Primary}).Inject(ctx)
	if err != nil {
		return "", err
	}
	t := time.Now()
	if err := e.wait(ctx); err != nil {
		return killed, err
	}
	e.took = time.Since(t)
	how := "the cluster elected"
	if e.forced {
		how = fmt.Sprintf("no election within %v (a failed round is retried 4 s later), so CLUSTER FAILOVER FORCE on %s: the primaries voted", electionPatience, e.Replica.Name())
	}
	return fmt.Sprintf("%s; %s %s primary of slot %d %v after the kill", killed, how, e.Replica.Name(), e.Slot, e.took.Round(time.Millisecond)), nil
}

// wait polls the slot's owner every 20 ms until it is the replica.
func (e *ClusterElection) wait(ctx context.Context) error {
	wctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	force := time.Now().Add(electionPatience)
	for {
		p, _, err := e.Cluster.SlotPrimary(wctx, e.Slot)
		if err == nil && p == e.Replica {
			return nil
		}
		if !e.forced && time.Now().After(force) {
			e.forced = true
			if err := e.Replica.ClusterFailover(wctx); err != nil {
				return err
			}
		}
		select {
		case <-wctx.Done():
			return fmt.Errorf("the cluster did not elect %s primary of slot %d: %w (last: %v, %v)", e.Replica.Name(), e.Slot, wctx.Err(), p, err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Heal waits for the election if the primary is down.
func (e *ClusterElection) Heal(ctx context.Context) (string, error) {
	if e.Primary == nil || e.Primary.Running() {
		return "", nil
	}
	if err := e.wait(ctx); err != nil {
		return "", err
	}
	return fmt.Sprintf("%s serves slot %d", e.Replica.Name(), e.Slot), nil
}

// SlotMove moves a Redis Cluster slot, with its keys and their TTLs, to
// another primary (cluster.Cluster.MigrateSlot: SETSLOT IMPORTING and
// MIGRATING, MIGRATE ... KEYS, SETSLOT NODE on every primary). Nothing
// to heal: the slot stays where it went. Evidence: "slot 1450 moved
// n1→n2 (1 key, 3.2 ms)".
type SlotMove struct {
	Cluster *cluster.Cluster
	Slot    int
	To      *cluster.Node
}

// Name is the primitive's name, "slot-move" (Fault.Name).
func (*SlotMove) Name() string { return "slot-move" }

// Needs lists the backend features Inject and Heal use (Fault.Needs).
func (*SlotMove) Needs() []cluster.Feature {
	return []cluster.Feature{cluster.FeatureRedisFaults}
}

// Inject moves the slot.
func (m *SlotMove) Inject(ctx context.Context) (string, error) {
	t := time.Now()
	from, n, err := m.Cluster.MigrateSlot(ctx, m.Slot, m.To)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("slot %d moved %s→%s (%d keys, %v)", m.Slot, from.Name(), m.To.Name(), n, time.Since(t).Round(100*time.Microsecond)), nil
}

// Heal does nothing: a moved slot is a healthy cluster.
func (*SlotMove) Heal(context.Context) (string, error) { return "", nil }
