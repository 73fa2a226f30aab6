package strategies

import (
	"context"
	"encoding/binary"
	"fmt"
	"google.golang.org/grpc"
	"net"
	"time"

	"github.com/lockbench/lockbench/impl"
)

// Shared by the strategies on consensus systems (etcd-*, zk-*): their
// Lockers dial Config.Endpoints themselves, one client (etcd) or session
// (ZooKeeper) per Locker, kept across holds and replaced when it ends.

// Library modules of the consensus strategies and the versions go.mod
// requires (TestLibraryVersionsMatchGoMod checks them).
const (
	etcdClientModule  = "go.etcd.io/etcd/client/v3"
	etcdClientVersion = "v3.7.3"
	zkModule          = "github.com/go-zookeeper/zk"
	zkVersion         = "v1.0.4"
)

// KeyLeaser is implemented by Lockers whose locks do not live on Redis.
// The liveness probe (workload.Probe) asks it what Redis's PTTL tells of
// a Redis key: how long the lock on key stays held if its holder stops
// renewing.
type KeyLeaser interface {
	// KeyLease returns, in ms, what remains of the lease of key's current
	// holder (an upper bound where the server tells no more, see each
	// strategy), NoExpiry (-1) when key is held by something that never
	// expires (a deadlock), or NotHeld (-2) when nobody holds key. An
	// error means the server did not answer. ctx bounds the calls.
	KeyLease(ctx context.Context, key string) (int64, error)
}

// ServerTTLer is implemented by strategies whose server enforces another
// TTL than the run's: etcd leases count whole seconds, so etcd-mutex and
// etcd-fenced hold a lock for the run's TTL rounded up to a second.
// Reports and scenarios that time faults by the TTL should use it.
type ServerTTLer interface {
	// ServerTTL returns the TTL the server enforces for run TTL ttl.
	ServerTTL(ttl time.Duration) time.Duration
}

// KeyLease values with Redis PTTL's meaning.
const (
	// NoExpiry: the key is held without a lease (Redis PTTL -1).
	NoExpiry int64 = -1
	// NotHeld: nobody holds the key (Redis PTTL -2).
	NotHeld int64 = -2
)

// validateEndpoints checks the fields the consensus strategies need.
func validateEndpoints(c impl.Config, strategy string) error {
	switch {
	case len(c.Endpoints) == 0:
		return fmt.Errorf("%s: config: no server endpoints (Config.Endpoints)", strategy)
	case c.TTL < time.Millisecond:
		return fmt.Errorf("%s: config: TTL %v is below 1ms", strategy, c.TTL)
	case c.Owner == "":
		return fmt.Errorf("%s: config: empty Owner", strategy)
	}
	return nil
}

// hookedConn is a client connection to a consensus server that calls
// the Locker's Hook at PointRenew before every write: for etcd and
// ZooKeeper every request that keeps a lease or session alive (a
// keep-alive, a ping, any request) goes out through Write, so a client
// the nemesis pauses there sends nothing at all while paused, as a
// process stopped by a GC pause or SIGSTOP. ErrCrashed (or any other
// hook error) closes the connection and fails the write: a crashed
// client sends nothing more.
type hookedConn struct {
	net.Conn
	ctx  context.Context // the Locker's: a blocked hook returns at Close
	hook impl.Hook
}

// Write calls the hook, then writes b.
func (c *hookedConn) Write(b []byte) (int, error) {
	if err := c.hook(c.ctx, impl.PointRenew); err != nil {
		c.Conn.Close()
		return 0, fmt.Errorf("impl: client stopped at %s: %w", impl.PointRenew, err)
	}
	return c.Conn.Write(b)
}

// dialHooked dials addr, calling hook at PointRenew first (a paused
// client dials nobody), and wraps the connection in a hookedConn; with a
// nil hook it only dials.
func dialHooked(ctx, lockerCtx context.Context, hook impl.Hook, addr string, timeout time.Duration) (net.Conn, error) {
	if hook != nil {
		if err := hook(lockerCtx, impl.PointRenew); err != nil {
			return nil, fmt.Errorf("impl: client stopped at %s: %w", impl.PointRenew, err)
		}
	}
	d := net.Dialer{Timeout: timeout}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil || hook == nil {
		return conn, err
	}
	return &hookedConn{Conn: conn, ctx: lockerCtx, hook: hook}, nil
}

// countRoundTrips is a gRPC unary interceptor that reports each call to
// roundTrip (Config.RoundTrip) from its start to its reply; nil counts
// nothing.
func countRoundTrips(roundTrip func() func()) grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		if roundTrip != nil {
			defer roundTrip()()
		}
		return invoker(ctx, method, req, reply, cc, opts...)
	}
}

// zkCountingConn reports each ZooKeeper request written on the
// connection to roundTrip as one round trip (Config.RoundTrip): a packet
// whose xid (bytes 4-8, after the length) is positive. Pings (xid -2),
// auth (-4), set-watches (-8) and the session's connect request (no xid:
// the first packet) are left out.
type zkCountingConn struct {
	net.Conn
	roundTrip func() func()
	connected bool
}

// Write counts a request, then writes it.
func (c *zkCountingConn) Write(b []byte) (int, error) {
	if !c.connected {
		c.connected = true // the connect request
	} else if len(b) >= 8 && int32(binary.BigEndian.Uint32(b[4:8])) > 0 {
		c.roundTrip()()
	}
	return c.Conn.Write(b)
}

// HookedDialer returns a dial function for a lock's own network clients
// (package locktest hands it to a Go lock on etcd or ZooKeeper): each
// connection calls hook at PointRenew before every write, as the built-in
// consensus locks' connections do (dialHooked), so a client the nemesis
// pauses sends nothing, keep-alives included, and a crashed one nothing
// more. lockerCtx ends a blocked hook when the Locker closes; timeout
// bounds each dial. A nil hook dials plainly.
func HookedDialer(lockerCtx context.Context, hook impl.Hook, timeout time.Duration) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, _, addr string) (net.Conn, error) {
		return dialHooked(ctx, lockerCtx, hook, addr, timeout)
	}
}
