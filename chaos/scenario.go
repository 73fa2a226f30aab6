// Package chaos holds lockbench's nemesis: the named scenarios that
// place fault primitives (chaos/fault, chaos/fault/link) at the clients'
// lock events. A scenario is data (All lists them all, Lookup finds one;
// one family per file: client.go, cancel.go, process.go, rolling.go,
// consensus.go, failover.go, clusterfailover.go, slotmigration.go,
// network.go, renewalcut.go, reply.go, clock.go, random.go); each builds
// a Nemesis for one run, which places faults at the clients' lock events
// (workload.Faults) so that a fault hits a held lock at the moment that
// matters, not by chance, and records every injection as a
// history.Nemesis operation with its start, end, evidence and Landing.
// A fault schedule (chaos/schedule) is played by ScheduleScenario
// (scheduled.go), which reuses the nemeses of the scenarios that
// exercise each step's primitive.
package chaos

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/lockbench/lockbench/chaos/fault"
	"github.com/lockbench/lockbench/chaos/fault/link"
	"github.com/lockbench/lockbench/cluster"
	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/workload"
)

// Kind says where a scenario's faults act.
type Kind string

// Kinds.
const (
	None        Kind = "none"        // no fault: the baseline
	Client      Kind = "client"      // client-side: pauses, crashes, slow critical sections
	Process     Kind = "process"     // server-side: Redis processes killed, restarted, paused
	Replication Kind = "replication" // server-side: replica promotion, Sentinel failover
	Network     Kind = "network"     // server-side: partitions and latency through proxies
	Clock       Kind = "clock"       // a wall clock jumps: a server's, or a client adapter's
	Mixed       Kind = "mixed"       // several kinds, seeded
)

// Scenario is a named recipe of faults.
type Scenario struct {
	// Name is the registry name, e.g. "gc-pause".
	Name string
	// Kind says where the faults act.
	Kind Kind
	// Summary says in one line what is done and when.
	Summary string
	// Faults lists the fault primitives the nemesis composes, as zero
	// values (see Faults): their Needs are the backend features the
	// scenario needs, so a backend without them is refused before the run
	// (see Requires, Unsupported). nil: none (the baseline).
	Faults []fault.Fault
	// Applies reports whether the scenario applies to a strategy, and if
	// not, why (e.g. a Redlock-only scenario for a single-node lock). nil:
	// it applies to every strategy.
	Applies func(in impl.Info) (ok bool, why string)
	// Setup says what the run's cluster and clients must look like for a
	// strategy. nil: the strategy's default topology, direct connections.
	Setup func(in impl.Info) Setup
	// New builds the nemesis of one run.
	New func(env Env) Nemesis
	// OnReplicas declares that the scenario was written, and its outcome
	// measured, for a lock that waits for replicas (impl.Info.Replicas >
	// 0, on a primary with replicas): such a lock runs only the scenarios
	// that declare it (see AppliesTo).
	OnReplicas bool
	// OnCluster declares that the scenario was written, and its outcome
	// measured, for a lock on a Redis Cluster (impl.Info.Cluster): such a
	// lock runs only the scenarios that declare it (see AppliesTo).
	OnCluster bool
	// KeepsLeases declares that the scenario's faults take no lease from
	// a renewing holder that keeps running (its reach): a slow critical
	// section, where the renewal must go on. The renewal-liveness check
	// then covers the whole run; otherwise it leaves out every fault
	// window and one TTL after it (checker.RenewalOptions).
	KeepsLeases bool
}

// AppliesTo reports whether s applies to a strategy, with the reason if
// not. A lock that waits for replicas (impl.Info.Replicas > 0) runs only
// the scenarios marked OnReplicas.
func (s Scenario) AppliesTo(in impl.Info) (bool, string) {
	if in.Replicas > 0 && !s.OnReplicas {
		return false, naOnReplicas
	}
	if in.Cluster && !s.OnCluster {
		return false, naOnCluster
	}
	if s.Applies == nil {
		return true, ""
	}
	return s.Applies(in)
}

// Requires returns the backend features s needs for a strategy: those its
// Faults need, in their order, plus cluster.FeatureProxies when its Setup
// routes links through proxies.
func (s Scenario) Requires(in impl.Info) []cluster.Feature {
	out := needsOf(s.Faults)
	if s.SetupFor(in).Proxies && !slices.Contains(out, cluster.FeatureProxies) {
		out = append(out, cluster.FeatureProxies)
	}
	return out
}

// Unsupported returns "" when a backend with features have can run s for
// a strategy, else a reason naming the missing features, e.g. "needs kill
// (the backend supports: proxies)".
func (s Scenario) Unsupported(in impl.Info, have []cluster.Feature) string {
	miss := cluster.Missing(have, s.Requires(in))
	if len(miss) == 0 {
		return ""
	}
	m := make([]string, len(miss))
	for i, f := range miss {
		m[i] = string(f)
	}
	h := make([]string, len(have))
	for i, f := range have {
		h[i] = string(f)
	}
	return fmt.Sprintf("needs %s (the backend supports: %s)", strings.Join(m, ", "), strings.Join(h, ", "))
}

