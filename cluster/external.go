package cluster

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// External describes an existing Redis deployment for the external
// backend. lockbench never starts, stops or empties these servers: it
// only sends lock commands on its own keys (workload.Config.KeyPrefix),
// scans for keys under that prefix before a run (KeysUnder), deletes its
// keys after it (DeleteKeysUnder; neither with SharedKeys) and, with
// AllowDestructive, sends the fault commands listed there.
type External struct {
	// Addrs are the redis-servers, "host:port", in node order (n1, n2,
	// ...): for a replicated topology the primary first. A topology of N
	// nodes uses the first N.
	Addrs []string
	// EtcdEndpoints are the client endpoints ("host:port") of an etcd
	// cluster, for the etcd strategies (topology Etcd). lockbench only
	// takes locks under its key prefix there.
	EtcdEndpoints []string
	// ZooKeeperServers are the servers ("host:port") of a ZooKeeper
	// ensemble, for the ZooKeeper strategies (topology ZooKeeper): a
	// connect string without a chroot. lockbench only makes lock nodes
	// under its key prefix there.
	ZooKeeperServers []string
	// ClusterAddrs are seed nodes of a Redis Cluster, "host:port", for
	// the strategies that run on one (topology RedisCluster): Start asks
	// the first that answers for CLUSTER NODES and makes a node of every
	// primary and replica listed there.
	ClusterAddrs []string
	// SentinelAddrs are the Sentinels, "host:port" (optional).
	SentinelAddrs []string
	// MasterName is the name the Sentinels monitor the primary under.
	// Default DefaultMasterName ("lockbench").
	MasterName string
	// AllowDestructive permits faults through Redis commands on these
	// servers: DEBUG SLEEP (Node.PauseFor), CLIENT PAUSE
	// (Node.HoldReplication), REPLICAOF NO ONE (Node.Promote), REPLICAOF
	// (Node.ReplicaOf). Without it they return an error wrapping
	// ErrUnsupported that names the flag. Each blocks or reconfigures the
	// server for every user of it, not only for lockbench.
	AllowDestructive bool
	// SharedKeys says several lockbench processes (on several client
	// machines) contend on the same keys at once: lockbench then neither
	// refuses keys already under its prefix before a run nor deletes its
	// keys after one (the caller deletes them once every process is done).
	SharedKeys bool
}

// SharedKeysFlag is the lockbench flag that sets External.SharedKeys.
const SharedKeysFlag = "--shared-keys"

// AllowDestructiveFlag is the lockbench flag that sets
// External.AllowDestructive, named in refusals.
const AllowDestructiveFlag = "--allow-destructive"

// externalBackend drives nothing: the servers run elsewhere.
type externalBackend struct{ ext External }

func newExternalBackend(o Options) externalBackend { return externalBackend{ext: o.External} }

// externalFeatures: proxies on this host always (they only affect
// lockbench's own connections); pause (DEBUG SLEEP) and the other Redis
// command faults only with AllowDestructive.
func externalFeatures(o Options) []Feature {
	if o.External.AllowDestructive {
		return []Feature{FeaturePause, FeatureProxies, FeatureRedisFaults}
	}
	return []Feature{FeatureProxies}
}

func (b externalBackend) name() string        { return BackendExternal }
func (b externalBackend) features() []Feature { return externalFeatures(Options{External: b.ext}) }
func (b externalBackend) prepare(_ context.Context, c *Cluster) error {
	return externalMissing(b.ext, c.topo.Kind)
}
func (b externalBackend) start(context.Context, *Node) error {
	return unsupported(b, "start or restart a server")
}
func (b externalBackend) kill(*Node) error { return unsupported(b, "kill a server") }
func (b externalBackend) pause(*Node) error {
	return unsupported(b, "pause a server with a signal (Node.PauseFor uses DEBUG SLEEP instead)")
}
func (b externalBackend) resume(*Node) error { return unsupported(b, "resume a server") }
func (b externalBackend) state(*Node) (string, error) {
	return "", unsupported(b, "read a server's process state")
}
func (b externalBackend) pid(*Node) int      { return 0 }
func (b externalBackend) running(*Node) bool { return true }
func (b externalBackend) close() error       { return nil }
func (b externalBackend) setClockOffset(*Node, time.Duration) error {
	return unsupported(b, "set a server's clock")
}
func (b externalBackend) isolate(context.Context, *Node, bool) error {
	return unsupported(b, "isolate a server")
}

