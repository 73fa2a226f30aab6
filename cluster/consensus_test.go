package cluster

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/leakcheck"
)

// startConsensus starts a 3-member cluster of kind, stopped at test end,
// and fails the test if a server process outlives it.
func startConsensus(t *testing.T, kind Kind) *Cluster {
	t.Helper()
	leakcheck.AtEnd(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	start := time.Now()
	c, err := Start(ctx, Topology{Kind: kind}, Options{Logf: t.Logf})
	if err != nil {
		t.Fatalf("Start %s: %v", kind, err)
	}
	t.Logf("%s: 3 members started and agreed on a leader in %v (version %s)", kind, time.Since(start).Round(time.Millisecond), c.ServerVersion())
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	return c
}

// waitLeader polls Leader until it names a member other than not (nil:
// any), for at most d.
func waitLeader(t *testing.T, c *Cluster, not *Node, d time.Duration) *Node {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		l, err := c.Leader(ctx)
		cancel()
		if err == nil && l != not {
			return l
		}
		if time.Now().After(deadline) {
			t.Fatalf("no new leader within %v (last: %v, %v)", d, l, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestConsensusFaults walks an etcd cluster and a ZooKeeper ensemble
// through the faults the chaos scenarios use: the leader killed (a new one
// is elected), restarted on its ports with its data (it rejoins), a member
// paused and resumed, and a quorum taken away (2 of 3 down: no leader).
func TestConsensusFaults(t *testing.T) {
	for _, kind := range []Kind{Etcd, ZooKeeper} {
		t.Run(string(kind), func(t *testing.T) {
			c := startConsensus(t, kind)
			ctx := context.Background()
			if got := c.Topology().String(); got != string(kind)+":3" {
				t.Errorf("topology %q", got)
			}
			if c.ServerVersion() == "" {
				t.Error("no server version recorded")
			}
			leader := waitLeader(t, c, nil, 5*time.Second)
			if leader.Kind() != kind {
				t.Errorf("leader kind %q", leader.Kind())
			}
			data, _ := os.ReadDir(filepath.Join(leader.Dir(), "data"))
			if len(data) == 0 {
				t.Fatalf("%s has nothing in its data dir", leader.Name())
			}
			addr := leader.Addr()

			// Leader killed: another member takes over.
			t0 := time.Now()
			if err := leader.Kill(); err != nil {
				t.Fatal(err)
			}
			next := waitLeader(t, c, leader, 10*time.Second)
			t.Logf("leader %s killed: %s leads after %v", leader.Name(), next.Name(), time.Since(t0).Round(time.Millisecond))

			// Restarted on the same port with its data: it rejoins.
			t0 = time.Now()
			if err := leader.Restart(ctx, 0); err != nil {
				t.Fatal(err)
			}
			if leader.Addr() != addr {
				t.Errorf("restarted on %s, was %s", leader.Addr(), addr)
			}
			if err := c.WaitQuorum(ctx, 0); err != nil {
				t.Fatal(err)
			}
			t.Logf("%s restarted and rejoined in %v", leader.Name(), time.Since(t0).Round(time.Millisecond))

			// A paused member is not asked; the others still have a leader.
			cur := waitLeader(t, c, nil, 5*time.Second)
			var follower *Node
			for _, n := range c.Nodes() {
				if n != cur {
					follower = n
					break
				}
			}
			if err := follower.Pause(); err != nil {
				t.Fatal(err)
			}
			if s, _ := follower.ProcState(); s != "T" {
				t.Errorf("paused member in state %q", s)
			}
			if l := waitLeader(t, c, follower, 5*time.Second); l == follower {
				t.Error("a paused member reported as leader")
			}
			if err := follower.Resume(); err != nil {
				t.Fatal(err)
			}

			// Quorum lost: with 2 of 3 killed nobody leads.
			var killed []*Node
			for _, n := range c.Nodes() {
				if len(killed) < 2 {
					if err := n.Kill(); err != nil {
						t.Fatal(err)
					}
					killed = append(killed, n)
				}
			}
			deadline := time.Now().Add(5 * time.Second)
			for {
				_, err := c.Leader(ctx)
				if errors.Is(err, ErrNoLeader) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("2 of 3 members down, Leader still answers: %v", err)
				}
				time.Sleep(20 * time.Millisecond)
			}
			// One back: a quorum again.
			if err := killed[0].Restart(ctx, 0); err != nil {
				t.Fatal(err)
			}
			if err := c.WaitQuorum(ctx, 0); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestConsensusTopologies checks the spellings of the consensus
// topologies.
func TestConsensusTopologies(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want string
		bad  bool
	}{
		{in: "etcd", want: "etcd:3"},
		{in: "etcd:5", want: "etcd:5"},
		{in: "zookeeper", want: "zookeeper:3"},
		{in: "zookeeper:1", want: "zookeeper:1"},
		{in: "etcd:2", bad: true},
		{in: "zookeeper:9", bad: true},
	} {
		got, err := ParseTopology(tt.in)
		if tt.bad != (err != nil) {
			t.Errorf("ParseTopology(%q): err %v", tt.in, err)
			continue
		}
		if !tt.bad && got.String() != tt.want {
			t.Errorf("ParseTopology(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

// TestConsensusRefusals: docker refuses both systems with a reason; the
// external backend names the missing flag; a missing binary is an
// environment error with the fix.
func TestConsensusRefusals(t *testing.T) {
	for _, kind := range []Kind{Etcd, ZooKeeper} {
		err := CheckTopology(Options{Backend: BackendDocker}, Topology{Kind: kind})
		if !errors.Is(err, ErrUnsupported) {
			t.Errorf("docker %s: %v", kind, err)
		}
		if err := CheckTopology(Options{Backend: BackendExternal}, Topology{Kind: kind}); err == nil {
			t.Errorf("external %s without endpoints: no error", kind)
		}
	}
	err := CheckTopology(Options{Etcd: "/nonexistent/etcd"}, Topology{Kind: Etcd})
	if !errors.Is(err, ErrEnvironment) {
		t.Errorf("missing etcd: %v", err)
	}
	err = CheckTopology(Options{Java: "/nonexistent/java"}, Topology{Kind: ZooKeeper})
	if !errors.Is(err, ErrEnvironment) {
		t.Errorf("missing java: %v", err)
	}
}
