package link

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/lockbench/lockbench/cluster"
)

// Cut partitions one client from some nodes: its proxies to them
// (Links) refuse connects and drop open connections until Heal. The
// protected resource is in-process and stays reachable. Evidence:
// "connect refused" (a fresh connect to the first cut link), or "connect
// still accepted".
type Cut struct {
	Links  *Links
	Client int
	Nodes  []int // node indexes in link order
}

// Name is the primitive's name, "link-cut" (Fault.Name).
func (*Cut) Name() string { return "link-cut" }

// Needs lists the backend features Inject and Heal use (Fault.Needs).
func (*Cut) Needs() []cluster.Feature { return nil }

// Inject cuts the links, which must exist, and tries a connect through
// the first.
func (c *Cut) Inject(context.Context) (string, error) {
	if err := c.check(); err != nil {
		return "", err
	}
	if err := c.Links.Cut(c.Client, c.Nodes...); err != nil {
		return "", err
	}
	return refused(c.Links.Link(c.Client, c.Nodes[0]).Addr()), nil
}

// check reports an error unless the client has a proxy to every node cut.
func (c *Cut) check() error {
	if c.Links == nil || len(c.Nodes) == 0 {
		return errors.New("needs per-link proxies (Setup.Proxies) and a node to cut")
	}
	for _, n := range c.Nodes {
		if c.Links.Link(c.Client, n) == nil {
			return fmt.Errorf("client %d has no proxy to node %d", c.Client, n+1)
		}
	}
	return nil
}

// Heal restores the links.
func (c *Cut) Heal(context.Context) (string, error) {
	if c.Links == nil {
		return "", nil
	}
	return "", c.Links.Restore(c.Client, c.Nodes...)
}

// Latency delays every link to one node (each client's and the
// probe's proxy) by d in each direction until Heal: a round trip gains
// 2×d. Evidence: "PING through the link took 101.3ms", measured through
// the probe's link, or "PING failed: ...".
type Latency struct {
	Links *Links
	Node  int // node index in link order
	D     time.Duration
	// inForce is when Inject had set the latency on every link, before
	// its PING: the start of the window in which every link is slow.
	InForce time.Time
}

// Name is the primitive's name, "link-latency" (Fault.Name).
func (*Latency) Name() string { return "link-latency" }

// Needs lists the backend features Inject and Heal use (Fault.Needs).
func (*Latency) Needs() []cluster.Feature { return nil }

// Inject sets the latency on every link to the node and measures a PING
// through the probe's link (client -1), which must exist.
func (l *Latency) Inject(ctx context.Context) (string, error) {
	probe := l.Links.Link(-1, l.Node)
	if probe == nil {
		return "", fmt.Errorf("node %d has no proxies (Setup.Proxies)", l.Node+1)
	}
	if err := l.Links.SetLatency(l.Node, l.D); err != nil {
		return "", err
	}
	l.InForce = time.Now()
	rtt, err := PingRTT(ctx, probe.Addr())
	if err != nil {
		return "PING failed: " + err.Error(), nil
	}
	return fmt.Sprintf("PING through the link took %.1fms", float64(rtt)/1e6), nil
}

// Heal removes the latency.
func (l *Latency) Heal(context.Context) (string, error) {
	if l.Links == nil {
		return "", nil
	}
	return "", l.Links.SetLatency(l.Node, 0)
}

// Move points every client's link to one node at another address
// and closes their open connections: the failover of a virtual IP.
// Nothing moves it back; Heal completes a move Inject did not make.
// Evidence: "clients' links to node 1 moved to n2".
type Move struct {
	Links *Links
	Node  int           // node index in link order
	To    *cluster.Node // where the links lead afterwards

	mu    sync.Mutex
	moved bool
}

// Name is the primitive's name, "link-move" (Fault.Name).
func (*Move) Name() string { return "link-move" }

// Needs lists the backend features Inject and Heal use (Fault.Needs).
func (*Move) Needs() []cluster.Feature { return nil }

// Inject moves the links once; without Links (clients that find the
// primary through Sentinel) it does nothing.
func (m *Move) Inject(context.Context) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.moved || m.Links == nil {
		return "", nil
	}
	if err := m.Links.MoveNode(m.Node, m.To.Addr()); err != nil {
		return "", fmt.Errorf("move links to %s: %w", m.To.Name(), err)
	}
	m.moved = true
	return fmt.Sprintf("clients' links to node %d moved to %s", m.Node+1, m.To.Name()), nil
}

// Heal makes the move if Inject did not.
func (m *Move) Heal(ctx context.Context) (string, error) { return m.Inject(ctx) }

