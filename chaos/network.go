package chaos

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lockbench/lockbench/chaos/fault"
	"github.com/lockbench/lockbench/chaos/fault/link"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/workload"
)

// networkScenarios are the network faults, through a proxy on every link:
// a partition of the holder, latency on one node, one node slow to answer
// one acquire.
func networkScenarios() []Scenario {
	return []Scenario{partitionHolderScenario(), partitionBlackholeScenario(), latencyScenario(), slowNodeScenario()}
}

// Timings of the network family.
const (
	// LatencyEachWay is the delay the latency scenario adds in each
	// direction of every link to the slow node: a request/response round
	// trip gains 2×LatencyEachWay = 100 ms.
	LatencyEachWay = 50 * time.Millisecond
	// LatencyTTL is the lock TTL of the latency scenario: five times the
	// added latency, so the delay is small against the lease as with the
	// TTLs of seconds used in production, and the question is only "slower
	// or unsafe?".
	LatencyTTL = 250 * time.Millisecond
	// latencyWhy is why latency needs at least LatencyTTL (Setup.TTLWhy).
	latencyWhy = "the added 100 ms round trip must stay small against the lease, as at the TTLs of seconds used in production"
	// latencyMinDuration gives the latency window (20% to 80% of the run)
	// room for several 100 ms round trips.
	latencyMinDuration = time.Second
	// QuorumProxiedTTL is the lock TTL of quorum strategies in scenarios
	// that put a proxy on every (client, node) link (partition-holder,
	// random): proxies cost CPU and a dial per connection, and Redlock's
	// per-node timeout (TTL/10; redsync: 0.05·TTL for the whole call) must
	// stay above the proxied round trip on a loaded machine. Measured on 2
	// cores with six such runs side by side: at a 50 ms TTL and 8 clients
	// every acquire times out; at 100 ms with 4 clients redsync still
	// grants nothing in four of five runs; at 200 ms with 4 clients every
	// run grants 59-85 times.
	QuorumProxiedTTL = 200 * time.Millisecond
	// quorumProxiedWhy is why quorum strategies behind proxies need at
	// least QuorumProxiedTTL (Setup.TTLWhy).
	quorumProxiedWhy = "a quorum lock's per-node timeout (TTL/10) must stay above a proxied round trip on a loaded machine"
	// quorumProxiedClients is the client count of quorum strategies behind
	// proxies on every link: 4 clients × 5 nodes (and the probe) keep the
	// proxies' goroutines and the split votes of 8 contending clients from
	// starving the per-node timeouts on a loaded machine.
	quorumProxiedClients = 4
	// partitionMinDuration fits two 2×TTL cuts (at 20% and 50%, each
	// followed by up to one TTL of waiting for another grant) and the
	// recovery after them into a run at QuorumProxiedTTL.
	partitionMinDuration = 1600 * time.Millisecond
)

// naProxied is why the network scenarios do not apply to etcd and
// ZooKeeper locks (yet): their proxies speak to Redis.
const naProxied = "puts lockbench's per-link proxies between clients and Redis nodes (their checks and fault evidence speak RESP); they are not placed on etcd (gRPC) or ZooKeeper links yet, so the fault cannot be injected there"

// proxiedSetup is the Setup of a scenario that proxies every link: quorum
// strategies get QuorumProxiedTTL (see there) and at least minQuorum of
// run time; single-node strategies keep the workload's TTL.
func proxiedSetup(in impl.Info, minQuorum time.Duration) Setup {
	if !quorum(in) {
		return Setup{Proxies: true}
	}
	return Setup{Proxies: true, TTL: QuorumProxiedTTL, TTLWhy: quorumProxiedWhy, MinDuration: minQuorum, Clients: quorumProxiedClients}
}

