package cluster

import (
	"fmt"
	"strconv"
	"strings"
)

// Kind names a topology: a Redis deployment, an etcd cluster or a
// ZooKeeper ensemble.
type Kind string

// The topologies Start can build.
const (
	// Single is one standalone redis-server.
	Single Kind = "single"
	// Independent is N standalone redis-servers that know nothing of each
	// other: the deployment Redlock assumes.
	Independent Kind = "independent"
	// Replicated is one primary with asynchronous replicas (REPLICAOF),
	// optionally watched by 3 Sentinels that fail over automatically.
	Replicated Kind = "replicated"
	// Etcd is an etcd cluster of Nodes members (default
	// DefaultConsensusNodes) that elect a leader with Raft (see
	// consensus.go).
	Etcd Kind = "etcd"
	// ZooKeeper is a ZooKeeper ensemble of Nodes servers (default
	// DefaultConsensusNodes) that elect a leader with ZAB (see
	// consensus.go).
	ZooKeeper Kind = "zookeeper"
	// RedisCluster is a Redis Cluster of 3 primaries, each with 1 replica
	// (redis-server --cluster-enabled yes, then redis-cli --cluster
	// create --cluster-replicas 1): the 16384 hash slots split over the
	// primaries, a replica promoted by the cluster's own election when
	// its primary fails (see rediscluster.go). Spelled "redis-cluster:3+3".
	RedisCluster Kind = "redis-cluster"
)

// DefaultConsensusNodes is the member count of "etcd" and "zookeeper"
// without ":N": the smallest ensemble that survives one member down.
const DefaultConsensusNodes = 3

// Consensus reports whether k is a consensus system (Etcd or ZooKeeper)
// rather than a Redis deployment.
func (k Kind) Consensus() bool { return k == Etcd || k == ZooKeeper }

// DefaultIndependentNodes is the node count of "independent" without ":N".
const DefaultIndependentNodes = 5

// Topology describes the deployment a run uses.
type Topology struct {
	// Kind is the shape of the deployment.
	Kind Kind
	// Nodes is the number of redis-servers for Independent (0 means
	// DefaultIndependentNodes) and of members for Etcd and ZooKeeper (an
	// odd number; 0 means DefaultConsensusNodes). Ignored for Single
	// (always 1) and Replicated (always 1 + Replicas).
	Nodes int
	// Replicas is the number of replicas for Replicated: 1 or 2 (0 means 1).
	Replicas int
	// Sentinels is the number of Sentinel processes for Replicated: 0 or 3.
	Sentinels int
}

// validForms lists the accepted spellings of a topology, for error messages.
const validForms = `"single", "independent" (= independent:5), "independent:N", "replicated:1", "replicated:2", "replicated:1+sentinel", "replicated:2+sentinel", "redis-cluster:3+3" (= redis-cluster), "etcd" (= etcd:3), "etcd:N", "zookeeper" (= zookeeper:3), "zookeeper:N" (N odd)`

// Redis Cluster shape: the only one Start builds, 3 primaries with one
// replica each (the smallest cluster whose primaries can elect a
// replica after one of them fails: a majority of 3 is 2).
const (
	clusterPrimaries = 3
	clusterReplicas  = 1
	clusterSpelling  = "redis-cluster:3+3"
)

// ParseTopology parses the command-line spelling of a topology:
// "single", "independent" (5 nodes), "independent:N" (N >= 1),
// "replicated" (= replicated:1), "replicated:R" (R = 1 or 2 replicas) and
// "replicated:R+sentinel" (the same watched by 3 Sentinels),
// "redis-cluster:3+3" (= "redis-cluster": a Redis Cluster), "etcd" and
// "zookeeper" (3 members) and "etcd:N", "zookeeper:N" (N odd, 1 to 7).
// Any other input returns an error that lists the valid forms.
func ParseTopology(s string) (Topology, error) {
	bad := func(why string) (Topology, error) {
		return Topology{}, fmt.Errorf("cluster: bad topology %q: %s; valid forms: %s", s, why, validForms)
	}
	kind, arg, hasArg := strings.Cut(strings.TrimSpace(s), ":")
	switch Kind(kind) {
	case Single:
		if hasArg {
			return bad("single takes no argument")
		}
		return Topology{Kind: Single, Nodes: 1}, nil
	case Independent:
		n := DefaultIndependentNodes
		if hasArg {
			v, err := strconv.Atoi(arg)
			if err != nil || v < 1 {
				return bad("node count must be a positive integer")
			}
			n = v
		}
		return Topology{Kind: Independent, Nodes: n}, nil
	case Replicated:
		t := Topology{Kind: Replicated, Replicas: 1}
		if !hasArg {
			return t.normalized(), nil
		}
		num, sentinel, hasPlus := strings.Cut(arg, "+")
		if hasPlus {
			if sentinel != "sentinel" {
				return bad(`only "+sentinel" may follow the replica count`)
			}
			t.Sentinels = 3
		}
		v, err := strconv.Atoi(num)
		if err != nil || v < 1 || v > 2 {
			return bad("replica count must be 1 or 2")
		}
		t.Replicas = v
		return t.normalized(), nil
	case RedisCluster:
		if hasArg && arg != "3+3" {
			return bad(`Redis Cluster is built as 3 primaries + 3 replicas only: "redis-cluster:3+3"`)
		}
		return Topology{Kind: RedisCluster}.normalized(), nil
	case Etcd, ZooKeeper:
		t := Topology{Kind: Kind(kind), Nodes: DefaultConsensusNodes}
		if hasArg {
			v, err := strconv.Atoi(arg)
			if err != nil || v < 1 || v > maxConsensusNodes || v%2 == 0 {
				return bad("member count must be odd, 1 to 7")
			}
			t.Nodes = v
		}
		return t, nil
	default:
		return bad("unknown kind")
	}
}

