// Package fault holds lockbench's fault primitives, after etcd's
// robustness failpoints: Fault is the small interface every primitive
// implements (a name, the backend features it needs, Inject and Heal),
// and Faults lists each primitive once. One family per file: node.go
// (kill, restart, pause, key loss), rolling.go, client.go (pause, slow
// critical section, crash), cancel.go, clock.go, replication.go
// (replication cut, promotion, Sentinel failover) and cluster.go (Redis
// Cluster: replica hold, election, slot move); the faults played on
// per-link proxies are in chaos/fault/link. The scenarios that place
// faults at lock events are in package chaos; fault schedules in
// chaos/schedule.
package fault

import (
	"context"
	"fmt"
	"time"

	"github.com/lockbench/lockbench/chaos/fault/link"
	"github.com/lockbench/lockbench/cluster"
)

// Fault is one fault primitive, after etcd's robustness Failpoint
// (tests/robustness/failpoint): a value that breaks one thing in the
// system under test and heals it. A value carries its target (a node, a
// client, a link) and the state it needs to heal; scenarios build the
// values they compose (node-restart builds a node-restart fault for the
// node holding a fresh lock, random builds a seeded one at a time), and
// Faults lists every primitive once.
//
// Inject checks that its target is healthy (a running node, an unpaused
// one, an existing link), puts the fault in force, checks that it is (the
// killed pid is gone, the stopped one is in state T, a cut link refuses a
// connect, the server's TIME moved) and returns that evidence as text for
// the nemesis note. Heal undoes what is still in force, is safe to call
// again and on a fault never injected, and returns evidence that the
// target is healthy again ("" when it had nothing to undo). Both honour
// ctx; call them through inject and heal, which bound them by
// Timeout and name the fault in errors.
type Fault interface {
	// Name is the primitive's name, e.g. "node-kill".
	Name() string
	// Needs lists the backend features Inject and Heal use (nil: none
	// beyond a running cluster): the fault is available on a backend that
	// has them all (cluster.Missing is empty). Links through proxies are
	// the Setup's concern (Setup.Proxies), not a feature a fault lists.
	Needs() []cluster.Feature
	// Inject puts the fault in force and returns its evidence.
	Inject(ctx context.Context) (string, error)
	// Heal undoes the fault if it is still in force and returns evidence.
	Heal(ctx context.Context) (string, error)
}

// Faults returns every fault primitive once, as zero values (their Name
// and Needs; a zero value has no target to inject into), in the order
// of the process, client, network, replication and clock families.
func Faults() []Fault {
	return []Fault{
		&NodeKill{}, &NodeRestart{}, &NodePause{}, &KeyLoss{}, &RollingRestart{},
		&ClientPause{}, &SlowCS{}, &ClientCrash{}, &CancelCall{},
		&link.Cut{}, &link.Blackhole{}, &link.Latency{}, &link.Move{}, &link.LostReply{}, &link.SlowReply{},
		&ReplicationCut{}, &Promotion{}, &SentinelFailover{}, &ReplicaHold{}, &ClusterElection{}, &SlotMove{},
		&ClockJump{}, &ClientClockStep{},
	}
}

// Timeout bounds one Inject or one Heal: the slowest, a Sentinel
// promotion, waits up to sentinelWait.
const Timeout = 20 * time.Second

// inject runs f.Inject within Timeout; its error names the fault.
func Inject(ctx context.Context, f Fault) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	ev, err := f.Inject(ctx)
	if err != nil {
		return ev, fmt.Errorf("chaos: %s: %w", f.Name(), err)
	}
	return ev, nil
}

// heal runs f.Heal within Timeout, also when ctx has ended (a fault
// left in force would outlive the run); its error names the fault.
func Heal(ctx context.Context, f Fault) (string, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), Timeout)
	defer cancel()
	ev, err := f.Heal(ctx)
	if err != nil {
		return ev, fmt.Errorf("chaos: %s: %w", f.Name(), err)
	}
	return ev, nil
}