// SupportedOn returns, in report order, the names of the scenarios that
// apply to a strategy and that a backend with features have can run.
func SupportedOn(in impl.Info, have []cluster.Feature) []string {
	var out []string
	for _, s := range All() {
		if ok, _ := s.AppliesTo(in); ok && s.Unsupported(in, have) == "" {
			out = append(out, s.Name)
		}
	}
	return out
}

// naOnReplicas is why a scenario not marked OnReplicas does not run a
// lock that waits for replicas.
const naOnReplicas = "not run for a lock that waits for replicas (WAIT): its fault acts on the lock's one node (its process, links or clock) as if that node were alone, and on a primary with replicas it would also have to say what becomes of the replicas; the baseline, the client faults and the failover scenarios are written for it"

// naOnCluster is why a scenario not marked OnCluster does not run a lock
// on a Redis Cluster.
const naOnCluster = "not written for a Redis Cluster: its fault acts on one Redis node (n1: its process, its links through per-client proxies, its clock, its replication to a replica it re-points with REPLICAOF) as if the lock lived there, while a cluster client reaches the lock's slot on whichever of 3 primaries serves it, and a replica there follows its primary by CLUSTER REPLICATE, not REPLICAOF; the baseline, cluster-failover, slot-migration and the client faults gc-pause and long-cs are written for it"

// onConsensus reports whether a strategy's lock lives on etcd or
// ZooKeeper (Info.Server) rather than on Redis.
func onConsensus(in impl.Info) bool { return in.Server != impl.ServerRedis }

// redisOnly is the Applies of a scenario whose faults act on Redis (its
// processes, its replication, its per-link proxies, its clock shim):
// strategies on etcd or ZooKeeper are n/a with why (what the scenario
// does that has no counterpart there, and the scenario that covers it);
// then inner decides (nil: every Redis strategy).
func redisOnly(why string, inner func(impl.Info) (bool, string)) func(impl.Info) (bool, string) {
	return func(in impl.Info) (bool, string) {
		if onConsensus(in) {
			return false, why
		}
		if inner == nil {
			return true, ""
		}
		return inner(in)
	}
}

// consensusOnly is the Applies of a scenario whose faults act on an etcd
// cluster or a ZooKeeper ensemble (its leader, its quorum): Redis
// strategies are n/a with why.
func consensusOnly(why string) func(impl.Info) (bool, string) {
	return func(in impl.Info) (bool, string) {
		if !onConsensus(in) {
			return false, why
		}
		return true, ""
	}
}

// SetupFor returns s's Setup for a strategy.
func (s Scenario) SetupFor(in impl.Info) Setup {
	if s.Setup == nil {
		return Setup{}
	}
	return s.Setup(in)
}

// Env is what a nemesis may use in one run.
type Env struct {
	// Strategy is the name of the strategy under test, for the caller's
	// records: a nemesis acts on Info, never on the name.
	Strategy string
	// TTL is the lock TTL and Duration the workload's run time.
	TTL, Duration time.Duration
	// Clock is the run's history clock; History receives nemesis operations.
	Clock   *history.Clock
	History workload.Recorder
	// Seed seeds the nemesis's random choices.
	Seed int64
	// Info describes the strategy under test (claims, nodes).
	Info impl.Info
	// Clients is the number of workload clients.
	Clients int
	// Cluster is the run's Redis topology: the nemesis's handles on the nodes.
	Cluster *cluster.Cluster
	// Links are the per-(client, node) proxies when Setup.Proxies is set; nil otherwise.
	Links *link.Links
	// Ready is the run's readiness barrier (workload.Env.Ready): the fault
	// schedule starts when every client has made its first call, and timed
	// triggers count from then (since). nil: from the start of the run
	// clock.
	Ready *workload.Readiness
}

// since returns the time since the fault schedule started, in ns: since
// the readiness barrier closed (every client made its first call), or
// since the run clock started when Env.Ready is nil. ok is false while the
// barrier is open: no timed fault is due yet.
func (e Env) since() (ns int64, ok bool) {
	if e.Ready == nil {
		return e.Clock.Now(), true
	}
	at, ok := e.Ready.At()
	if !ok {
		return 0, false
	}
	return e.Clock.Now() - at, true
}

// due reports whether the schedule time at (ns since the schedule
// started, see since) has come.
func (e Env) due(at int64) bool {
	now, ok := e.since()
	return ok && now >= at
}

