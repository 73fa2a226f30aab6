package chaos

import (
	"fmt"

	"github.com/lockbench/lockbench/chaos/schedule"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/workload"
)

// scheduleApplies reports whether every step of s can run against a strategy
// (its primitive applies to the strategy and, for target "node", the
// node exists), and if not why.
func scheduleApplies(s schedule.Schedule, in impl.Info) (bool, string) {
	for i, st := range s.Steps {
		p, _ := schedule.LookupPrimitive(st.Fault)
		if ok, why := PrimitiveAppliesTo(p, in); !ok {
			return false, fmt.Sprintf("step %d: %s %s", i+1, p.Name, why)
		}
		if n := max(in.Nodes, 1); st.Target == schedule.TargetNode && st.Node > n {
			return false, fmt.Sprintf("step %d: node n%d: the strategy talks to %d node(s)", i+1, st.Node, n)
		}
		if (st.On == string(workload.PointRenew) || st.On == string(workload.PointBeforeExtend)) && !in.Claims.Renewal {
			return false, fmt.Sprintf("step %d: %s at %s: the strategy does not renew, so the step would never strike (put it at another event, or run a lock that renews)", i+1, p.Name, st.On)
		}
		if st.Depth >= 2 && !in.Claims.Reentrant {
			return false, fmt.Sprintf("step %d: %s at %s depth %d: the strategy is not reentrant (its calls never nest), so the step would never strike (drop depth, or run a reentrant lock)", i+1, p.Name, st.On, st.Depth)
		}
	}
	return true, ""
}

// ScenariosOf returns the scenarios that exercise step st's primitive
// alone as st uses it and that apply to the strategy in: the scenarios
// whose expectations a run of a schedule with st is held to. Empty: none
// does (then nothing under st is expected to hold).
func ScenariosOf(st schedule.Step, in impl.Info) []string {
	var out []string
	for _, name := range schedule.ScenariosFor(st) {
		if sc, err := Lookup(name); err == nil {
			if ok, _ := sc.AppliesTo(in); ok {
				out = append(out, name)
			}
		}
	}
	return out
}

// PrimitiveAppliesTo reports whether a schedule may use the primitive p against a
// strategy, and why not: it needs a scenario of it that applies (so that
// the fault means something for the lock's topology: no links on etcd,
// no clock shim on ZooKeeper), and its own narrowing.
func PrimitiveAppliesTo(p schedule.Primitive, in impl.Info) (bool, string) {
	if !p.Exercised() {
		return true, ""
	}
	var whys []string
	seen := map[string]bool{}
	for _, st := range p.Steps() {
		for _, name := range schedule.ScenariosFor(st) {
			if seen[name] {
				continue
			}
			seen[name] = true
			sc, err := Lookup(name)
			if err != nil {
				continue
			}
			ok, why := sc.AppliesTo(in)
			if ok {
				return true, ""
			}
			whys = append(whys, why)
		}
	}
	if len(whys) == 0 {
		return false, "no scenario exercises it"
	}
	return false, "does not apply: " + whys[0]
}

// writtenFor reports whether every step of s is written for a lock on a
// Redis Cluster (Scenario.OnCluster) and for one that waits for replicas
// (OnReplicas): a scenario that exercises the step's primitive alone is
// (gc-pause and long-cs are, so a schedule of client pauses and slow
// critical sections runs on a cluster; a node pause is not).
func writtenFor(s schedule.Schedule) (onCluster, onReplicas bool) {
	onCluster, onReplicas = true, true
	for _, st := range s.Steps {
		c, r := false, false
		for _, name := range schedule.ScenariosFor(st) {
			if sc, err := Lookup(name); err == nil {
				c, r = c || sc.OnCluster, r || sc.OnReplicas
			}
		}
		onCluster, onReplicas = onCluster && c, onReplicas && r
	}
	return onCluster, onReplicas
}

// scheduleSetup is the Setup of a run of s for a strategy: proxies on every link
// when a step acts on links (quorum strategies at QuorumProxiedTTL at
// least), the clock shim for a clock jump, the nesting a step's Depth
// needs, and the highest TTL floor and call budget of the scenarios that
// exercise the steps' primitives (their faults' timing needs them).
func scheduleSetup(s schedule.Schedule, in impl.Info) Setup {
	var out Setup
	floor := func(ss Setup) {
		if ss.TTL > out.TTL {
			out.TTL, out.TTLWhy = ss.TTL, ss.TTLWhy
		}
		out.OpTimeoutTTL = max(out.OpTimeoutTTL, ss.OpTimeoutTTL)
	}
	for _, st := range s.Steps {
		p, _ := schedule.LookupPrimitive(st.Fault)
		for _, name := range ScenariosOf(st, in) {
			if sc, err := Lookup(name); err == nil {
				floor(sc.SetupFor(in))
			}
		}
		if p.Links {
			out.Proxies = true
		}
		if st.Fault == "clock-jump" {
			out.ClockShim = true
		}
		if st.Fault == "client-clock-step" {
			out.ClientClock = true
		}
		if st.Fault == "node-pause" {
			// A call queued in the paused node matters only while its
			// client still waits: the budget outlasts the pause.
			out.OpTimeoutTTL = max(out.OpTimeoutTTL, st.For+1)
		}
		if st.Depth >= 2 {
			out.Reentrancy = max(out.Reentrancy, st.Depth)
		}
	}
	if out.Proxies && quorum(in) {
		floor(proxiedSetup(in, 0))
	}
	return out
}