// allowRedisFault returns nil when op, a fault through a Redis command,
// may run on the cluster's servers, else an error wrapping ErrUnsupported
// naming AllowDestructiveFlag.
func (c *Cluster) allowRedisFault(op string) error {
	if c.be.name() != BackendExternal || c.opts.External.AllowDestructive {
		return nil
	}
	return fmt.Errorf("%w: external backend: %s changes a server others may use; it runs only with %s", ErrUnsupported, op, AllowDestructiveFlag)
}

// startExternal makes nodes of the first Topology.Nodes addresses (and the
// Sentinels) and checks each answers PING within ReadyTimeout.
func (c *Cluster) startExternal(ctx context.Context) error {
	ext := c.opts.External
	if len(ext.Addrs) < c.topo.Nodes {
		return fmt.Errorf("cluster: external backend: topology %s needs %d servers, --redis-addrs gives %d", c.topo, c.topo.Nodes, len(ext.Addrs))
	}
	if c.topo.Sentinels > 0 && len(ext.SentinelAddrs) == 0 {
		return fmt.Errorf("cluster: external backend: topology %s needs Sentinels: give --sentinel-addrs and --master-name", c.topo)
	}
	mk := func(name, addr string, sentinel bool) (*Node, error) {
		h, p, err := hostPort(addr)
		if err != nil {
			return nil, fmt.Errorf("cluster: external backend: address %q: %v (want host:port)", addr, err)
		}
		n := &Node{c: c, name: name, sentinel: sentinel, dir: c.dir, host: h, port: p, fixed: true, everStarted: true}
		info, err := rawInfo(ctx, n.Addr(), ReadyTimeout, c.opts.Security)
		if err != nil {
			if e := c.opts.Security.explainSecurityError(addr, err); errors.Is(e, ErrEnvironment) {
				return nil, fmt.Errorf("cluster: external %s: %w", name, e)
			}
			return nil, fmt.Errorf("%w: cluster: external %s at %s does not answer PING: %v (is it up and reachable from here? with a password or TLS, see --redis-password-env and --tls)", ErrEnvironment, name, addr, c.opts.Security.Redact(err.Error()))
		}
		n.version = info["redis_version"]
		return n, nil
	}
	for i, a := range ext.Addrs[:c.topo.Nodes] {
		n, err := mk("n"+strconv.Itoa(i+1), a, false)
		if err != nil {
			return err
		}
		c.nodes = append(c.nodes, n)
	}
	for i, a := range ext.SentinelAddrs {
		s, err := mk("s"+strconv.Itoa(i+1), a, true)
		if err != nil {
			return err
		}
		c.sentinels = append(c.sentinels, s)
	}
	c.version = c.nodes[0].version
	return nil
}

// PauseFor makes the node answer nothing for d, then returns: DEBUG SLEEP
// on the external backend (the server runs the command and blocks every
// client for d; needs External.AllowDestructive); Pause, a wait of d and
// Resume on the others. Commands sent meanwhile run afterwards. ctx bounds
// the wait (the DEBUG SLEEP itself cannot be cut short).
func (n *Node) PauseFor(ctx context.Context, d time.Duration) error {
	if n.c.be.name() != BackendExternal {
		if err := n.Pause(); err != nil {
			return err
		}
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
		}
		return n.Resume()
	}
	if err := n.c.allowRedisFault("DEBUG SLEEP"); err != nil {
		return err
	}
	n.op.Lock()
	defer n.op.Unlock()
	rc := redis.NewClient(n.c.opts.Security.Apply(&redis.Options{Addr: n.Addr(), DialTimeout: time.Second, ReadTimeout: d + 5*time.Second,
		WriteTimeout: time.Second, MaxRetries: -1, PoolSize: 1, DisableIdentity: true}))
	defer rc.Close()
	sec := strconv.FormatFloat(d.Seconds(), 'f', 3, 64)
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), d+5*time.Second)
	defer cancel()
	if err := rc.Do(sctx, "DEBUG", "SLEEP", sec).Err(); err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("cluster: DEBUG SLEEP %s on %s: no answer within %v", sec, n.name, d+5*time.Second)
		}
		return fmt.Errorf("cluster: DEBUG SLEEP %s on %s: %w (the server needs enable-debug-command yes or local)", sec, n.name, err)
	}
	n.c.opts.Logf("cluster: %s slept %ss (DEBUG SLEEP)", n.name, sec)
	return nil
}

