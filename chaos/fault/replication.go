package fault

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lockbench/lockbench/cluster"
	"github.com/lockbench/lockbench/cluster/proxy"
)

// ReplicationCut freezes a replica: its replication link, which runs
// through a proxy on this host (link), drops traffic, so the replica
// receives no write the primary makes afterwards while it still answers
// reads. Heal points the replica straight at its primary (REPLICAOF),
// bypassing the proxy. Evidence: "replication link n1→n2 cut".
type ReplicationCut struct {
	Link             *proxy.Proxy
	Primary, Replica *cluster.Node
}

// Name is the primitive's name, "replication-cut" (Fault.Name).
func (*ReplicationCut) Name() string { return "replication-cut" }

// Needs lists the backend features Inject and Heal use (Fault.Needs).
func (*ReplicationCut) Needs() []cluster.Feature {
	return []cluster.Feature{cluster.FeatureReplicationProxy}
}

// Inject cuts the replication link, which must exist.
func (c *ReplicationCut) Inject(context.Context) (string, error) {
	if c.Link == nil {
		return "", errors.New("no replication link through a proxy")
	}
	if err := c.Link.Cut(); err != nil {
		return "", err
	}
	return fmt.Sprintf("replication link %s→%s cut", c.Primary.Name(), c.Replica.Name()), nil
}

// Heal makes the replica replicate from its primary directly, if the
// primary still runs (after a promotion there is nothing to heal).
func (c *ReplicationCut) Heal(ctx context.Context) (string, error) {
	if c.Replica == nil || !c.Primary.Running() {
		return "", nil
	}
	if err := c.Replica.ReplicaOf(ctx, c.Primary); err != nil {
		return "", err
	}
	return fmt.Sprintf("%s replicates from %s directly", c.Replica.Name(), c.Primary.Name()), nil
}

// promoteTimeout bounds REPLICAOF NO ONE.
const promoteTimeout = 5 * time.Second

// promotion is a manual failover: the primary is SIGKILLed and its
// replica promoted (REPLICAOF NO ONE); the other replicas, if any, are
// re-pointed at it (REPLICAOF, as Sentinel reconfigures them) and synced.
// Writes the promoted replica had not received are lost, also on the
// others: their offsets run past the new primary's history, so they
// resync in full from it. Clients still point at the dead primary: a
// link.Move moves them. Heal completes a promotion Inject did not make.
// Evidence: "n1 pid 42 SIGKILLed (gone: no live pid 42 in /proc); n2
// promoted (role master)" and, per other replica, "n3 replicates n2
// (synced)".
type Promotion struct {
	Primary, Replica *cluster.Node
	Others           []*cluster.Node

	mu       sync.Mutex
	promoted bool
	moved    bool // the others replicate the promoted replica
}

// Name is the primitive's name, "replica-promotion" (Fault.Name).
func (*Promotion) Name() string { return "replica-promotion" }

// Needs lists the backend features Inject and Heal use (Fault.Needs).
func (*Promotion) Needs() []cluster.Feature {
	return []cluster.Feature{cluster.FeatureKill, cluster.FeatureRedisFaults}
}

// Inject kills the primary (as NodeKill) and promotes the replica.
func (p *Promotion) Inject(ctx context.Context) (string, error) {
	killed, err := (&NodeKill{Node: p.Primary}).Inject(ctx)
	if err != nil {
		return "", err
	}
	if err := p.promote(ctx); err != nil {
		return killed, err
	}
	ev := fmt.Sprintf("%s; %s promoted (role %s)", killed, p.Replica.Name(), role(ctx, p.Replica))
	moved, err := p.repoint(ctx)
	if moved != "" {
		ev += "; " + moved
	}
	return ev, err
}

// repoint makes every other replica replicate the promoted one, once, and
// waits until each is in sync (a full resync when it had received writes
// the promoted one had not). It returns the evidence.
func (p *Promotion) repoint(ctx context.Context) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.moved || len(p.Others) == 0 {
		return "", nil
	}
	var ev []string
	port := strconv.Itoa(p.Replica.Port())
	for _, o := range p.Others {
		if err := o.ReplicaOf(ctx, p.Replica); err != nil {
			return strings.Join(ev, "; "), err
		}
		if err := WaitSynced(ctx, o, port); err != nil {
			return strings.Join(ev, "; "), err
		}
		ev = append(ev, fmt.Sprintf("%s replicates %s (synced)", o.Name(), p.Replica.Name()))
	}
	p.moved = true
	return strings.Join(ev, "; "), nil
}

