package cluster

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/internal/leakcheck"
)

// TestParseClusterTopology: the Redis Cluster spellings and the refused
// ones, each refusal naming the one shape built.
func TestParseClusterTopology(t *testing.T) {
	for _, tc := range []struct {
		in, want, err string
	}{
		{in: "redis-cluster", want: "redis-cluster:3+3"},
		{in: "redis-cluster:3+3", want: "redis-cluster:3+3"},
		{in: "redis-cluster:4+4", err: `"redis-cluster:3+3"`},
		{in: "redis-cluster:3", err: `"redis-cluster:3+3"`},
	} {
		got, err := ParseTopology(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseTopology(%q) = %v, %v; want an error with %s", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || got.String() != tc.want || got.Servers() != 6 {
			t.Errorf("ParseTopology(%q) = %v (%d servers), %v; want %s, 6 servers", tc.in, got, got.Servers(), err, tc.want)
		}
	}
}

// TestRedisCluster starts redis-cluster:3+3 on the process backend and
// checks what the scenarios build on: three primaries, each with one
// replica in sync; a key set through go-redis's cluster client survives
// MigrateSlot to another primary with its TTL, and the client follows the
// MOVED; the key's primary SIGKILLed, its replica is elected by the
// cluster (logged: how long it took); Stop leaves no process.
func TestRedisCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts redis-server; skipped with -short")
	}
	leakcheck.AtEnd(t, "redis-server", "redis-cli")
	began := time.Now()
	c := startT(t, Topology{Kind: RedisCluster}, Options{})
	t.Logf("started %s in %v", c.Topology(), time.Since(began).Round(time.Millisecond))
	exerciseRedisCluster(t, c)
}

// exerciseRedisCluster checks a started redis-cluster:3+3 as
// TestRedisCluster describes: three primaries with a replica each, a slot
// migration that keeps the key and its TTL, and the cluster's own
// election of a killed primary's replica.
func exerciseRedisCluster(t *testing.T, c *Cluster) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	prims, err := c.Primaries(ctx)
	if err != nil || len(prims) != 3 {
		t.Fatalf("Primaries = %v, %v; want 3", prims, err)
	}
	const key = "lb:k0"
	slot, err := c.KeySlot(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	p, reps, err := c.SlotPrimary(ctx, slot)
	if err != nil || len(reps) != 1 {
		t.Fatalf("SlotPrimary(%d) = %v, %v, %v; want a primary with one replica", slot, p, reps, err)
	}
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs(), DialTimeout: time.Second, ReadTimeout: time.Second, MaxRetries: -1})
	defer cc.Close()
	if err := cc.Set(ctx, key, "tok", 20*time.Second).Err(); err != nil {
		t.Fatal(err)
	}
	var to *Node
	for _, q := range prims {
		if q != p {
			to = q
			break
		}
	}
	from, moved, err := c.MigrateSlot(ctx, slot, to)
	if err != nil || from != p || moved != 1 {
		t.Fatalf("MigrateSlot(%d, %s) = %v, %d, %v; want from %s, 1 key", slot, to.Name(), from, moved, err, p.Name())
	}
	if err := c.WaitClusterOK(ctx); err != nil {
		t.Fatal(err)
	}
	if v, err := cc.Get(ctx, key).Result(); err != nil || v != "tok" {
		t.Errorf("GET %s after the migration = %q, %v; want tok (the client follows MOVED)", key, v, err)
	}
	if ttl, err := client(t, to.Addr()).PTTL(ctx, key).Result(); err != nil || ttl <= 0 || ttl > 20*time.Second {
		t.Errorf("PTTL %s on %s = %v, %v; want the TTL kept", key, to.Name(), ttl, err)
	}
	if _, err := client(t, p.Addr()).Get(ctx, key).Result(); err == nil || !strings.HasPrefix(err.Error(), "MOVED") {
		t.Errorf("GET %s on the old primary %s: %v; want MOVED", key, p.Name(), err)
	}
	// Failover by the cluster's own election.
	_, reps, err = c.SlotPrimary(ctx, slot)
	if err != nil || len(reps) != 1 {
		t.Fatalf("SlotPrimary after the move: %v, %v", reps, err)
	}
	killed := time.Now()
	if err := to.Kill(); err != nil {
		t.Fatal(err)
	}
	var got *Node
	err = poll(ctx, 15*time.Second, "waiting for the replica's election", func() (bool, error) {
		n, _, err := c.SlotPrimary(ctx, slot)
		if err != nil {
			return false, err
		}
		got = n
		return n == reps[0], nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s killed; its replica %s elected primary of slot %d after %v", to.Name(), got.Name(), slot, time.Since(killed).Round(time.Millisecond))
	if err := c.WaitClusterOK(ctx); err != nil {
		t.Fatal(err)
	}
	if v, err := cc.Get(ctx, key).Result(); err != nil && !errors.Is(err, redis.Nil) || v != "tok" {
		t.Logf("GET %s on the promoted replica: %q, %v", key, v, err)
	}
}
