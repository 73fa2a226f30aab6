package chaos

import (
	"strings"
	"time"

	"github.com/lockbench/lockbench/cluster"
	"github.com/lockbench/lockbench/impl"
)

// Setup is what a scenario needs from the cluster and the clients for one
// strategy. The zero value is the strategy's default topology with direct
// connections.
type Setup struct {
	// Topology replaces the strategy's default topology when its Kind is set.
	Topology cluster.Topology
	// Persistence of the Redis nodes (default none).
	Persistence cluster.Persistence
	// ClockShim starts the nodes with the clock-offset preload, so
	// Node.SetClockOffset works.
	ClockShim bool
	// ClientClock starts every adapter process of an exec: strategy with
	// the clock-offset preload and an offset file of its own
	// (adapterclient.WithAdapterClock), so the nemesis can step the wall clock
	// that process reads (its workload.Event.Process is then an
	// adapterclient.ClockStepper). No effect on strategies inside lockbench's
	// process.
	ClientClock bool
	// Proxies routes every (client, node) link through its own TCP proxy
	// (Env.Links), so the nemesis can cut off or slow one client from one
	// node, or move a node's address (failover). The harness's probe gets
	// its own links (client -1). Never set for a performance baseline.
	Proxies bool
	// ProxyNode, with Proxies, puts proxies in front of node nN only (N =
	// ProxyNode, 1-based like the node names, in the strategy's node
	// order); the other nodes are dialled directly. 0: every node. Proxies
	// cost CPU and a dial per connection, so a scenario that acts on one
	// node of five proxies that one only.
	ProxyNode int
	// Sentinel makes clients find the primary through the cluster's
	// Sentinels (go-redis failover client) instead of a fixed address.
	Sentinel bool
	// Clients fixes the number of clients (0: the workload's).
	Clients int
	// TTL is the shortest lock TTL the scenario's fault works at (0: any),
	// for faults slower than a short TTL (Sentinel needs seconds to fail
	// over): a run asked for a shorter TTL runs at this one, a longer TTL
	// is kept (the fault's timing follows env.TTL). The run's critical
	// sections, think time and retry policy given by the user are scaled
	// by the same factor, and the run says so (bench.Spec.Adjustments).
	TTL time.Duration
	// TTLWhy says, in a few words, why the fault needs at least TTL (for
	// the run's note), e.g. "Sentinel takes ~2.2 s to promote the
	// replica, and the struck client must still be inside its lease".
	TTLWhy string
	// MinDuration raises the run's duration to at least this. With TTL set
	// it is the minimum at that TTL: a run at a k times longer TTL lasts at
	// least k × MinDuration (the fault's timing scales with the TTL).
	MinDuration time.Duration
	// Reentrancy raises the nesting depth of reentrant strategies to at
	// least this (0: the workload's), for a fault aimed at a nested
	// acquire. Strategies that are not reentrant do not nest.
	Reentrancy int
	// OpTimeoutTTL, when positive, sets each lock call's budget (the
	// workload's OpTimeout) to this many TTLs, at least the strategy's
	// default, when the user set none: a fault that stalls the server
	// for a span that scales with the TTL needs a budget that scales
	// with it too, or every call queued in the stall gives up before the
	// server answers and the fault means something else at each TTL
	// (node-pause).
	OpTimeoutTTL float64
	// ThinkTTL fixes each client's pause between a release and its next
	// acquire, in TTLs (0.25: a quarter of the TTL; 0: the workload's
	// think time). A scenario whose fault needs a given client to hold sets
	// it, so a client that just released does not win the key straight back
	// while the other backs off.
	ThinkTTL float64
}

// quorum reports whether a strategy needs several independent nodes.
func quorum(in impl.Info) bool { return in.Claims.Quorum || in.Nodes > 1 }

// nodeCount is how many nodes the strategy under test talks to: the
// cluster's nodes, capped at Info.Nodes (as bench.Run does).
func nodeCount(env Env) int {
	n := len(env.Cluster.Nodes())
	if env.Info.Nodes >= 1 && env.Info.Nodes < n {
		n = env.Info.Nodes
	}
	return n
}

func indexes(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// nodeNames names node indexes "n1".."nN" as the cluster does.
func nodeNames(env Env, idx []int) string {
	nodes := env.Cluster.Nodes()
	var s []string
	for _, i := range idx {
		s = append(s, nodes[i].Name())
	}
	return strings.Join(s, ",")
}
