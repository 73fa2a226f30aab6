package chaos

import (
	"fmt"
	"strings"

	"github.com/lockbench/lockbench/cluster"
	"github.com/lockbench/lockbench/cluster/preflight"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/strategies"
	"github.com/lockbench/lockbench/internal/errs"
)

// StrategyTopology returns the cluster topology a strategy (its Info)
// needs on its own: its server kind and node count, a primary with
// Info.Replicas replicas for a lock that waits for them, and
// redis-cluster:3+3 for a lock on a Redis Cluster (Info.Cluster).
func StrategyTopology(info impl.Info) cluster.Topology {
	switch info.Server {
	case impl.ServerEtcd:
		return cluster.Topology{Kind: cluster.Etcd, Nodes: info.Nodes}
	case impl.ServerZooKeeper:
		return cluster.Topology{Kind: cluster.ZooKeeper, Nodes: info.Nodes}
	}
	if info.Cluster {
		return cluster.Topology{Kind: cluster.RedisCluster}
	}
	if info.Replicas > 0 {
		return cluster.Topology{Kind: cluster.Replicated, Replicas: info.Replicas}
	}
	if info.Nodes > 1 {
		return cluster.Topology{Kind: cluster.Independent, Nodes: info.Nodes}
	}
	return cluster.Topology{Kind: cluster.Single}
}

// TopologyFor returns the topology a run of a strategy (its Info) under s
// uses: the scenario's when its setup sets one, else the strategy's
// (StrategyTopology).
func (s Scenario) TopologyFor(info impl.Info) cluster.Topology {
	if t := s.SetupFor(info).Topology; t.Kind != "" {
		return t
	}
	return StrategyTopology(info)
}

// UnsupportedOn returns "" when the backend of o can run s for a strategy,
// else a one-line reason naming the missing servers or features, the
// scenarios that do work there for the strategy, and, on the external
// backend, --allow-destructive when that flag would make it work.
func (s Scenario) UnsupportedOn(o cluster.Options, info impl.Info) string {
	if why := preflight.TooFewServers(o, s.TopologyFor(info)); why != "" {
		return fmt.Sprintf("on the %s backend the strategy %s, or choose strategies that need fewer", cluster.BackendName(o), why)
	}
	have, err := cluster.BackendFeatures(o.Backend, o)
	if err != nil {
		return err.Error()
	}
	why := s.Unsupported(info, have)
	if why == "" {
		return ""
	}
	msg := fmt.Sprintf("scenario %s cannot run on the %s backend: it %s", s.Name, cluster.BackendName(o), why)
	if o.Backend == cluster.BackendExternal && !o.External.AllowDestructive {
		d := o
		d.External.AllowDestructive = true
		if all, _ := cluster.BackendFeatures(d.Backend, d); s.Unsupported(info, all) == "" {
			msg += fmt.Sprintf("; it injects faults through Redis commands on your servers: pass %s to allow them", cluster.AllowDestructiveFlag)
		}
	}
	return msg + fmt.Sprintf("; scenarios that work there: %s", strings.Join(SupportedOn(info, have), ", "))
}

// CheckServers returns nil unless strategy (under scenario; "" for the
// strategy's own topology) cannot run on the external backend of o for
// too few servers; then an error wrapping errs.ErrUsage naming the strategy,
// the servers it needs and the fix; choose is the other fix ("a
// --strategy that needs fewer"). Unknown names and scenarios that do
// not apply give nil (the run's own resolution reports them).
func CheckServers(o cluster.Options, strategy, scenario, choose string) error {
	st, err := strategies.Lookup(strategy)
	if err != nil {
		return nil
	}
	own := StrategyTopology(st.Info())
	t := own
	if scenario != "" {
		sc, err := Lookup(scenario)
		if err != nil {
			return nil
		}
		if ok, _ := sc.AppliesTo(st.Info()); !ok {
			return nil
		}
		t = sc.TopologyFor(st.Info())
	}
	if why := preflight.TooFewServers(o, t); why != "" {
		on := ""
		if scenario != "" && t != own {
			on = " under scenario " + scenario
		}
		return fmt.Errorf("%w: strategy %s%s %s, or choose %s (lockbench list shows each strategy's NODES)", errs.ErrUsage, strategy, on, why, choose)
	}
	return nil
}
