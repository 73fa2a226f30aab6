package workload

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/cluster/security"
	"github.com/lockbench/lockbench/commandstats"
	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/impl"
)

// Dialer builds go-redis clients with short timeouts and no hidden retries
// (a retry inside go-redis would hide an operation from the history),
// counting the lock commands they send into Cmds.
//
// go-redis's pool stops dialling once it has seen PoolSize failed dials in
// its lifetime (the count is only reset by a background probe that retries
// every second), so a client that met a killed node a few times would keep
// failing for up to 1 s after the node is back: nodePoolSize raises that
// threshold far above what a run reaches. A client has at most a couple of
// commands in flight per node, so the pool never holds more connections
// than before.
//
// ContextTimeoutEnabled makes go-redis honour context deadlines on the
// socket (by default v9 ignores them and waits ReadTimeout): without it a
// quorum strategy's per-node timeout (impl.Config.NodeTimeout) and the
// watchdog's renewal timeout would not bound a call to a paused or slow node.
type Dialer struct {
	// Timeout bounds each dial, read and write (Config.OpTimeout).
	Timeout time.Duration
	// Security is the servers' AUTH and TLS (zero: plain).
	Security security.Security
	// Cmds counts the lock commands sent (countHook); nil: not counted.
	Cmds *atomic.Int64
	// Rounds counts one logical client's round trips (countHook); nil:
	// not counted. Give each logical client its own.
	Rounds *RoundTrips
	// PoolSize overrides nodePoolSize when > 0.
	PoolSize int
	// Unchecked dials connections that hide their file descriptor, so
	// go-redis skips its per-command connection health check (a
	// recvfrom(MSG_PEEK) before every command; v9 has no option for it).
	// The check turns a command on a connection a fault closed into a
	// definite not-sent failure; runs with faults keep it.
	Unchecked bool
}

// nodePoolSize is the go-redis PoolSize of a node client: the number of
// failed dials after which its pool stops dialling (see Dialer).
const nodePoolSize = 1024

// NewDialer returns the Dialer of a run with w (its OpTimeout), counting
// into cmds.
func NewDialer(w Config, cmds *atomic.Int64) Dialer { return Dialer{Timeout: w.OpTimeout, Cmds: cmds} }

// Options returns the go-redis options of a client of addr.
func (d Dialer) Options(addr string) *redis.Options {
	size := nodePoolSize
	if d.PoolSize > 0 {
		size = d.PoolSize
	}
	o := &redis.Options{
		Addr: addr, PoolSize: size, MaxRetries: -1, ContextTimeoutEnabled: true,
		DialTimeout: d.Timeout, ReadTimeout: d.Timeout, WriteTimeout: d.Timeout,
		DialerRetries: 1, DialerRetryTimeout: time.Millisecond,
	}
	if d.Unchecked {
		o.Dialer = dialUnchecked
	}
	return d.Security.Apply(o)
}

// Nodes returns one client per address. With TLS each client has made
// its first connection (a PING, which no count includes) before it
// returns, all nodes at once, waiting at most the larger of Timeout and
// 2 s: a TLS handshake and AUTH cost ~20 ms on 2 busy cores, so a cold
// client's first acquire of a quorum lock, whose per-node timeout is a
// tenth of a 100 ms TTL, timed out on most nodes (redlock: 98% of
// acquires unknown in the ci cells over TLS), which says nothing of the
// lock. Errors are the run's to meet: the first command dials again.
func (d Dialer) Nodes(addrs []string) []redis.UniversalClient {
	out := make([]redis.UniversalClient, len(addrs))
	for i, a := range addrs {
		out[i] = redis.NewClient(d.Options(a))
	}
	if d.Security.TLS {
		ctx, cancel := context.WithTimeout(context.Background(), max(d.Timeout, clusterWarmUp))
		var wg sync.WaitGroup
		for _, c := range out {
			wg.Go(func() { _ = c.Ping(ctx).Err() })
		}
		wg.Wait()
		cancel()
	}
	if d.Cmds != nil || d.Rounds != nil {
		for _, c := range out {
			c.AddHook(countHook{N: d.Cmds, Rounds: d.Rounds})
		}
	}
	return out
}