// normalized fills defaults: Single has 1 node, Independent defaults to
// DefaultIndependentNodes, Replicated to 1 replica and Nodes = 1 + Replicas.
func (t Topology) normalized() Topology {
	switch t.Kind {
	case Single:
		t.Nodes, t.Replicas, t.Sentinels = 1, 0, 0
	case Independent:
		if t.Nodes == 0 {
			t.Nodes = DefaultIndependentNodes
		}
		t.Replicas, t.Sentinels = 0, 0
	case Replicated:
		if t.Replicas == 0 {
			t.Replicas = 1
		}
		t.Nodes = 1 + t.Replicas
	case Etcd, ZooKeeper:
		if t.Nodes == 0 {
			t.Nodes = DefaultConsensusNodes
		}
		t.Replicas, t.Sentinels = 0, 0
	case RedisCluster:
		t.Nodes, t.Replicas, t.Sentinels = clusterPrimaries*(1+clusterReplicas), clusterReplicas, 0
	}
	return t
}

// maxConsensusNodes is the largest member count Start builds: each member
// is a process (a JVM for ZooKeeper) on a shared machine.
const maxConsensusNodes = 7

// validate reports an error for a topology Start cannot build.
func (t Topology) validate() error {
	switch t.Kind {
	case Single:
	case Independent:
		if t.Nodes < 1 {
			return fmt.Errorf("cluster: independent topology needs at least 1 node, got %d", t.Nodes)
		}
	case Replicated:
		if t.Replicas < 1 || t.Replicas > 2 {
			return fmt.Errorf("cluster: replicated topology needs 1 or 2 replicas, got %d", t.Replicas)
		}
		if t.Sentinels != 0 && t.Sentinels != 3 {
			return fmt.Errorf("cluster: replicated topology takes 0 or 3 sentinels, got %d", t.Sentinels)
		}
	case RedisCluster:
		if n := t.normalized(); (t.Nodes != 0 && t.Nodes != n.Nodes) || (t.Replicas != 0 && t.Replicas != n.Replicas) || t.Sentinels != 0 {
			return fmt.Errorf("cluster: a Redis Cluster is built as %s only (3 primaries, 1 replica each, no Sentinel)", clusterSpelling)
		}
	case Etcd, ZooKeeper:
		if t.Nodes < 0 || t.Nodes > maxConsensusNodes || t.Nodes%2 == 0 && t.Nodes != 0 {
			return fmt.Errorf("cluster: %s topology needs an odd member count from 1 to %d, got %d", t.Kind, maxConsensusNodes, t.Nodes)
		}
	default:
		return fmt.Errorf("cluster: unknown topology kind %q; valid forms: %s", t.Kind, validForms)
	}
	return nil
}

// Servers returns the number of servers the topology has (Sentinels
// not counted): 1 for Single, Nodes for Independent (0: 5), 1 + Replicas
// for Replicated, the members for Etcd and ZooKeeper (0: 3), 6 for
// RedisCluster (3 primaries and their replicas).
func (t Topology) Servers() int { return t.normalized().Nodes }

// String returns the spelling ParseTopology accepts, e.g. "independent:5" or
// "replicated:2+sentinel".
func (t Topology) String() string {
	t = t.normalized()
	switch t.Kind {
	case Single:
		return "single"
	case Independent:
		return fmt.Sprintf("independent:%d", t.Nodes)
	case Replicated:
		s := fmt.Sprintf("replicated:%d", t.Replicas)
		if t.Sentinels > 0 {
			s += "+sentinel"
		}
		return s
	case Etcd, ZooKeeper:
		return fmt.Sprintf("%s:%d", t.Kind, t.Nodes)
	case RedisCluster:
		return clusterSpelling
	}
	return string(t.Kind)
}
