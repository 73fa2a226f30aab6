package fault

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/chaos/fault/link"
	"github.com/lockbench/lockbench/cluster"
	"github.com/lockbench/lockbench/internal/proc"
)

// NodeKill SIGKILLs a node (docker: docker kill) and keeps it down until
// Heal restarts it (empty without persistence, reloading its AOF with
// it). Evidence: "n3 pid 4242 SIGKILLed (gone: no live pid 4242 in
// /proc)".
type NodeKill struct {
	Node *cluster.Node
}

// Name is the primitive's name, "node-kill" (Fault.Name).
func (*NodeKill) Name() string { return "node-kill" }

// Needs lists the backend features Inject and Heal use (Fault.Needs).
func (*NodeKill) Needs() []cluster.Feature { return []cluster.Feature{cluster.FeatureKill} }

// Inject kills the node, which must be running, and checks that its
// process is gone (proc.Alive).
func (k *NodeKill) Inject(context.Context) (string, error) {
	n := k.Node
	pid := n.PID()
	if pid == 0 {
		return "", fmt.Errorf("kill %s: node not running", n.Name())
	}
	if err := n.Kill(); err != nil {
		return "", err
	}
	if proc.Alive(pid) {
		return "", fmt.Errorf("kill %s: pid %d still alive after SIGKILL", n.Name(), pid)
	}
	return fmt.Sprintf("%s pid %d SIGKILLed (gone: no live pid %d in /proc)", n.Name(), pid, pid), nil
}

// Heal restarts the node if it is down.
func (k *NodeKill) Heal(ctx context.Context) (string, error) {
	n := k.Node
	if n == nil || n.Running() {
		return "", nil
	}
	if err := n.Restart(ctx, 0); err != nil {
		return "", err
	}
	return fmt.Sprintf("%s restarted as pid %d", n.Name(), n.PID()), nil
}

// restartTimeout bounds a node's restart after its kill.
const restartTimeout = 10 * time.Second

// NodeRestart kills a node and starts it again after delay (0: at once)
// on the same address: with cluster.PersistenceNone it comes back empty,
// with cluster.PersistenceAOF it reloads its keys. Inject returns once the
// node answers again. Evidence: "n1 pid 42 SIGKILLed (gone: no live pid
// 42 in /proc); restarted empty after a 240ms delay as pid 57, down 262ms".
//
// With links (per-link proxies), the node's proxies refuse connects while
// it is down, as a dead process's port does: a proxy left listening would
// accept a client's connect and then close it, an EOF after the command
// was sent, which no real deployment shows and which leaves the call's
// outcome unknown where the kernel's refusal makes it a certain "no".
type NodeRestart struct {
	Node *cluster.Node
	// links and index, when links is set, are the run's proxies and the
	// node's index among them.
	Links *link.Links
	Index int
	// delay is how long the node stays down before its restart.
	Delay time.Duration
	// persistence is the node's persistence, for the evidence only.
	Persistence cluster.Persistence
	// keepsData marks an etcd or ZooKeeper member, which restarts with
	// its data folder (its log), for the evidence only.
	KeepsData bool
}

// Name is the primitive's name, "node-restart" (Fault.Name).
func (*NodeRestart) Name() string { return "node-restart" }

// Needs lists the backend features Inject and Heal use (Fault.Needs).
func (*NodeRestart) Needs() []cluster.Feature { return []cluster.Feature{cluster.FeatureKill} }

// Inject kills the node (as NodeKill), waits the delay (cut short when ctx
// ends) and restarts it; the restart runs even when ctx has ended, within
// restartTimeout, so a run's end never leaves the node down.
func (r *NodeRestart) Inject(ctx context.Context) (string, error) {
	n := r.Node
	start := time.Now()
	killed, err := (&NodeKill{Node: n}).Inject(ctx)
	if err != nil {
		return "", err
	}
	if r.Links != nil {
		if err := r.Links.CutNode(r.Index); err != nil {
			return killed, fmt.Errorf("refuse connects to %s while down: %w", n.Name(), err)
		}
		killed += "; its proxies refuse connects while it is down"
	}
	sleepCtx(ctx, r.Delay)
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), restartTimeout)
	defer cancel()
	if err := n.Restart(rctx, 0); err != nil {
		return killed, fmt.Errorf("restart %s: %w", n.Name(), err)
	}
	if r.Links != nil {
		if err := r.Links.RestoreNode(r.Index); err != nil {
			return killed, fmt.Errorf("restore the proxies of %s: %w", n.Name(), err)
		}
	}
	mode := "empty (no persistence)"
	switch {
	case r.KeepsData:
		mode = "with its data (log and snapshot)"
	case r.Delay > 0:
		mode = fmt.Sprintf("empty after a %v delay", r.Delay)
	case r.Persistence == cluster.PersistenceAOF:
		mode = "with AOF (appendfsync always)"
	}
	return fmt.Sprintf("%s; restarted %s as pid %d, down %v", killed, mode, n.PID(), time.Since(start).Round(time.Millisecond)), nil
}