// Sentinel returns a client of the primary that the Sentinels name master.
func (d Dialer) Sentinel(master string, sentinels []string) redis.UniversalClient {
	c := redis.NewFailoverClient(d.Security.ApplyFailover(&redis.FailoverOptions{
		MasterName: master, SentinelAddrs: sentinels, PoolSize: 4, MaxRetries: -1, ContextTimeoutEnabled: true,
		DialTimeout: d.Timeout, ReadTimeout: d.Timeout, WriteTimeout: d.Timeout,
	}))
	if d.Cmds != nil || d.Rounds != nil {
		c.AddHook(countHook{N: d.Cmds, Rounds: d.Rounds})
	}
	return c
}

// clusterRedirects is the MaxRedirects of a cluster client: how many
// times it follows MOVED or ASK, or retries after TRYAGAIN, CLUSTERDOWN or
// a network error, for one command (go-redis's default). A retried
// command whose earlier attempt may have run is the strategy's to
// classify (impl/strategies' token-lua-cluster reports an unknown outcome).
const clusterRedirects = 3

// Cluster returns a go-redis cluster client over a Redis Cluster's nodes
// (addrs are seeds: it learns the slot map from them), with the node
// options of Options and the Security (security.Security.ApplyCluster): it
// routes each key to its slot's primary and follows MOVED and ASK. It has
// loaded its slot map and command table and connected to each primary
// (PINGs, which no count includes) before it returns, waiting at most the
// larger of Timeout and 2 s.
func (d Dialer) Cluster(addrs []string) redis.UniversalClient {
	o := d.Options(addrs[0])
	c := redis.NewClusterClient(d.Security.ApplyCluster(&redis.ClusterOptions{
		Addrs: addrs, PoolSize: o.PoolSize, MaxRetries: -1, MaxRedirects: clusterRedirects, ContextTimeoutEnabled: true,
		DialTimeout: o.DialTimeout, ReadTimeout: o.ReadTimeout, WriteTimeout: o.WriteTimeout,
		DialerRetries: o.DialerRetries, DialerRetryTimeout: o.DialerRetryTimeout, Dialer: o.Dialer,
	}))
	r := &slotReload{c: c}
	c.OnNewNode(func(n *redis.Client) { n.AddHook(r) })
	if d.Cmds != nil || d.Rounds != nil {
		h := countHook{N: d.Cmds, Rounds: d.Rounds}
		c.AddHook(clusterCount{h})
		c.OnNewNode(func(n *redis.Client) { n.AddHook(nodeCount{h}) })
	}
	// Load the slot map, connect to every primary and load the command
	// table (COMMAND, which the client reads from a random node before
	// its first routed command) now, as a client that has been running
	// has. Otherwise each client's first acquire carries that start-up
	// (measured: 180-400 ms on 2 busy cores, past a 100 ms TTL, which a
	// lock that times its lease from the call's start, as
	// redislock-cluster does, rightly reports as lost), and a client
	// whose first routed command comes while a fault pauses a replica
	// (token-lua-wait-cluster's first compare-and-delete) may ask that
	// replica and time out. Errors are the run's to meet: the first
	// command retries what failed here.
	ctx, cancel := context.WithTimeout(context.Background(), max(d.Timeout, clusterWarmUp))
	defer cancel()
	_ = c.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error { return n.Ping(ctx).Err() })
	_ = c.Ping(ctx).Err()
	return c
}

// clusterWarmUp is the least time Dialer.Cluster gives a new cluster
// client to load its slot map and connect to the primaries.
const clusterWarmUp = 2 * time.Second