// promote runs REPLICAOF NO ONE on the replica once.
func (p *Promotion) promote(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.promoted {
		return nil
	}
	pctx, cancel := context.WithTimeout(ctx, promoteTimeout)
	defer cancel()
	if err := p.Replica.Promote(pctx); err != nil {
		return err
	}
	p.promoted = true
	return nil
}

// Heal promotes the replica (and re-points the others) if the primary is
// down and Inject did not.
func (p *Promotion) Heal(ctx context.Context) (string, error) {
	if p.Primary == nil || p.Primary.Running() {
		return "", nil
	}
	if err := p.promote(ctx); err != nil {
		return "", err
	}
	ev := fmt.Sprintf("%s is the primary (role %s)", p.Replica.Name(), role(ctx, p.Replica))
	moved, err := p.repoint(ctx)
	if moved != "" {
		ev += "; " + moved
	}
	return ev, err
}

// sentinelWait bounds the wait for the Sentinels' promotion.
const sentinelWait = 15 * time.Second

// SentinelFailover is a failover by Sentinel: the primary is SIGKILLed,
// and the cluster's Sentinels detect it and promote a replica (~2.2 s
// with cluster.SentinelDownAfterMilliseconds 1000); clients that find the
// primary through Sentinel follow. Inject returns once the Sentinels name
// a new primary (at most sentinelWait). Heal waits for one if Inject did
// not. Evidence: "n1 pid 42 SIGKILLed (gone: no live pid 42 in /proc);
// sentinels promoted n2 2.214s after the kill (role master)".
type SentinelFailover struct {
	Cluster *cluster.Cluster
	Primary *cluster.Node
}

// Name is the primitive's name, "sentinel-failover" (Fault.Name).
func (*SentinelFailover) Name() string { return "sentinel-failover" }

// Needs lists the backend features Inject and Heal use (Fault.Needs).
func (*SentinelFailover) Needs() []cluster.Feature { return []cluster.Feature{cluster.FeatureKill} }

// Inject kills the primary and waits for the Sentinels' promotion.
func (s *SentinelFailover) Inject(ctx context.Context) (string, error) {
	killed, err := (&NodeKill{Node: s.Primary}).Inject(ctx)
	if err != nil {
		return "", err
	}
	t := time.Now()
	wctx, cancel := context.WithTimeout(ctx, sentinelWait)
	defer cancel()
	p, err := s.Cluster.WaitPrimary(wctx, s.Primary)
	if err != nil {
		return killed, fmt.Errorf("sentinels did not promote a replica: %w", err)
	}
	return fmt.Sprintf("%s; sentinels promoted %s %v after the kill (role %s)", killed, p.Name(),
		time.Since(t).Round(time.Millisecond), role(ctx, p)), nil
}

// Heal waits until the Sentinels name a primary other than the killed
// one, if the primary is down.
func (s *SentinelFailover) Heal(ctx context.Context) (string, error) {
	if s.Primary == nil || s.Primary.Running() {
		return "", nil
	}
	wctx, cancel := context.WithTimeout(ctx, sentinelWait)
	defer cancel()
	p, err := s.Cluster.WaitPrimary(wctx, s.Primary)
	if err != nil {
		return "", fmt.Errorf("no primary after the sentinel failover: %w", err)
	}
	return fmt.Sprintf("sentinels name %s the primary", p.Name()), nil
}

// role is n's replication role for evidence ("master"), or the error text.
func role(ctx context.Context, n *cluster.Node) string {
	r, err := n.Role(ctx)
	if err != nil {
		return "unknown: " + err.Error()
	}
	return r
}

// WaitSynced waits (at most 10 s) until replica replicates from port with
// its link up and no sync in progress.
func WaitSynced(ctx context.Context, replica *cluster.Node, port string) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for {
		info, err := replica.Info(ctx, "replication")
		if err == nil && info["master_port"] == port && info["master_link_status"] == "up" && info["master_sync_in_progress"] == "0" {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s to sync through port %s: %w (last: %v, %v)", replica.Name(), port, ctx.Err(), info, err)
		case <-time.After(5 * time.Millisecond):
		}
	}
}