// partitionHolderScenario cuts the holder off from Redis (every node; the
// protected resource is in-process and stays reachable) right after its
// resource read, for 2×TTL, at 20% and 50% of the run, and keeps its
// critical section running through the cut (the client's goroutine waits
// in the hook; its renewal goroutine runs on): a long critical section
// under a partition. Without that, the holder would write (TTL/20 later)
// long before its lease ran out and only its release would meet the cut.
// The cut refuses connects and drops open connections (link.Cut): calls
// fail at once. PartitionBlackhole is the same with calls that hang until
// their budget. Quorum strategies run with QuorumProxiedTTL and
// quorumProxiedClients. A cut lands when another client is granted the
// key while the holder is cut off.
func partitionHolderScenario() Scenario {
	return Scenario{Name: "partition-holder", Kind: Network,
		Faults:  []fault.Fault{&link.Cut{}},
		Applies: redisOnly(naProxied, nil),
		Summary: "right after its read the holder is cut off from every Redis node (not from the protected resource) for 2×TTL, its critical section running on through the cut (a long critical section under a partition); the cut refuses connections, so its calls (renewals) fail at once; at 20% and 50% of the run (quorum strategies: TTL ≥ 200 ms, 4 clients)",
		Setup:   func(in impl.Info) Setup { return proxiedSetup(in, partitionMinDuration) },
		New:     func(env Env) Nemesis { return newPartitionHolder(env, false) }}
}

// partitionBlackholeScenario is PartitionHolder with the slow kind of partition:
// the holder's links black-hole (proxy.Proxy.Blackhole: connects still
// succeed, every byte is dropped), so its calls hang until their budget
// instead of failing at once, as when packets vanish in a real partition.
func partitionBlackholeScenario() Scenario {
	return Scenario{Name: "partition-blackhole", Kind: Network,
		Faults:  []fault.Fault{&link.Blackhole{}},
		Applies: redisOnly(naProxied, nil),
		Summary: "as partition-holder (the holder's critical section runs on for 2×TTL right after its read while it is partitioned from every Redis node, at 20% and 50% of the run), but its links black-hole: connects succeed, every byte is dropped, and its calls (renewals) hang until their budget instead of failing at once",
		Setup:   func(in impl.Info) Setup { return proxiedSetup(in, partitionMinDuration) },
		New:     func(env Env) Nemesis { return newPartitionHolder(env, true) }}
}

// newPartitionHolder is the nemesis of PartitionHolder (blackhole false)
// and PartitionBlackhole.
func newPartitionHolder(env Env, blackhole bool) *partitionHolder {
	// Triggers at 20% and 50% of the run: each cut (2×TTL and a little
	// more) ends well before the run does, so the run shows the recovery
	// after it.
	times := []int64{int64(float64(env.Duration) * 0.2), int64(float64(env.Duration) * 0.5)}
	return &partitionHolder{onePerTrigger: onePerTrigger{env: env, times: times}, seen: newCycles(), blackhole: blackhole}
}

// partitionHolder cuts the struck client's links (link.Cut, or
// link.Blackhole) at its PointInCS.
type partitionHolder struct {
	onePerTrigger
	seen      *cycles
	errs      faultLog
	blackhole bool
}

// name is the scenario's name.
func (p *partitionHolder) name() string {
	if p.blackhole {
		return "partition-blackhole"
	}
	return "partition-holder"
}

// Run does nothing: the faults act at lock events.
func (p *partitionHolder) Run(context.Context) error { return nil }

// Heal heals every link (healAll) and returns the errors of the run's
// cuts.
func (p *partitionHolder) Heal(ctx context.Context) error {
	return errors.Join(p.errs.err(), healAll(ctx, p.env))
}