// viaClusterKey marks the context of a command sent through a cluster
// client, which counted it (clusterCount) before it reached a node.
type viaClusterKey struct{}

// clusterCount is countHook on a cluster client: it counts each command
// (or pipeline) once, however many nodes it is redirected to, and marks
// its context so that nodeCount does not count it again.
type clusterCount struct{ h countHook }

// DialHook passes dials through.
func (c clusterCount) DialHook(next redis.DialHook) redis.DialHook { return next }

// ProcessHook counts the command and marks its context.
func (c clusterCount) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	count := c.h.ProcessHook(next)
	return func(ctx context.Context, cmd redis.Cmder) error {
		return count(context.WithValue(ctx, viaClusterKey{}, true), cmd)
	}
}

// ProcessPipelineHook counts the pipeline and marks its context.
func (c clusterCount) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	count := c.h.ProcessPipelineHook(next)
	return func(ctx context.Context, cmds []redis.Cmder) error {
		return count(context.WithValue(ctx, viaClusterKey{}, true), cmds)
	}
}

// nodeCount is countHook on a node client of a cluster client: it counts
// what a strategy sends to a node itself, bypassing the cluster client
// (token-lua-wait-cluster pipelines SET and WAIT on the slot's primary:
// ClusterClient.MasterForKey), and leaves out what came through the
// cluster client (counted there) and the cluster client's own reads of
// the slot map (CLUSTER SLOTS, sent with the context of the command that
// needed them, or none).
type nodeCount struct{ h countHook }

// DialHook passes dials through.
func (c nodeCount) DialHook(next redis.DialHook) redis.DialHook { return next }

// ProcessHook counts a command sent to the node directly.
func (c nodeCount) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	count := c.h.ProcessHook(next)
	return func(ctx context.Context, cmd redis.Cmder) error {
		if ctx.Value(viaClusterKey{}) != nil || cmd.Name() == "cluster" {
			return next(ctx, cmd)
		}
		return count(ctx, cmd)
	}
}

// ProcessPipelineHook counts a pipeline sent to the node directly.
func (c nodeCount) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	count := c.h.ProcessPipelineHook(next)
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if ctx.Value(viaClusterKey{}) != nil {
			return next(ctx, cmds)
		}
		return count(ctx, cmds)
	}
}

// slotReload makes a cluster client reload its slot map (CLUSTER SLOTS)
// when a node fails it with a network error: go-redis reloads on MOVED,
// but otherwise only once its map is 10 s old, so after a failover its
// clients would keep dialling the dead primary for up to 10 s. At most
// one reload runs at a time, and at most one per slotReloadEvery.
type slotReload struct {
	c    *redis.ClusterClient
	mu   sync.Mutex
	busy bool
	last time.Time
}

// slotReloadEvery is the least time between two reloads of slotReload.
const slotReloadEvery = 50 * time.Millisecond

// DialHook passes dials through.
func (r *slotReload) DialHook(next redis.DialHook) redis.DialHook { return next }

// ProcessHook reloads the slot map after a network error.
func (r *slotReload) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		r.after(err)
		return err
	}
}

// ProcessPipelineHook reloads the slot map after a network error.
func (r *slotReload) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		r.after(err)
		return err
	}
}

// after starts a reload in the background when err is a network error.
func (r *slotReload) after(err error) {
	var ne net.Error
	if err == nil || !errors.As(err, &ne) && !errors.Is(err, io.EOF) && !errors.Is(err, syscall.ECONNRESET) && !errors.Is(err, syscall.ECONNREFUSED) {
		return
	}
	r.mu.Lock()
	if r.busy || time.Since(r.last) < slotReloadEvery {
		r.mu.Unlock()
		return
	}
	r.busy, r.last = true, time.Now()
	r.mu.Unlock()
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		r.c.ReloadState(ctx)
		r.mu.Lock()
		r.busy = false
		r.mu.Unlock()
	}()
}