// StaleKeys describes keys found under a key prefix on a server (KeysUnder).
type StaleKeys struct {
	// Addr is the server, Prefix the key prefix scanned for.
	Addr, Prefix string
	// N is the number of matching keys found; AtLeast is true when the
	// scan stopped at its first batch with a match, so there may be more.
	N       int
	AtLeast bool
	// Example is one of the keys.
	Example string
}

// scanCount is the COUNT hint of KeysUnder's and DeleteKeysUnder's SCANs.
const scanCount = 1000

// globEscape escapes the glob characters of a SCAN MATCH pattern.
func globEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// keyClient is a one-connection client with no retries for the key scans.
func keyClient(addr string, sec Security) *redis.Client {
	return redis.NewClient(sec.Apply(&redis.Options{Addr: addr, DialTimeout: ReadyTimeout, ReadTimeout: ReadyTimeout, WriteTimeout: ReadyTimeout,
		MaxRetries: -1, DialerRetries: 1, PoolSize: 1, DisableIdentity: true, Protocol: 2, ContextTimeoutEnabled: true}))
}

// tlsHandshakeTimeout bounds probeTLS's handshake: a plain Redis port
// answers a TLS ClientHello with nothing (it waits for a line), so only a
// timeout tells it apart.
const tlsHandshakeTimeout = 2 * time.Second

// probeTLS checks, with TLS on, that addr completes a TLS handshake within
// tlsHandshakeTimeout; a server that connects but does not is taken for
// a plain port (one line with the fix, wrapping ErrEnvironment).
func probeTLS(ctx context.Context, addr string, sec Security) error {
	if !sec.TLS {
		return nil
	}
	cfg, err := sec.TLSConfig()
	if err != nil {
		return err
	}
	if cfg.ServerName == "" {
		cfg.ServerName, _, _ = net.SplitHostPort(addr)
	}
	hctx, cancel := context.WithTimeout(ctx, tlsHandshakeTimeout)
	defer cancel()
	raw, err := (&net.Dialer{}).DialContext(hctx, "tcp", addr)
	if err != nil {
		return unreachable(addr, "a TCP connect", sec, err)
	}
	defer raw.Close()
	if err := tls.Client(raw, cfg).HandshakeContext(hctx); err != nil {
		if hctx.Err() != nil && ctx.Err() == nil {
			return fmt.Errorf("%w: cluster: external server %s does not speak TLS (no handshake within %v: a plain port?): drop --tls, or give the server's tls-port", ErrEnvironment, addr, tlsHandshakeTimeout)
		}
		return unreachable(addr, "a TLS handshake", sec, err)
	}
	return nil
}

// unreachable is the error of an external server at addr that failed
// cmd (what lockbench asked): the security explanation when the failure
// is a password or certificate, else one line with the fix; it wraps
// ErrEnvironment and never quotes the password.
func unreachable(addr, cmd string, sec Security, err error) error {
	if e := sec.explainSecurityError(addr, err); errors.Is(e, ErrEnvironment) {
		return fmt.Errorf("cluster: external server: %w", e)
	}
	return fmt.Errorf("%w: cluster: external server %s does not answer %s: %v (is it up and reachable from here? with a password or TLS, see --redis-password-env and --tls)", ErrEnvironment, addr, cmd, sec.Redact(err.Error()))
}