// At cuts the client off at its first PointInCS after a trigger, keeps it
// there for 2×TTL (and, if no other client was granted the key meanwhile,
// until one is, at most one more TTL, so the lost lease is certainly
// reused; then until that client released, at most one more TTL, so its
// write comes first), then restores the links and lets it go on to its
// write.
func (p *partitionHolder) At(ctx context.Context, ev workload.Event) error {
	p.seen.see(ev)
	if ev.Point != workload.PointInCS || !p.take() {
		return nil
	}
	defer p.done()
	env := p.env
	all := indexes(nodeCount(env))
	var cut fault.Fault = &link.Cut{Links: env.Links, Client: ev.Client, Nodes: all}
	if p.blackhole {
		cut = &link.Blackhole{Links: env.Links, Client: ev.Client, Nodes: all}
	}
	since := p.seen.mark()
	start := env.Clock.Now()
	evidence, err := fault.Inject(ctx, cut)
	p.errs.fail(err)
	d := 2 * env.TTL
	sleepCtx(ctx, d)
	extra := ""
	other := p.seen.has(ev.Client, ev.Key, since, false)
	if !other {
		t := env.Clock.Now()
		other = p.seen.wait(ctx, ev.Client, ev.Key, since, false, env.TTL)
		extra = fmt.Sprintf(", then %.1fms more until another grant (granted: %v)", float64(env.Clock.Now()-t)/1e6, other)
	}
	if other && !p.seen.has(ev.Client, ev.Key, since, true) {
		// The next holder writes before the struck one: a fenced resource
		// then has its newer token when the struck holder's write comes,
		// and never sees the two writes race.
		t := env.Clock.Now()
		done := p.seen.wait(ctx, ev.Client, ev.Key, since, true, env.TTL)
		extra += fmt.Sprintf(", then %.1fms more until that holder released (released: %v)", float64(env.Clock.Now()-t)/1e6, done)
	}
	_, err = fault.Heal(ctx, cut)
	p.errs.fail(err)
	recordWindow(env, start, env.Clock.Now(), landing(other), fmt.Sprintf("%s: client %d (hold %d on %s) cut off from %s for %v%s (%s)",
		p.name(), ev.Client, ev.Hold, ev.Key, nodeNames(env, all), d, extra, evidence))
	return nil
}

// latencyScenario adds LatencyEachWay in each direction on every link to node n1
// (for quorum strategies one of five; only n1 gets proxies) from 20% to
// 80% of the run, with the TTL raised to LatencyTTL. The window targets
// no holder: its landing is "" (the nemesis cannot tell).
func latencyScenario() Scenario {
	return Scenario{Name: "latency", Kind: Network,
		Faults:  []fault.Fault{&link.Latency{}},
		Applies: redisOnly(naProxied, nil),
		Summary: "50 ms added in each direction (+100 ms per round trip) on every link to n1 (Redlock: one of five), from 20% to 80% of the run; TTL ≥ 250 ms",
		Setup: func(impl.Info) Setup {
			return Setup{Proxies: true, ProxyNode: 1, TTL: LatencyTTL, TTLWhy: latencyWhy, MinDuration: latencyMinDuration}
		},
		New: func(env Env) Nemesis { return &slowNode{env: env, node: 0} }}
}

// slowNode is a timed link.Latency window on one node's links.
type slowNode struct {
	workload.NoFaults
	env  Env
	node int
}

// Run sets the latency at 20% of the run, measures a PING through the
// probe's link to prove it, and removes it at 80% (or when ctx ends).
func (s *slowNode) Run(ctx context.Context) error {
	env := s.env
	if !sleepUntil(ctx, env, int64(float64(env.Duration)*0.2)) {
		return nil
	}
	f := &link.Latency{Links: env.Links, Node: s.node, D: LatencyEachWay}
	// The window is when every link is slow: from after the last link got
	// its latency (before the PING through it) to before the first loses
	// it. A call made while the links were being changed one by one is not
	// inside it (seen: a grant through a link not yet slowed counted as
	// granted during the fault).
	evidence, err := fault.Inject(ctx, f)
	start := env.Clock.At(f.InForce)
	if err != nil {
		evidence, start = "PING not measured", env.Clock.Now()
	}
	sleepUntil(ctx, env, int64(float64(env.Duration)*0.8))
	end := env.Clock.Now()
	_, herr := fault.Heal(ctx, f)
	err = errors.Join(err, herr)
	recordWindow(env, start, end, "", fmt.Sprintf("latency: +%v each way (+%v per round trip) on every link to %s; %s",
		LatencyEachWay, 2*LatencyEachWay, nodeNames(env, []int{s.node}), evidence))
	if err != nil {
		return fmt.Errorf("chaos: latency on %s: %w", nodeNames(env, []int{s.node}), err)
	}
	return nil
}

// Heal heals the links if Run could not (healAll).
func (s *slowNode) Heal(ctx context.Context) error { return healAll(ctx, s.env) }