// uncheckedConn is a TCP connection that does not implement syscall.Conn:
// go-redis's pool health check (connCheck) needs the file descriptor and
// skips connections without one. Reads and writes still go through the
// TCP connection and Go's netpoller.
type uncheckedConn struct{ net.Conn }

// dialUnchecked is the go-redis Dialer of Dialer.Unchecked.
func dialUnchecked(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return uncheckedConn{c}, nil
}

// countHook is a go-redis hook that counts the Redis commands the lock
// clients send (a pipeline counts each command) into N, for the
// client-side "commands per grant", and, when Rounds is set, the round
// trips of one logical client (RoundTrips). Connection set-up commands
// that go-redis sends through its hooks (HELLO, CLIENT ...) are left out,
// as the server-side count (commandstats.CommandCalls) leaves them out, so the two
// compare.
type countHook struct {
	N      *atomic.Int64
	Rounds *RoundTrips
}

// RoundTrips counts the round trips one logical client makes to its
// servers, over all its go-redis clients (one per node): a command or
// pipeline sent while none of the client's other commands is in flight
// starts a round trip; one sent while another is in flight shares it. A
// quorum lock's parallel SETs to five nodes are one round trip, a
// sequential call's commands one each. It is a count, so it reads the
// same on a busy machine (the time ratio it replaces moved 9-42% between
// two quiet runs). The zero value is ready to use.
type RoundTrips struct {
	inFlight, n atomic.Int64
}

// load returns the round trips counted so far.
func (r *RoundTrips) load() int64 { return r.n.Load() }

// Begin notes a request sent by a client the strategy dials itself
// (impl.Config.RoundTrip) and returns the func to call at its reply.
func (r *RoundTrips) Begin() func() {
	r.start()
	return r.end
}

// start notes a command (or pipeline) sent; its end must follow.
func (r *RoundTrips) start() {
	if r.inFlight.Add(1) == 1 {
		r.n.Add(1)
	}
}

// end notes a command's (or pipeline's) reply, or its failure.
func (r *RoundTrips) end() { r.inFlight.Add(-1) }

// DialHook passes dials through.
func (h countHook) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) { return next(ctx, network, addr) }
}

// ProcessHook counts one command (and its round trip).
func (h countHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if commandstats.HarnessCommand(cmd.Name()) {
			return next(ctx, cmd)
		}
		if h.N != nil {
			h.N.Add(1)
		}
		if h.Rounds != nil {
			h.Rounds.start()
			defer h.Rounds.end()
		}
		return next(ctx, cmd)
	}
}

// ProcessPipelineHook counts each command of a pipeline (and the
// pipeline's one round trip).
func (h countHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		lock := 0
		for _, c := range cmds {
			if !commandstats.HarnessCommand(c.Name()) {
				lock++
			}
		}
		if h.N != nil {
			h.N.Add(int64(lock))
		}
		if h.Rounds != nil && lock > 0 {
			h.Rounds.start()
			defer h.Rounds.end()
		}
		return next(ctx, cmds)
	}
}

// DialNodes returns an Env.Nodes that gives each logical client its own
// go-redis clients of addrs, one per node, from dial(client) (client -1 is
// the liveness probe, which may dial with a longer timeout).
func DialNodes(addrs []string, dial func(client int) Dialer) func(client int) ([]redis.UniversalClient, error) {
	return func(client int) ([]redis.UniversalClient, error) { return dial(client).Nodes(addrs), nil }
}

// NewEnv returns the Env of a run of st that records into hw with clock
// (hw nil: NoHistory, nothing recorded), with fresh operation ids; the
// caller sets how clients reach the servers (Nodes, Endpoints), the
// resource and the faults.
func NewEnv(st impl.Strategy, hw *history.Writer, clock *history.Clock) Env {
	env := Env{Strategy: st, Clock: clock, IDs: &history.IDs{}}
	if hw == nil {
		env.NoHistory = true
	} else {
		env.History = hw
	}
	return env
}
