// Package preflight is what lockbench checks and measures on the servers
// around a run, on short connections of its own: before it, that the
// backend can run the topologies (CheckBackend, TooFewServers) and that
// external servers are distinct, hold no stale keys under the run's prefix
// and accept the fault commands (CheckExternal, RunID, KeysUnder,
// ProbeFaultCommands), that external Sentinels answer (CheckSentinels), and the offset of each server's clock
// (MeasureServerClock); after it, the deletion of the run's keys on
// external servers (DeleteExternalKeys). It sits above cluster, whose
// options, topologies and features it checks.
package preflight

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/cluster"
	"github.com/lockbench/lockbench/cluster/dockerd"
	"github.com/lockbench/lockbench/cluster/security"
	"github.com/lockbench/lockbench/internal/errs"
)

// CheckBackend checks the backend before any run, after the usage checks:
// that the servers of the consensus topologies (etcd, ZooKeeper) can be
// had (cluster.CheckTopology); on the docker backend that the daemon
// answers and holds o.Image (dockerd.CheckImage: exit 3, lockbench never
// pulls); on the process backend that redis-server can be found
// (cluster.CheckRedisServer: exit 3); on the
// external backend, every etcd endpoint of an etcd strategy
// (checkExternalEtcd), every server of o.External.Addrs, as CheckExternal
// checks them for the fault features need (prefix "" is "lb:"), every
// Sentinel of o.External.SentinelAddrs as CheckSentinels does, and every
// node of the Redis Cluster of o.External.ClusterAddrs as well (its fault
// commands are probed by the run, for its scenario), and, when consensus
// holds a ZooKeeper topology, every server of o.External.ZooKeeperServers
// (CheckExternalZooKeeper).
func CheckBackend(ctx context.Context, o cluster.Options, prefix string, consensus []cluster.Topology, need []cluster.Feature) error {
	for _, t := range consensus {
		if err := cluster.CheckTopology(o, t); err != nil {
			return err
		}
	}
	switch o.Backend {
	case cluster.BackendDocker:
		return dockerd.CheckImage(ctx, o.Image)
	case cluster.BackendProcess, "":
		return cluster.CheckRedisServer(o)
	}
	if o.Backend != cluster.BackendExternal {
		return nil
	}
	if prefix == "" {
		prefix = "lb:"
	}
	for _, t := range consensus {
		if t.Kind == cluster.ZooKeeper {
			if err := CheckExternalZooKeeper(ctx, o.External.ZooKeeperServers, prefix, o.Security); err != nil {
				return err
			}
			break
		}
	}
	if err := checkExternalEtcd(ctx, o, prefix, consensus); err != nil {
		return err
	}
	if err := CheckExternal(ctx, o.External.Addrs, prefix, need, o.External.SharedKeys, o.Security); err != nil {
		return err
	}
	if err := CheckSentinels(ctx, o.External.SentinelAddrs, o.External.MasterName, o.Security); err != nil {
		return err
	}
	if len(o.External.ClusterAddrs) == 0 {
		return nil
	}
	return checkExternalCluster(ctx, o.External, prefix, o.Security)
}

