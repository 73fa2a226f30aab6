package strategies

import (
	"context"
	"fmt"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/impl"
)

// tokenLuaWaitCluster is token-lua-wait on a Redis Cluster: SET NX PX
// and WAIT 1 timeout pipelined on one connection to the primary of the
// key's slot, whose replica must acknowledge the grant. WAIT names no
// key, so the cluster client cannot route it (it would send it to any
// node, on another connection than the SET, and count nothing useful):
// the strategy asks the cluster client for the slot's primary
// (ClusterClient.MasterForKey) and pipelines both commands on that
// node's own client, following MOVED and ASK replies itself.
type tokenLuaWaitCluster struct{}

// Name returns "token-lua-wait-cluster".
func (tokenLuaWaitCluster) Name() string { return "token-lua-wait-cluster" }

// Info describes token-lua-wait-cluster: token-lua-wait through the
// primary of the key's slot on redis-cluster:3+3 (one replica each, the
// one WAIT 1 waits for).
func (tokenLuaWaitCluster) Info() impl.Info {
	return impl.Info{
		Summary: "token-lua-wait on a Redis Cluster (3 primaries + 3 replicas): acquire SET k token NX PX ttl and WAIT 1 timeout pipelined on one connection to the primary of k's slot (go-redis ClusterClient.MasterForKey; MOVED and ASK followed); if its replica did not acknowledge, Lua compare-and-delete and refuse; release: Lua compare-and-delete and WAIT 1 timeout there, unknown unless the replica acknowledged",
		Source:  "Redisson's lock (RedissonBaseLock: the lock's write followed by WAIT, checkLockSyncedSlaves) on a Redis Cluster (redis.io WAIT: it narrows the failover loss but does not make Redis strongly consistent; redis.io cluster specification: asynchronous replication)",
		Claims:  impl.Claims{AtomicAcquire: true, TokenRelease: true, ReplicaAck: true},
		Nodes:   1,
		Cluster: true,
	}
}

// New returns a token-lua-wait-cluster Locker on cfg.Nodes[0]: a cluster
// client (redis.NewClusterClient over the cluster's nodes), or any other
// client, on which it is token-lua-wait.
func (s tokenLuaWaitCluster) New(cfg impl.Config) (impl.Locker, error) {
	sg, err := newSingle(s.Name(), cfg)
	if err != nil {
		return nil, err
	}
	l := &tokenLuaWaitLocker{single: sg, name: s.Name(), run: pipeOn(sg.node)}
	if cc, ok := sg.node.(*redis.ClusterClient); ok {
		l.run = pipeOnPrimary(cc)
	}
	return l, nil
}

// clusterMaxRedirects is how many MOVED or ASK replies pipeOnPrimary
// follows for one pipeline: go-redis's cluster client default
// (MaxRedirects 3), as the workload's cluster clients use.
const clusterMaxRedirects = 3

// pipeOnPrimary is the runPipe of a Redis Cluster: the pipeline goes to
// the primary of key's slot as cc's slot map has it. When the first
// command is answered MOVED (the slot lives elsewhere) or ASK (it is
// being migrated and key is not here yet), no command of that pipeline
// touched key (the node refused the first; WAIT alone ran and changed
// nothing), so the pipeline is sent again to the node named, after
// ASKING for ASK, at most clusterMaxRedirects times; a MOVED also makes
// cc reload its slot map. Any other reply or error is the caller's to
// read (a network error leaves the outcome unknown: nothing is re-sent).
// It fails, before sending anything more, when cc knows no primary for
// key's slot or no node at a redirect's address.
func pipeOnPrimary(cc *redis.ClusterClient) runPipe {
	return func(ctx context.Context, key string, queue func(redis.Pipeliner) redis.Cmder) error {
		node, err := cc.MasterForKey(ctx, key)
		if err != nil {
			return fmt.Errorf("no primary known for the slot of %q: %w", key, err)
		}
		asking := false
		for i := 0; ; i++ {
			pipe := node.Pipeline()
			if asking {
				pipe.Do(ctx, "ASKING")
			}
			first := queue(pipe)
			_, _ = pipe.Exec(ctx) // each command's own error is read by the caller
			moved, isMoved := redis.IsMovedError(first.Err())
			ask, isAsk := redis.IsAskError(first.Err())
			if !isMoved && !isAsk || i == clusterMaxRedirects {
				return nil
			}
			addr := moved
			if isAsk {
				addr = ask
			} else {
				cc.ReloadState(ctx)
			}
			next, err := clusterNode(ctx, cc, addr)
			if err != nil {
				return fmt.Errorf("%v from %s: %w", first.Err(), node.Options().Addr, err)
			}
			node, asking = next, isAsk
		}
	}
}

// clusterNode returns cc's client of the cluster node at addr (a
// primary or a replica of its slot map), or an error when cc knows none.
func clusterNode(ctx context.Context, cc *redis.ClusterClient, addr string) (*redis.Client, error) {
	var (
		mu    sync.Mutex
		found *redis.Client
	)
	err := cc.ForEachShard(ctx, func(_ context.Context, c *redis.Client) error {
		if c.Options().Addr == addr {
			mu.Lock()
			found = c
			mu.Unlock()
		}
		return nil
	})
	if found == nil {
		return nil, fmt.Errorf("the cluster client's slot map has no node at %s (%v)", addr, err)
	}
	return found, nil
}
