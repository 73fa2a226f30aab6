package chaos

import (
	"strings"
	"testing"

	"github.com/lockbench/lockbench/cluster"
	"github.com/lockbench/lockbench/cluster/preflight"
	"github.com/lockbench/lockbench/impl/strategies"
)

// TestTooFewServers: the external backend must have the servers (and
// Sentinels) of a run's topology; other backends start their own.
func TestTooFewServers(t *testing.T) {
	ext := func(addrs, sentinels int) cluster.Options {
		o := cluster.Options{Backend: cluster.BackendExternal}
		for range addrs {
			o.External.Addrs = append(o.External.Addrs, "127.0.0.1:1")
		}
		for range sentinels {
			o.External.SentinelAddrs = append(o.External.SentinelAddrs, "127.0.0.1:2")
		}
		return o
	}
	tests := []struct {
		o    cluster.Options
		topo cluster.Topology
		want string // "" or a part of the reason
	}{
		{cluster.Options{Backend: cluster.BackendProcess}, cluster.Topology{Kind: cluster.Independent, Nodes: 5}, ""},
		{ext(1, 0), cluster.Topology{Kind: cluster.Single}, ""},
		{ext(1, 0), cluster.Topology{Kind: cluster.Independent, Nodes: 5}, "needs 5 servers (topology independent:5), --redis-addrs gives 1: give 5 addresses in --redis-addrs"},
		{ext(5, 0), cluster.Topology{Kind: cluster.Independent}, ""},
		{ext(1, 0), cluster.Topology{Kind: cluster.Replicated, Replicas: 2}, "needs 3 servers"},
		{ext(2, 0), cluster.Topology{Kind: cluster.Replicated, Replicas: 1, Sentinels: 3}, "needs Sentinels"},
		{ext(2, 3), cluster.Topology{Kind: cluster.Replicated, Replicas: 1, Sentinels: 3}, ""},
	}
	for _, tt := range tests {
		got := preflight.TooFewServers(tt.o, tt.topo)
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("TooFewServers(%s, %d servers, %s) = %q, want %q", tt.o.Backend, len(tt.o.External.Addrs), tt.topo, got, tt.want)
		}
	}
	// UnsupportedOn (a bench cell's n/a) says the same for redlock on 1 server.
	st, _ := strategies.Lookup("redlock")
	sc, _ := Lookup("baseline")
	if why := sc.UnsupportedOn(ext(1, 0), st.Info()); !strings.Contains(why, "needs 5 servers") {
		t.Errorf("UnsupportedOn(redlock on 1 server) = %q", why)
	}
	if err := CheckServers(ext(1, 0), "redlock", "baseline", "a --strategy that needs fewer"); err == nil || !strings.Contains(err.Error(), "strategy redlock needs 5 servers") {
		t.Errorf("CheckServers(redlock on 1 server) = %v", err)
	}
}

// TestWaitLockScenarios: a lock that waits for replicas (token-lua-wait)
// runs on a primary with one replica by default, and only the scenarios
// marked OnReplicas apply to it; failover-other-replica applies to no
// lock that does not wait for a replica, and runs on two replicas.
func TestWaitLockScenarios(t *testing.T) {
	st, err := strategies.Lookup("token-lua-wait")
	if err != nil {
		t.Fatal(err)
	}
	in := st.Info()
	if got := StrategyTopology(in); got.String() != "replicated:1" {
		t.Errorf("StrategyTopology(token-lua-wait) = %s, want replicated:1", got)
	}
	want := map[string]string{"baseline": "replicated:1", "long-cs": "replicated:1", "gc-pause": "replicated:1", "crash-between": "replicated:1",
		"failover-lost-write": "replicated:1", "sentinel-failover": "replicated:1+sentinel", "failover-other-replica": "replicated:2"}
	for _, sc := range All() {
		ok, why := sc.AppliesTo(in)
		topo, listed := want[sc.Name]
		if ok != listed || (!ok && why == "") {
			t.Errorf("%s applies to token-lua-wait: %v (%s), want %v", sc.Name, ok, why, listed)
		}
		if ok && sc.TopologyFor(in).String() != topo {
			t.Errorf("%s runs token-lua-wait on %s, want %s", sc.Name, sc.TopologyFor(in), topo)
		}
	}
	other, err := Lookup("failover-other-replica")
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range strategies.All() {
		// A lock on a Redis Cluster (token-lua-wait-cluster) runs only
		// the scenarios written for one.
		want := st.Info().Claims.ReplicaAck && !st.Info().Cluster
		if ok, why := other.AppliesTo(st.Info()); ok != want || (!ok && why == "") {
			t.Errorf("failover-other-replica applies to %s: %v (%s)", st.Name(), ok, why)
		}
	}
}
