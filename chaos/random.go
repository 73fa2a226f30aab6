package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/lockbench/lockbench/chaos/fault"
	"github.com/lockbench/lockbench/chaos/fault/link"
	"github.com/lockbench/lockbench/cluster"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/workload"
)

// mixedScenarios are the scenarios that mix several kinds of fault.
func mixedScenarios() []Scenario {
	return []Scenario{randomScenario()}
}

// Timings of the random mix.
const (
	// RandomLatencyEachWay is the delay a random-mix latency fault adds in
	// each direction: 20 ms per round trip, under half the matrix's 50 ms TTL.
	RandomLatencyEachWay = 10 * time.Millisecond
	// randomMinDuration is the random mix's minimum run time;
	// randomQuorumMinDuration for quorum strategies, whose faults last
	// longer with QuorumProxiedTTL.
	randomMinDuration       = 1500 * time.Millisecond
	randomQuorumMinDuration = 3 * time.Second
)

// randomScenario is a seeded random mix of server-side faults over a run of at
// least 1.5 s: node kill and restart (no persistence: the node comes back
// empty), pause and resume, latency on a node's links, a client cut off
// from some nodes, and forward clock jumps, one fault at a time with
// random gaps and durations (randomFaults), and the loss of a held key
// (deleted on every node, as an eviction or an operator's DEL would: the
// key of the latest grant, whoever holds it then). Quorum strategies run with
// QuorumProxiedTTL and quorumProxiedClients for at least 3 s. Faults lists
// every primitive the mix may pick, the clock jump included: a backend
// without one of them refuses the scenario before the run rather than
// failing when the seed picks it, and the mix stays the same on every
// backend (its at-risk verdicts rest on the clock jumps). The faults
// target no holder: their landing is "" (the nemesis cannot tell).
func randomScenario() Scenario {
	return Scenario{Name: "random", Kind: Mixed,
		Faults:  []fault.Fault{&fault.NodeKill{}, &fault.NodePause{}, &link.Latency{}, &link.Cut{}, &fault.ClockJump{}, &fault.KeyLoss{}},
		Summary: "a seeded random mix, one fault at a time: kill+restart (empty), pause, +10 ms latency each way, a client cut off, clock jumps, a held key deleted; gaps TTL/2-2×TTL, faults TTL-3×TTL; at least 1.5 s",
		Applies: redisOnly("mixes Redis faults (an empty restart, per-link proxies, clock jumps through the clock shim) that etcd and ZooKeeper have no counterpart for; leader-kill, leader-pause and quorum-loss cover their server faults", nil),
		Setup: func(in impl.Info) Setup {
			s := proxiedSetup(in, randomQuorumMinDuration)
			s.ClockShim = true
			if s.MinDuration == 0 {
				s.MinDuration = randomMinDuration
			}
			return s
		},
		New: func(env Env) Nemesis {
			return &randomMix{env: env, rng: newRand(env.Seed), clocks: fault.NewClocks()}
		}}
}

// randomMix injects timed faults from Run; clients' events only tell it
// which key was granted last (the key a key loss takes).
type randomMix struct {
	env    Env
	rng    *rand.Rand
	clocks *fault.Clocks

	mu      sync.Mutex
	lastKey string // the key of the latest grant ("" before the first)
}

// At notes the key of each grant, for the mix's key loss.
func (m *randomMix) At(_ context.Context, ev workload.Event) error {
	if ev.Point == workload.PointAcquired && ev.Key != "" {
		m.mu.Lock()
		m.lastKey = ev.Key
		m.mu.Unlock()
	}
	return nil
}

// grantedKey is the key of the latest grant ("" before the first).
func (m *randomMix) grantedKey() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.lastKey
}

// randomFault is one kind of fault the random mix picks from.
type randomFault struct {
	// kind names it in notes: "random/<kind>: ...".
	kind string
	// build makes the fault for node index i with duration d, drawing
	// further choices from m.rng, and says how long it stays in force
	// between Inject and Heal.
	build func(m *randomMix, i int, d time.Duration) (f fault.Fault, hold time.Duration)
	// note is the window's note after the kind: from the fault's
	// evidence, Heal's evidence and the hold.
	note func(env Env, f fault.Fault, injected, healed string, hold time.Duration) string
}