// Nemesis injects one run's faults. At is called by every client at every
// lock event (see workload.Faults); Run runs timed faults until ctx ends and
// returns at once when there are none; Heal, called after the workload and
// before the liveness probe, undoes what is still broken (restarts killed
// nodes, restores links) so the probe sees the healed system.
type Nemesis interface {
	workload.Faults
	Run(ctx context.Context) error
	Heal(ctx context.Context) error
}

// triggers returns n trigger times spread over the run (ns since the
// schedule started, Env.since): at 20%, then evenly up to 75% of the
// duration.
func triggers(d time.Duration, n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		f := 0.2
		if n > 1 {
			f = 0.2 + 0.55*float64(i)/float64(n-1)
		}
		out[i] = int64(float64(d) * f)
	}
	return out
}

// recordWindow records a nemesis window [start, end] (ns since run start)
// with its landing ("" when the nemesis cannot tell) and note.
func recordWindow(env Env, start, end int64, l history.Landing, note string) {
	env.History.Record(history.Operation{Client: -1, Stream: -1, Kind: history.Nemesis, Invoke: start, Complete: end,
		Result: history.OK, Note: note, Landing: l})
}

// sleepUntil waits until the schedule time at (ns since the schedule
// started, see Env.since): first for the readiness barrier, then for the
// rest. It returns false if ctx ended first.
func sleepUntil(ctx context.Context, env Env, at int64) bool {
	if env.Ready != nil {
		select {
		case <-env.Ready.Done():
		case <-ctx.Done():
			return false
		}
	}
	if now, _ := env.since(); at > now {
		sleepCtx(ctx, time.Duration(at-now))
	}
	return ctx.Err() == nil
}

// landing is Landed when hit, else Missed.
func landing(hit bool) history.Landing {
	if hit {
		return history.Landed
	}
	return history.Missed
}

func newRand(seed int64) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed), 0x6e656d65736973)) // "nemesis"
}

// All returns every scenario, in report order: the baseline, then one
// family per file (client.go, cancel.go, process.go, rolling.go, consensus.go, failover.go,
// clusterfailover.go (with slotmigration.go),
// network.go, renewalcut.go, reply.go, clock.go, random.go). A new scenario is one constructor plus one line in
// its family's list.
func All() []Scenario {
	all := []Scenario{baselineScenario()}
	all = append(all, clientScenarios()...)
	all = append(all, cancelScenarios()...)
	all = append(all, processScenarios()...)
	all = append(all, rollingScenarios()...)
	all = append(all, consensusScenarios()...)
	all = append(all, failoverScenarios()...)
	all = append(all, clusterScenarios()...)
	all = append(all, networkScenarios()...)
	all = append(all, renewalCutScenarios()...)
	all = append(all, replyScenarios()...)
	all = append(all, clockScenarios()...)
	all = append(all, mixedScenarios()...)
	return all
}

// Names returns the scenario names in report order.
func Names() []string {
	var n []string
	for _, s := range All() {
		n = append(n, s.Name)
	}
	return n
}

// Lookup finds a scenario by name; the error lists the valid names.
func Lookup(name string) (Scenario, error) {
	for _, s := range All() {
		if s.Name == name {
			return s, nil
		}
	}
	return Scenario{}, fmt.Errorf("unknown scenario %q (valid: %s)", name, strings.Join(Names(), ", "))
}

// quiet is a Nemesis with no faults.
type quiet struct{ workload.NoFaults }

func (quiet) Run(context.Context) error  { return nil }
func (quiet) Heal(context.Context) error { return nil }

// baselineScenario runs the workload without faults.
func baselineScenario() Scenario {
	return Scenario{Name: "baseline", Kind: None, Summary: "no fault; critical sections well under the TTL", OnReplicas: true, OnCluster: true,
		New: func(Env) Nemesis { return quiet{} }}
}

// needsOf returns the features the faults fs need, each once, in the
// order the faults list them.
func needsOf(fs []fault.Fault) []cluster.Feature {
	var out []cluster.Feature
	for _, f := range fs {
		for _, n := range f.Needs() {
			if !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	return out
}

// healAll is the heal path every nemesis ends with: it heals each fault
// that may still be in force anywhere in the run, whoever injected it:
// a node killed (restarted now, empty without persistence) or paused
// (resumed) among the cluster's nodes, and every link through a proxy
// (cuts restored, latency removed). Nodes a failover leaves down on
// purpose are not the cluster's concern here: the failover nemesis heals
// without healAll.
func healAll(ctx context.Context, env Env) error {
	var errs []error
	for _, n := range env.Cluster.Nodes() {
		for _, f := range []fault.Fault{&fault.NodeKill{Node: n}, &fault.NodePause{Node: n}} {
			_, err := fault.Heal(ctx, f)
			errs = append(errs, err)
		}
	}
	errs = append(errs, env.Links.RestoreAll())
	return errors.Join(errs...)
}