// Heal restarts the node if it is still down (a restart that failed).
func (r *NodeRestart) Heal(ctx context.Context) (string, error) {
	return (&NodeKill{Node: r.Node}).Heal(ctx)
}

// NodePause freezes a node: SIGSTOP (docker: cgroup freezer) until Heal
// sends SIGCONT. The server serves nothing meanwhile; commands sent to it
// run after SIGCONT; TTLs keep running in wall time. On the external
// backend, whose servers lockbench cannot signal, Inject sends DEBUG SLEEP
// for d instead (cluster.Node.PauseFor) and returns when the server
// sleeps no more; Heal then has nothing to undo. Evidence: "n1 pid 42
// SIGSTOPped: state T" and, from Heal, "SIGCONT: state S".
type NodePause struct {
	Node *cluster.Node
	// external is set on the external backend: Inject sends DEBUG SLEEP.
	External bool
	// d is how long the external backend's DEBUG SLEEP lasts; the process
	// and docker backends pause until Heal.
	D time.Duration
}

// Name is the primitive's name, "node-pause" (Fault.Name).
func (*NodePause) Name() string { return "node-pause" }

// Needs lists the backend features Inject and Heal use (Fault.Needs).
func (*NodePause) Needs() []cluster.Feature { return []cluster.Feature{cluster.FeaturePause} }

// Inject pauses the node, which must be running and not paused, and
// checks that its process is in state T.
func (p *NodePause) Inject(ctx context.Context) (string, error) {
	n := p.Node
	if p.External {
		if err := n.PauseFor(ctx, p.D); err != nil {
			return "", err
		}
		return fmt.Sprintf("%s DEBUG SLEEP %v (external backend)", n.Name(), p.D), nil
	}
	if s, err := n.ProcState(); err != nil || s == "T" {
		return "", fmt.Errorf("pause %s: state %q before SIGSTOP (%v), want a running node", n.Name(), s, err)
	}
	pid := n.PID()
	if err := n.Pause(); err != nil {
		return "", err
	}
	state, err := n.ProcState()
	ev := fmt.Sprintf("%s pid %d SIGSTOPped: state %s", n.Name(), pid, state)
	if err != nil || state != "T" {
		return ev, fmt.Errorf("%s pid %d state %q after SIGSTOP (%v), want T", n.Name(), pid, state, err)
	}
	return ev, nil
}

// Heal resumes the node if it is paused (state T).
func (p *NodePause) Heal(context.Context) (string, error) {
	n := p.Node
	if n == nil || !n.Running() {
		return "", nil
	}
	if s, err := n.ProcState(); err != nil || s != "T" {
		return "", nil // running, or a state this backend cannot read
	}
	if err := n.Resume(); err != nil {
		return "", err
	}
	after, err := n.ProcState()
	if err != nil || after == "T" {
		return "", errors.Join(err, fmt.Errorf("%s still stopped after SIGCONT", n.Name()))
	}
	return "SIGCONT: state " + after, nil
}

// KeyLoss deletes a held lock key on every node the lock talks to (DEL,
// through a direct connection: what an eviction under maxmemory, a
// FLUSHDB or an operator does), and reads each node back for the evidence
// that the key is gone. Evidence: "DEL lb:k0 on n1: 1 (held c3's token);
// read back: gone". Heal has nothing to undo.
type KeyLoss struct {
	Nodes []*cluster.Node
	Key   string
}

// Name is the primitive's name, "key-loss" (Fault.Name).
func (*KeyLoss) Name() string { return "key-loss" }

// Needs lists the backend features Inject and Heal use (Fault.Needs).
func (*KeyLoss) Needs() []cluster.Feature { return nil }

// Inject deletes the key on every node and reads it back.
func (k *KeyLoss) Inject(ctx context.Context) (string, error) {
	if len(k.Nodes) == 0 || k.Key == "" {
		return "", errors.New("no node or key to take")
	}
	var ev []string
	for _, n := range k.Nodes {
		c := redis.NewClient(n.Security().Apply(&redis.Options{Addr: n.Addr(), MaxRetries: -1, PoolSize: 1, DialerRetries: 1, Protocol: 2, DisableIdentity: true,
			DialTimeout: time.Second, ReadTimeout: time.Second, WriteTimeout: time.Second}))
		deleted, err := c.Del(ctx, k.Key).Result()
		if err != nil {
			c.Close()
			return strings.Join(ev, "; "), fmt.Errorf("DEL %s on %s: %w", k.Key, n.Name(), err)
		}
		left, err := c.Exists(ctx, k.Key).Result()
		c.Close()
		back := "gone"
		switch {
		case err != nil:
			back = "not read back: " + err.Error()
		case left > 0:
			back = "back already (another owner took it)"
		}
		ev = append(ev, fmt.Sprintf("DEL %s on %s: %d; read back: %s", k.Key, n.Name(), deleted, back))
	}
	return strings.Join(ev, "; "), nil
}

// Heal has nothing to undo: the key is the lock's to set again.
func (*KeyLoss) Heal(context.Context) (string, error) { return "", nil }