// randomFaults are the fault kinds of the random mix, in the order the
// seed picks from.
var randomFaults = []randomFault{
	{"kill",
		func(m *randomMix, i int, _ time.Duration) (fault.Fault, time.Duration) {
			return &fault.NodeKill{Node: m.node(i)}, between(m.rng, 0, 2*m.env.TTL)
		},
		func(_ Env, _ fault.Fault, injected, healed string, hold time.Duration) string {
			return fmt.Sprintf("%s; after %v %s", injected, hold, healed)
		}},
	{"pause",
		func(m *randomMix, i int, d time.Duration) (fault.Fault, time.Duration) {
			return &fault.NodePause{Node: m.node(i), External: m.env.Cluster.Backend() == cluster.BackendExternal, D: d}, d
		},
		func(_ Env, _ fault.Fault, injected, healed string, hold time.Duration) string {
			return fmt.Sprintf("%s for %v, then %s", injected, hold, healed)
		}},
	{"latency",
		func(m *randomMix, i int, d time.Duration) (fault.Fault, time.Duration) {
			return &link.Latency{Links: m.env.Links, Node: i, D: RandomLatencyEachWay}, d
		},
		func(env Env, f fault.Fault, injected, _ string, hold time.Duration) string {
			l := f.(*link.Latency)
			return fmt.Sprintf("+%v each way on every link to %s for %v; %s", l.D, nodeNames(env, []int{l.Node}), hold, injected)
		}},
	{"partition",
		func(m *randomMix, _ int, d time.Duration) (fault.Fault, time.Duration) {
			n := nodeCount(m.env)
			client := m.rng.IntN(m.env.Clients)
			return &link.Cut{Links: m.env.Links, Client: client, Nodes: m.rng.Perm(n)[:1+m.rng.IntN(n)]}, d
		},
		func(env Env, f fault.Fault, injected, _ string, hold time.Duration) string {
			c := f.(*link.Cut)
			return fmt.Sprintf("client %d cut off from %s for %v (%s)", c.Client, nodeNames(env, c.Nodes), hold, injected)
		}},
	{"clock-jump",
		func(m *randomMix, i int, d time.Duration) (fault.Fault, time.Duration) {
			return &fault.ClockJump{Clocks: m.clocks, Node: m.node(i), Step: d}, 0
		},
		func(_ Env, _ fault.Fault, injected, _ string, _ time.Duration) string { return injected }},
	// held-key-loss's fault without its hold-back: the key of the latest
	// grant is deleted on every node, whoever holds it then.
	{"key-loss",
		func(m *randomMix, _ int, _ time.Duration) (fault.Fault, time.Duration) {
			return &fault.KeyLoss{Nodes: m.env.Cluster.Nodes()[:nodeCount(m.env)], Key: m.grantedKey()}, 0
		},
		func(_ Env, _ fault.Fault, injected, _ string, _ time.Duration) string {
			return "the latest grant's key deleted: " + injected
		}},
}

// node returns the cluster's node i.
func (m *randomMix) node(i int) *cluster.Node { return m.env.Cluster.Nodes()[i] }

// between returns a duration uniformly in [lo, hi).
func between(r *rand.Rand, lo, hi time.Duration) time.Duration {
	if hi <= lo {
		return lo
	}
	return lo + time.Duration(r.Int64N(int64(hi-lo)))
}

// Run injects faults until ctx ends or no fault (at most 3×TTL) would end
// before 90% of the run, so the run shows its recovery. Each fault is
// healed before the next starts (also when ctx ends while it holds), so
// Heal only has to check.
func (m *randomMix) Run(ctx context.Context) error {
	env := m.env
	ttl := env.TTL
	n := nodeCount(env)
	last := int64(env.Duration*9/10 - 3*ttl)
	if !sleepUntil(ctx, env, 0) { // the readiness barrier
		return nil
	}
	for {
		sleepCtx(ctx, between(m.rng, ttl/2, 2*ttl))
		if now, _ := env.since(); ctx.Err() != nil || now > last {
			return nil
		}
		rf := randomFaults[m.rng.IntN(len(randomFaults))]
		if rf.kind == "key-loss" && m.grantedKey() == "" {
			// No grant yet, no key to take: one of the other kinds (key
			// loss is the last).
			rf = randomFaults[m.rng.IntN(len(randomFaults)-1)]
		}
		i := m.rng.IntN(n)
		d := between(m.rng, ttl, 3*ttl)
		f, hold := rf.build(m, i, d)
		// Inject and Heal run even when ctx ended meanwhile; only the hold
		// is cut short.
		undo := context.WithoutCancel(ctx)
		start := env.Clock.Now()
		injected, err := fault.Inject(undo, f)
		var healed string
		if err == nil {
			sleepCtx(ctx, hold)
			var herr error
			healed, herr = fault.Heal(undo, f)
			err = herr
		}
		recordWindow(env, start, env.Clock.Now(), "", fmt.Sprintf("random/%s: %s", rf.kind, rf.note(env, f, injected, healed, hold)))
		if err != nil {
			return fmt.Errorf("chaos: random %s on n%d: %w", rf.kind, i+1, err)
		}
	}
}

// Heal heals what a failed Run may have left broken (healAll).
func (m *randomMix) Heal(ctx context.Context) error { return healAll(ctx, m.env) }
