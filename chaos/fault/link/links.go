// Package link holds the per-(client, node) TCP proxies a scenario
// routes links through (Links) and the fault primitives played on them:
// a cut, a black hole, latency, a moved address (link.go), a lost reply
// and a slow reply (reply.go). They implement chaos/fault's Fault and
// are listed by fault.Faults.
package link

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/lockbench/lockbench/cluster"
	"github.com/lockbench/lockbench/cluster/proxy"
)

// Links holds the proxies of a run with Setup.Proxies: one per (client,
// node). It is safe for concurrent use after construction.
type Links struct {
	mu      sync.Mutex
	proxies map[[2]int]*proxy.Proxy
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
	l := &Links{proxies: map[[2]int]*proxy.Proxy{}}
	proxied := func(i int) bool { return only == nil || slices.Contains(only, i) }
	for _, n := range nodes {
		l.direct = append(l.direct, n.Addr())
	}
	for c := -1; c < clients; c++ {
		for i, n := range nodes {
			if !proxied(i) {
				continue
			}
			p, err := proxy.New(ctx, fmt.Sprintf("c%d-%s", c, n.Name()), n.Addr())
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
func (l *Links) Link(client, node int) *proxy.Proxy {
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
func (l *Links) each(node int, f func(*proxy.Proxy) error) error {
	l.mu.Lock()
	var ps []*proxy.Proxy
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
	return l.each(node, func(p *proxy.Proxy) error { return p.Cut() })
}

// RestoreNode undoes CutNode. It also restores a link to node i that a
// Cut of one client made, so faults that cut single links must not
// target a node that CutNode cuts.
func (l *Links) RestoreNode(node int) error {
	return l.each(node, func(p *proxy.Proxy) error { return p.Restore() })
}

// RestoreAll restores every link and removes every latency (replies' too).
func (l *Links) RestoreAll() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	var ps []*proxy.Proxy
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
	return l.each(node, func(p *proxy.Proxy) error { return p.SetLatency(d) })
}

// MoveNode points every client's link for node i at addr (a promoted
// replica), closing open connections: the failover of a virtual IP.
func (l *Links) MoveNode(node int, addr string) error {
	return l.each(node, func(p *proxy.Proxy) error { return p.SetUpstream(addr) })
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
