package cluster

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/cluster/security"
)

// External describes an existing Redis deployment for the external
// backend. lockbench never starts, stops or empties these servers: it
// only sends lock commands on its own keys (workload.Config.KeyPrefix),
// scans for keys under that prefix before a run (preflight.KeysUnder),
// deletes its keys after it (preflight.DeleteKeysUnder; neither with
// SharedKeys) and, with
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
	// SharedKeys (preflight.SharedKeysFlag) says several lockbench
	// processes (on several client machines) contend on the same keys at
	// once: lockbench then neither refuses keys already under its prefix
	// before a run nor deletes its keys after one (the caller deletes them
	// once every process is done).
	SharedKeys bool
}

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
// Sentinels) and checks each answers INFO within ReadyTimeout, with TLS
// after a handshake probe (Security.ProbeTLS).
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
		if err := c.opts.Security.ProbeTLS(ctx, n.Addr()); err != nil { // names a plain port as such
			return nil, fmt.Errorf("cluster: external %s: %w", name, err)
		}
		info, err := rawInfo(ctx, n.Addr(), ReadyTimeout, c.opts.Security)
		if err != nil {
			if e := c.opts.Security.Explain(addr, err); errors.Is(e, ErrEnvironment) {
				return nil, fmt.Errorf("cluster: external %s: %w", name, e)
			}
			return nil, fmt.Errorf("%w: cluster: external %s at %s does not answer PING: %v (is it up and reachable from here? with a password or TLS, see --password-env and --tls)", ErrEnvironment, name, addr, c.opts.Security.Redact(err.Error()))
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

// keyClient is a one-connection client with no retries, for the CLUSTER
// NODES of an external Redis Cluster's seeds (preflight has its own for
// the key scans).
func keyClient(addr string, sec security.Security) *redis.Client {
	return redis.NewClient(sec.Apply(&redis.Options{Addr: addr, DialTimeout: ReadyTimeout, ReadTimeout: ReadyTimeout, WriteTimeout: ReadyTimeout,
		MaxRetries: -1, DialerRetries: 1, PoolSize: 1, DisableIdentity: true, Protocol: 2, ContextTimeoutEnabled: true}))
}

// unreachable is sec.Unreachable: the error of an external server at
// addr that failed cmd.
func unreachable(addr, cmd string, sec security.Security, err error) error {
	return sec.Unreachable(addr, cmd, err)
}