// PingRTT measures one RESP PING round trip to addr on a fresh raw TCP
// connection (no client handshake, so only the PING crosses a slow link),
// within 2 s.
func PingRTT(ctx context.Context, addr string) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return 0, fmt.Errorf("ping %s: %w", addr, err)
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	start := time.Now()
	if _, err := conn.Write([]byte("PING\r\n")); err != nil {
		return 0, fmt.Errorf("ping %s: %w", addr, err)
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return 0, fmt.Errorf("ping %s: %w", addr, err)
	}
	rtt := time.Since(start)
	if strings.TrimSpace(line) != "+PONG" {
		return 0, fmt.Errorf("ping %s: reply %q", addr, line)
	}
	return rtt, nil
}

// refused reports, as note text, whether a TCP connect to addr is refused
// now (evidence that a cut link is really down).
func refused(addr string) string {
	conn, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
	if err != nil {
		return "connect refused"
	}
	conn.Close()
	return "connect still accepted"
}

// Blackhole partitions one client from some nodes the slow way: its
// proxies to them (Links) accept connects but drop every byte, on open
// and new connections, until Heal, which closes the connections that
// carried dropped bytes (proxy.Proxy.Blackhole). Calls through them
// hang until their budget. The protected resource is in-process and
// stays reachable. Evidence: "PING unanswered after 100ms" (a PING
// through the first link), or what came back instead.
type Blackhole struct {
	Links  *Links
	Client int
	Nodes  []int // node indexes in link order
}

// Name is the primitive's name, "link-blackhole" (Fault.Name).
func (*Blackhole) Name() string { return "link-blackhole" }

// Needs lists the backend features Inject and Heal use (Fault.Needs).
func (*Blackhole) Needs() []cluster.Feature { return nil }

// Inject black-holes the links, which must exist, and sends a PING
// through the first.
func (b *Blackhole) Inject(context.Context) (string, error) {
	if err := (&Cut{Links: b.Links, Client: b.Client, Nodes: b.Nodes}).check(); err != nil {
		return "", err
	}
	var errs []error
	for _, n := range b.Nodes {
		errs = append(errs, b.Links.Link(b.Client, n).Blackhole(true))
	}
	if err := errors.Join(errs...); err != nil {
		return "", err
	}
	return unanswered(b.Links.Link(b.Client, b.Nodes[0]).Addr()), nil
}

// Heal lets data flow again on every link.
func (b *Blackhole) Heal(context.Context) (string, error) {
	if b.Links == nil {
		return "", nil
	}
	var errs []error
	for _, n := range b.Nodes {
		if p := b.Links.Link(b.Client, n); p != nil {
			errs = append(errs, p.Blackhole(false))
		}
	}
	return "", errors.Join(errs...)
}

// ClientLatency delays one client's links to some nodes by d in each
// direction until Heal (the "link-latency" primitive aimed at a client's
// links rather than at a node's). Evidence: "+d each way on client 2's
// links to n1".
type ClientLatency struct {
	Links  *Links
	Client int
	Nodes  []int
	D      time.Duration
}

// Name is the primitive's name, "link-latency" (Fault.Name).
func (*ClientLatency) Name() string { return "link-latency" }

// Needs lists the backend features Inject and Heal use (Fault.Needs).
func (*ClientLatency) Needs() []cluster.Feature { return nil }

// Inject sets the latency on every link, which must exist.
func (c *ClientLatency) Inject(context.Context) (string, error) {
	if err := (&Cut{Links: c.Links, Client: c.Client, Nodes: c.Nodes}).check(); err != nil {
		return "", err
	}
	var errs []error
	for _, n := range c.Nodes {
		errs = append(errs, c.Links.Link(c.Client, n).SetLatency(c.D))
	}
	return fmt.Sprintf("+%v each way on client %d's links to %d node(s)", c.D, c.Client, len(c.Nodes)), errors.Join(errs...)
}

// Heal removes the latency.
func (c *ClientLatency) Heal(context.Context) (string, error) {
	if c.Links == nil {
		return "", nil
	}
	var errs []error
	for _, n := range c.Nodes {
		if p := c.Links.Link(c.Client, n); p != nil {
			errs = append(errs, p.SetLatency(0))
		}
	}
	return "", errors.Join(errs...)
}

// unanswered connects to addr and sends a RESP PING: a black-holed link
// accepts the connect and never answers.
func unanswered(addr string) string {
	const wait = 100 * time.Millisecond
	conn, err := net.DialTimeout("tcp", addr, wait)
	if err != nil {
		return fmt.Sprintf("connect failed: %v", err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(wait))
	if _, err := conn.Write([]byte("*1\r\n$4\r\nPING\r\n")); err != nil {
		return fmt.Sprintf("connect accepted, PING not sent: %v", err)
	}
	buf := make([]byte, 16)
	if n, err := conn.Read(buf); err == nil {
		return fmt.Sprintf("connect accepted, PING answered %q", buf[:n])
	}
	return fmt.Sprintf("connect accepted, PING unanswered after %v", wait)
}
