package chaos

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
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

// Links holds the proxies of a run with Setup.Proxies: one per (client,
// node). It is safe for concurrent use after construction.
type Links struct {
	mu      sync.Mutex
	proxies map[[2]int]*cluster.Proxy
	direct  []string // node addresses, for nodes without proxies
}

// NewLinks starts one proxy per (client, node) for clients -1 (the probe)
// to clients-1, each forwarding to the node's address. On error every
// proxy started is closed.
func NewLinks(ctx context.Context, clients int, nodes []*cluster.Node) (*Links, error) {
	return NewLinksOf(ctx, clients, nodes, nil)
}

// NewLinksOf is NewLinks for the node indexes in only (nil: every node):
// the other nodes get no proxy, Link returns nil for them and Addrs their
// own address. On error every proxy started is closed.
func NewLinksOf(ctx context.Context, clients int, nodes []*cluster.Node, only []int) (*Links, error) {
	l := &Links{proxies: map[[2]int]*cluster.Proxy{}}
	proxied := func(i int) bool { return only == nil || slices.Contains(only, i) }
	for _, n := range nodes {
		l.direct = append(l.direct, n.Addr())
	}
	for c := -1; c < clients; c++ {
		for i, n := range nodes {
			if !proxied(i) {
				continue
			}
			p, err := cluster.NewProxy(ctx, fmt.Sprintf("c%d-%s", c, n.Name()), n.Addr())
			if err != nil {
				l.Close()
				return nil, err
			}
			l.proxies[[2]int{c, i}] = p
		}
	}
	return l, nil
}

// Link returns client's proxy to node i (nil if none).
func (l *Links) Link(client, node int) *cluster.Proxy {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.proxies[[2]int{client, node}]
}

// Addrs returns the addresses client connects to, one per node: its proxy,
// or the node itself when the node has none.
func (l *Links) Addrs(client, nodes int) []string {
	out := make([]string, nodes)
	for i := range out {
		if p := l.Link(client, i); p != nil {
			out[i] = p.Addr()
		} else if i < len(l.direct) {
			out[i] = l.direct[i]
		}
	}
	return out
}

// each applies f to every proxy of node i (all clients, the probe too).
func (l *Links) each(node int, f func(*cluster.Proxy) error) error {
	l.mu.Lock()
	var ps []*cluster.Proxy
	for k, p := range l.proxies {
		if k[1] == node {
			ps = append(ps, p)
		}
	}
	l.mu.Unlock()
	var errs []error
	for _, p := range ps {
		errs = append(errs, f(p))
	}
	return errors.Join(errs...)
}

// Cut partitions client from the given nodes (indexes).
func (l *Links) Cut(client int, nodes ...int) error {
	var errs []error
	for _, n := range nodes {
		if p := l.Link(client, n); p != nil {
			errs = append(errs, p.Cut())
		}
	}
	return errors.Join(errs...)
}

// Restore undoes Cut for client and the given nodes.
func (l *Links) Restore(client int, nodes ...int) error {
	var errs []error
	for _, n := range nodes {
		if p := l.Link(client, n); p != nil {
			errs = append(errs, p.Restore())
		}
	}
	return errors.Join(errs...)
}

// CutNode cuts every client's link to node i (the probe's too): new
// connects are refused and open connections closed, as for a dead node.
func (l *Links) CutNode(node int) error {
	return l.each(node, func(p *cluster.Proxy) error { return p.Cut() })
}

// RestoreNode undoes CutNode. It also restores a link to node i that a
// Cut of one client made, so faults that cut single links must not
// target a node that CutNode cuts.
func (l *Links) RestoreNode(node int) error {
	return l.each(node, func(p *cluster.Proxy) error { return p.Restore() })
}

// RestoreAll restores every link and removes every latency (replies' too).
func (l *Links) RestoreAll() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	var ps []*cluster.Proxy
	for _, p := range l.proxies {
		ps = append(ps, p)
	}
	l.mu.Unlock()
	var errs []error
	for _, p := range ps {
		errs = append(errs, p.Restore(), p.SetLatency(0), p.SetReplyLatency(0), p.Blackhole(false))
	}
	return errors.Join(errs...)
}

// SetLatency adds d each way on every client's link to node i (0 removes it).
func (l *Links) SetLatency(node int, d time.Duration) error {
	return l.each(node, func(p *cluster.Proxy) error { return p.SetLatency(d) })
}

// MoveNode points every client's link for node i at addr (a promoted
// replica), closing open connections: the failover of a virtual IP.
func (l *Links) MoveNode(node int, addr string) error {
	return l.each(node, func(p *cluster.Proxy) error { return p.SetUpstream(addr) })
}

// Close closes every proxy.
func (l *Links) Close() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	var errs []error
	for _, p := range l.proxies {
		errs = append(errs, p.Close())
	}
	return errors.Join(errs...)
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
