package strategies_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/cluster"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/strategies"
)

// onRedis returns the strategies of strategies.All whose locks live on
// independent Redis nodes (Info.Server ServerRedis, no Info.Replicas):
// the ones the Redis tests here cover; the etcd and ZooKeeper strategies
// have their own (consensus_test.go), and so do the ones that wait for
// replicas (tokenluawait_test.go).
func onRedis() []impl.Strategy {
	var out []impl.Strategy
	for _, s := range strategies.All() {
		// A lock that waits for a replica's acknowledgement (WAIT) needs
		// one: it is tested on a primary with replicas (tokenluawait_test.go,
		// cluster_test.go), never on these independent nodes.
		if in := s.Info(); in.Server == impl.ServerRedis && in.Replicas == 0 && !in.Claims.ReplicaAck {
			out = append(out, s)
		}
	}
	return out
}

// startNodes starts n independent redis-servers, stopped at test end, and
// returns one client per node (short timeouts, no retries), closed at test end.
func startNodes(t testing.TB, n int) (*cluster.Cluster, []redis.UniversalClient) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := cluster.Start(ctx, cluster.Topology{Kind: cluster.Independent, Nodes: n}, cluster.Options{})
	if err != nil {
		t.Fatalf("cluster.Start: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Errorf("cluster.Stop: %v", err)
		}
	})
	return c, clients(t, c)
}

// clients returns one client per node of c: DialTimeout, Read/WriteTimeout
// 200ms, MaxRetries -1 (no retry: a strategy must not hide retries), one
// dial attempt.
func clients(t testing.TB, c *cluster.Cluster) []redis.UniversalClient {
	t.Helper()
	var cs []redis.UniversalClient
	for _, n := range c.Nodes() {
		rc := redis.NewClient(&redis.Options{
			Addr:          n.Addr(),
			DialTimeout:   200 * time.Millisecond,
			ReadTimeout:   200 * time.Millisecond,
			WriteTimeout:  200 * time.Millisecond,
			MaxRetries:    -1,
			DialerRetries: 1,
			PoolSize:      4,
		})
		t.Cleanup(func() { _ = rc.Close() })
		cs = append(cs, rc)
	}
	return cs
}

// nodesFor returns the nodes strategy s needs: the first one for
// single-node strategies, all of them otherwise.
func nodesFor(s impl.Strategy, nodes []redis.UniversalClient) []redis.UniversalClient {
	if s.Info().Nodes == 1 {
		return nodes[:1]
	}
	return nodes
}

// newLocker builds a Locker closed at test end. NodeTimeout is 100ms so
// quorum strategies stay deterministic on a loaded machine.
func newLocker(t *testing.T, s impl.Strategy, cfg impl.Config) impl.Locker {
	t.Helper()
	if cfg.NodeTimeout == 0 {
		cfg.NodeTimeout = 100 * time.Millisecond
	}
	l, err := s.New(cfg)
	if err != nil {
		t.Fatalf("%s.New: %v", s.Name(), err)
	}
	t.Cleanup(func() { _ = l.Close() })
	return l
}

// holders counts the nodes on which key holds token: a string key equal to
// token, or a hash key with token as a field (reentrant).
func holders(t *testing.T, nodes []redis.UniversalClient, key, token string) int {
	t.Helper()
	ctx := context.Background()
	n := 0
	for _, c := range nodes {
		typ, err := c.Type(ctx, key).Result()
		if err != nil {
			t.Fatalf("TYPE %s: %v", key, err)
		}
		switch typ {
		case "string":
			v, err := c.Get(ctx, key).Result()
			if err != nil && !errors.Is(err, redis.Nil) {
				t.Fatalf("GET %s: %v", key, err)
			}
			if v == token {
				n++
			}
		case "hash":
			ok, err := c.HExists(ctx, key, token).Result()
			if err != nil {
				t.Fatalf("HEXISTS %s: %v", key, err)
			}
			if ok {
				n++
			}
		}
	}
	return n
}

// exists counts the nodes on which key exists.
func exists(t *testing.T, nodes []redis.UniversalClient, key string) int {
	t.Helper()
	n := 0
	for _, c := range nodes {
		v, err := c.Exists(context.Background(), key).Result()
		if err != nil {
			t.Fatalf("EXISTS %s: %v", key, err)
		}
		n += int(v)
	}
	return n
}

// waitGone polls until key exists on no node; it fails the test after 2s.
func waitGone(t *testing.T, nodes []redis.UniversalClient, key string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for exists(t, nodes, key) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("key %q still exists after 2s", key)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitClosed waits until ch is closed and returns when; it fails the test
// after d.
func waitClosed(t *testing.T, ch <-chan struct{}, d time.Duration, what string) time.Time {
	t.Helper()
	select {
	case <-ch:
		return time.Now()
	case <-time.After(d):
		t.Fatalf("%s did not happen within %v", what, d)
		return time.Time{}
	}
}

// isClosed reports whether ch is closed.
func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// unknown reports whether err is an unknown-outcome error (neither nil nor
// a sentinel).
func unknown(err error) bool {
	return err != nil && !errors.Is(err, impl.ErrNotAcquired) && !errors.Is(err, impl.ErrNotHeld) && !errors.Is(err, impl.ErrCrashed)
}