// RunID returns the run_id of the server at addr (INFO server): the same
// for every address that reaches the same server process. A server that
// does not answer gives an error wrapping ErrEnvironment that names addr.
// ctx bounds the call.
func RunID(ctx context.Context, addr string, sec Security) (string, error) {
	if err := probeTLS(ctx, addr, sec); err != nil {
		return "", err
	}
	rc := keyClient(addr, sec)
	defer rc.Close()
	info, err := rc.Info(ctx, "server").Result()
	if err != nil {
		return "", unreachable(addr, "INFO server", sec, err)
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "run_id:"); ok {
			return v, nil
		}
	}
	return "", nil
}

// KeysUnder scans the server at addr for keys under prefix (SCAN 0 MATCH
// prefix* COUNT 1000, glob characters in prefix escaped) and stops at the
// first batch with a match: nil when the server holds none. A server that
// does not answer gives an error wrapping ErrEnvironment that names addr.
// ctx bounds the scan.
func KeysUnder(ctx context.Context, addr, prefix string, sec Security) (*StaleKeys, error) {
	rc := keyClient(addr, sec)
	defer rc.Close()
	var cursor uint64
	for {
		keys, next, err := rc.Scan(ctx, cursor, globEscape(prefix)+"*", scanCount).Result()
		if err != nil {
			return nil, unreachable(addr, fmt.Sprintf("SCAN (the check for keys under %q)", prefix), sec, err)
		}
		if len(keys) > 0 {
			slices.Sort(keys)
			return &StaleKeys{Addr: addr, Prefix: prefix, N: len(keys), AtLeast: next != 0, Example: keys[0]}, nil
		}
		if cursor = next; cursor == 0 {
			return nil, nil
		}
	}
}

// DeleteKeysUnder deletes every key under prefix on the server at addr
// (SCAN MATCH prefix* and UNLINK) and returns how many it deleted. A
// replica's READONLY refusal ends it without an error (the primary's
// deletions replicate). ctx bounds it.
func DeleteKeysUnder(ctx context.Context, addr, prefix string, sec Security) (int, error) {
	rc := keyClient(addr, sec)
	defer rc.Close()
	var cursor uint64
	n := 0
	for {
		keys, next, err := rc.Scan(ctx, cursor, globEscape(prefix)+"*", scanCount).Result()
		if err != nil {
			return n, fmt.Errorf("cluster: %s: SCAN for keys under %q: %w", addr, prefix, err)
		}
		if len(keys) > 0 {
			d, err := rc.Unlink(ctx, keys...).Result()
			if err != nil {
				if strings.HasPrefix(err.Error(), "READONLY") {
					return n, nil
				}
				return n, fmt.Errorf("cluster: %s: UNLINK keys under %q: %w", addr, prefix, err)
			}
			n += int(d)
		}
		if cursor = next; cursor == 0 {
			return n, nil
		}
	}
}

// ProbeFaultCommands checks, before a run on the external backend, that
// the server at addr accepts the Redis commands through which the features
// need are injected there: FeaturePause sends DEBUG SLEEP 0 (a no-op),
// which Redis 7 refuses unless enable-debug-command is yes (or local and
// lockbench runs on the server's host). A refusal gives an error wrapping
// ErrEnvironment that names the server and the fix; other features need no
// probe.
func ProbeFaultCommands(ctx context.Context, addr string, need []Feature, sec Security) error {
	if !slices.Contains(need, FeaturePause) {
		return nil
	}
	rc := keyClient(addr, sec)
	defer rc.Close()
	if err := rc.Do(ctx, "DEBUG", "SLEEP", "0").Err(); err != nil {
		return fmt.Errorf("%w: cluster: external server %s refuses DEBUG SLEEP, through which the scenario pauses it (%s): set enable-debug-command yes (or local, when lockbench runs on that host) in its config and restart it, or choose a scenario without pause",
			ErrEnvironment, addr, sec.Redact(firstLine(err)))
	}
	return nil
}