// CheckSentinels checks the external Sentinels addrs before any run: each
// completes a TLS handshake when sec asks for TLS (Security.ProbeTLS: a
// plain port is named as such), answers SENTINEL GET-MASTER-ADDR-BY-NAME
// with sec's user and password, and monitors a primary named master (""
// is cluster.DefaultMasterName). A Sentinel that does not answer, refuses
// the password or the certificate gives one line naming it and the fix,
// wrapping errs.ErrEnvironment (exit 3); one that monitors no such primary
// wraps errs.ErrUsage (exit 2). ctx bounds the checks.
func CheckSentinels(ctx context.Context, addrs []string, master string, sec security.Security) error {
	if master == "" {
		master = cluster.DefaultMasterName
	}
	for _, a := range addrs {
		if err := sec.ProbeTLS(ctx, a); err != nil {
			return fmt.Errorf("--sentinel-addrs: %w", err)
		}
		rc := keyClient(a, sec)
		v, err := rc.Do(ctx, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", master).Result()
		rc.Close()
		switch {
		case errors.Is(err, redis.Nil), err == nil && v == nil:
			return fmt.Errorf("%w: external: Sentinel %s monitors no primary named %q: give the name it monitors in --master-name", errs.ErrUsage, a, master)
		case err != nil:
			return fmt.Errorf("--sentinel-addrs: %w", sec.Unreachable(a, "SENTINEL GET-MASTER-ADDR-BY-NAME (is it a Sentinel?)", err))
		}
	}
	return nil
}

// checkExternalEtcd checks, when consensus holds an etcd topology, that
// every endpoint of o.External.EtcdEndpoints accepts o.Security before
// any run (security.Security.ProbeEtcd: TLS, the user and password, read
// access under prefix): a refusal is one line naming the endpoint and
// the fix, wrapping errs.ErrEnvironment.
func checkExternalEtcd(ctx context.Context, o cluster.Options, prefix string, consensus []cluster.Topology) error {
	if !slices.ContainsFunc(consensus, func(t cluster.Topology) bool { return t.Kind == cluster.Etcd }) {
		return nil
	}
	for _, e := range o.External.EtcdEndpoints {
		if _, err := o.Security.ProbeEtcd(ctx, e, prefix); err != nil {
			return fmt.Errorf("external: %w", err)
		}
	}
	return nil
}

// checkExternalCluster is CheckExternal for the nodes of an external
// Redis Cluster (External.ClusterNodeAddrs, from its seeds) before any
// run: each answers with sec, holds no key under prefix (unless
// ext.SharedKeys). The fault commands are probed by the run itself, for
// its scenario's needs.
func checkExternalCluster(ctx context.Context, ext cluster.External, prefix string, sec security.Security) error {
	addrs, err := ext.ClusterNodeAddrs(ctx, sec)
	if err != nil {
		return err
	}
	return CheckExternal(ctx, addrs, prefix, nil, ext.SharedKeys, sec)
}

// CheckExternal checks the external servers addrs: that each answers, that
// no two addresses reach the same server (the same run_id in INFO server,
// as 0.0.0.0:P and 127.0.0.1:P do: a quorum on one server is none;
// errs.ErrUsage), that none holds a key under prefix (a key left by an
// earlier run or another program would read as a stale lock, a deadlock;
// errs.ErrUsage; not checked when shared) and that each accepts the Redis
// commands the features need (ProbeFaultCommands, e.g. DEBUG SLEEP for a
// pause). sec is the AUTH and TLS of the connections. An unreachable server or a refused command gives an error
// wrapping errs.ErrEnvironment (exit 3). Each error names the server and the fix.
func CheckExternal(ctx context.Context, addrs []string, prefix string, need []cluster.Feature, shared bool, sec security.Security) error {
	seen := map[string]string{} // run_id → the address first giving it
	for _, a := range addrs {
		id, err := RunID(ctx, a, sec)
		if err != nil {
			return err
		}
		if first, ok := seen[id]; ok && id != "" {
			return fmt.Errorf("%w: external: %s and %s are the same server (run_id %s): give %d distinct servers in --redis-addrs",
				errs.ErrUsage, first, a, id, len(addrs))
		}
		seen[id] = a
	}
	for _, a := range addrs {
		k, err := KeysUnder(ctx, a, prefix, sec)
		if err != nil {
			return err
		}
		if k != nil && !shared {
			n := fmt.Sprint(k.N)
			if k.AtLeast {
				n = "at least " + n
			}
			cli := "redis-cli"
			if h, p, err := net.SplitHostPort(a); err == nil {
				cli = fmt.Sprintf("redis-cli -h %s -p %s", h, p)
			}
			return fmt.Errorf("%w: external: %s keys under %q already exist on %s (e.g. %s): a stale lock reads as a deadlock; delete them (%s --scan --pattern '%s*' | xargs %s del) or pass another --key-prefix (or %s when several lockbench processes share these keys)",
				errs.ErrUsage, n, prefix, a, k.Example, cli, prefix, cli, SharedKeysFlag)
		}
	}
	for _, a := range addrs {
		if err := ProbeFaultCommands(ctx, a, need, sec); err != nil {
			return err
		}
	}
	return nil
}

// DeleteExternalKeys deletes the keys under prefix on every server of an
// external run (best effort, bounded by a few seconds even after ctx is
// cancelled: an interrupted run cleans up too). A key it could not delete
// is found by the next run's CheckExternal, which names it.
func DeleteExternalKeys(ctx context.Context, addrs []string, prefix string, sec security.Security) {
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	for _, a := range addrs {
		DeleteKeysUnder(dctx, a, prefix, sec)
	}
}

// TooFewServers returns "" when o is not the external backend or when its
// servers (o.External.Addrs) and Sentinels suffice for topology t, else
// what is missing and the fix, e.g. "needs 5 servers (topology
// independent:5), --redis-addrs gives 1: give 5 addresses in
// --redis-addrs".
func TooFewServers(o cluster.Options, t cluster.Topology) string {
	if o.Backend != cluster.BackendExternal {
		return ""
	}
	switch {
	case t.Kind == cluster.Etcd && len(o.External.EtcdEndpoints) == 0:
		return "needs an etcd cluster: give --etcd-endpoints host:port,..."
	case t.Kind == cluster.ZooKeeper && len(o.External.ZooKeeperServers) == 0:
		return "needs a ZooKeeper ensemble: give --zk-servers host:port,..."
	case t.Kind == cluster.RedisCluster && len(o.External.ClusterAddrs) == 0:
		return "needs a Redis Cluster: give --redis-cluster-addrs host:port,... (seed nodes)"
	case t.Kind.Consensus(), t.Kind == cluster.RedisCluster:
		return ""
	}
	if n, have := t.Servers(), len(o.External.Addrs); have < n {
		return fmt.Sprintf("needs %d servers (topology %s), --redis-addrs gives %d: give %d addresses in --redis-addrs", n, t, have, n)
	}
	if t.Sentinels > 0 && len(o.External.SentinelAddrs) == 0 {
		return fmt.Sprintf("needs Sentinels (topology %s): give --sentinel-addrs and --master-name", t)
	}
	return ""
}

// CheckExternalZooKeeper checks, before a run, that every ZooKeeper server
// of servers gives a session as sec says (TLS, digest login:
// security.Security.ProbeZK), and that the znodes an earlier run left
// under prefix let sec's identity in (security.Security.CheckZKKeys: the
// only place a wrong password shows). Errors are one line naming the
// server and the fix, wrapping errs.ErrEnvironment (exit 3).
func CheckExternalZooKeeper(ctx context.Context, servers []string, prefix string, sec security.Security) error {
	for _, a := range servers {
		if err := sec.ProbeZK(ctx, a); err != nil {
			return err
		}
	}
	if len(servers) == 0 {
		return nil
	}
	return sec.CheckZKKeys(ctx, servers[0], prefix)
}
