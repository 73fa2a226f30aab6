package chaos

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lockbench/lockbench/chaos/fault"
	"github.com/lockbench/lockbench/cluster"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/workload"
)

// consensusScenarios are the server faults of etcd clusters and ZooKeeper
// ensembles (topologies etcd:3 and zookeeper:3), built from the same
// Fault values as the Redis process faults (fault.NodeKill, fault.NodePause): the
// leader killed and restarted, the leader paused past the TTL, a quorum
// lost. The client faults (gc-pause, long-cs, crash-between) apply to
// these strategies unchanged.
func consensusScenarios() []Scenario {
	return []Scenario{leaderKillScenario(), leaderPauseScenario(), quorumLossScenario()}
}

// naConsensus is why the consensus scenarios do not apply to Redis
// strategies.
const naConsensus = "acts on the leader and quorum of an etcd cluster or ZooKeeper ensemble; Redis strategies: node-restart, node-pause, failover-lost-write and redlock-majority-down are their server faults"

// Timings of the consensus scenarios.
const (
	// leaderStrikes is how many times leader-kill and leader-pause strike
	// a held lock in a run.
	leaderStrikes = 2
	// consensusMinDuration leaves room in a run for two strikes, the
	// holder's hold past its TTL and enough grants besides for the
	// evidence rules (measured at TTL 1 s with 16 clients on one key:
	// 2-4 grants/s while the holds and elections last; 4 s runs gave
	// 9-18 holds, short of validate.MinHolds in half of them).
	consensusMinDuration = 6 * time.Second
	// quorumLossMinDuration: every acquire during the outage fails fast
	// with an unknown outcome (measured: 320 of 369 in a 4 s run), so the
	// run around it must be long enough for the known outcomes to
	// outnumber them (validate.MaxUnknownShare).
	quorumLossMinDuration = 10 * time.Second
	// leaderRejoin bounds the wait, after a strike, until the struck
	// member serves in its quorum again (a JVM restarts in seconds on a
	// loaded 2-core machine), before the next strike may come.
	leaderRejoin = 20 * time.Second
)

// consensusSetup is the Setup of the consensus scenarios: the strategy's
// topology, at least consensusMinDuration of run time.
func consensusSetup(impl.Info) Setup { return Setup{MinDuration: consensusMinDuration} }

// leaderKillScenario SIGKILLs the current leader (cluster.Leader) at a fresh
// grant and restarts it at once with its data (it rejoins as a follower
// or wins again), twice a run. The holder is kept at its grant for
// 1.5×TTL or until another client is granted its key: the lease must
// outlive the election (the client's keep-alives or pings reach the new
// leader), or another client is granted and exclusion breaks. A strike
// lands when another client was granted during the hold: under a lock
// that survives the kill nobody is, and every strike misses. The window's
// note counts the acquire calls of the key other clients began during the
// hold, so that a miss reads as the lock keeping them out, or as nobody
// trying ("the hold was not tested").
func leaderKillScenario() Scenario {
	return Scenario{Name: "leader-kill", Kind: Process,
		Faults:  []fault.Fault{&fault.NodeKill{}, &fault.NodeRestart{}},
		Summary: "etcd/ZooKeeper: at a fresh grant the leader is SIGKILLed and restarted at once with its data; the holder is kept 1.5×TTL (or until another client is granted), so its lease must survive the election; twice a run",
		Applies: consensusOnly(naConsensus),
		Setup:   consensusSetup,
		New: func(env Env) Nemesis {
			return &leaderFaults{onePerTrigger: onePerTrigger{env: env, times: triggers(env.Duration, leaderStrikes)},
				seen: newGrants(), mode: "leader-kill"}
		}}
}

// leaderPauseScenario SIGSTOPs the current leader at a fresh grant for 2×TTL,
// then SIGCONTs it, twice a run: the others elect a new leader
// meanwhile, and the paused one wakes up deposed. The holder is kept as
// in LeaderKill, 1.5×TTL or until another client is granted.
func leaderPauseScenario() Scenario {
	return Scenario{Name: "leader-pause", Kind: Process,
		Faults:  []fault.Fault{&fault.NodePause{}},
		Summary: "etcd/ZooKeeper: at a fresh grant the leader is SIGSTOPped for 2×TTL (past the lease; the others elect a new leader), then SIGCONTed; the holder is kept 1.5×TTL (or until another client is granted); twice a run",
		Applies: consensusOnly(naConsensus),
		Setup:   consensusSetup,
		New: func(env Env) Nemesis {
			return &leaderFaults{onePerTrigger: onePerTrigger{env: env, times: triggers(env.Duration, leaderStrikes)},
				seen: newGrants(), mode: "leader-pause"}
		}}
}

// quorumLossScenario SIGKILLs 2 of the 3 members (the leader and a seeded
// follower) at the first grant after 20% of the run, keeps them down for
// 2×TTL and restarts them with their data. Without a quorum nothing may
// be granted (the window is the outage: a grant invoked and completed in
// it is a violation of the pair's no-grants expectation), and after the
// restart the cluster must grant again (the liveness probe).
func quorumLossScenario() Scenario {
	return Scenario{Name: "quorum-loss", Kind: Process,
		Faults:  []fault.Fault{&fault.NodeKill{}},
		Summary: "etcd/ZooKeeper: at a grant after 20% of the run 2 of 3 members (the leader and a seeded follower) are SIGKILLed, down for 2×TTL, then restarted with their data; nothing may be granted meanwhile",
		Applies: consensusOnly(naConsensus),
		Setup:   func(impl.Info) Setup { return Setup{MinDuration: quorumLossMinDuration} },
		New: func(env Env) Nemesis {
			return &leaderFaults{onePerTrigger: onePerTrigger{env: env, times: triggers(env.Duration, 1)},
				seen: newGrants(), mode: "quorum-loss"}
		}}
}

// leaderFaults is the nemesis of the consensus scenarios (mode is the
// scenario's name): at the first grant after each trigger it strikes the
// leader in the background (strikeAside's pattern) while the holder is
// kept, and waits until the struck members serve again before the next
// trigger may fire.
type leaderFaults struct {
	onePerTrigger
	faultLog
	seen *grants
	mode string
}

// Run returns at once: the faults act at lock events.
func (l *leaderFaults) Run(context.Context) error { return nil }

// Heal waits for a strike in flight, restarts or resumes any member still
// down or paused (healAll), waits until the members agree on a leader
// again, and returns the errors of the run's fault actions.
func (l *leaderFaults) Heal(ctx context.Context) error {
	l.bg.Wait()
	err := healAll(ctx, l.env)
	if err == nil && l.env.Cluster.Backend() != cluster.BackendExternal {
		err = l.env.Cluster.WaitQuorum(ctx, leaderRejoin)
	}
	return errors.Join(l.err(), err)
}

// At strikes at the first grant after each trigger.
func (l *leaderFaults) At(ctx context.Context, ev workload.Event) error {
	l.seen.see(ev)
	if ev.Point != workload.PointAcquired || !l.take() {
		return nil
	}
	held := make(chan holdOutcome, 1)
	l.bg.Add(1)
	go func() {
		defer l.bg.Done()
		defer l.done()
		l.strike(context.WithoutCancel(ctx), ev, held)
	}()
	// The holder stays at its grant past its TTL: only a lease kept alive
	// through the fault keeps the others out.
	d := l.env.TTL + l.env.TTL/2
	if l.mode == "quorum-loss" {
		d = 0 // the outage is the window; the holder goes on at once
	}
	other, who, tries := false, -1, -1
	before := l.seen.attemptsOf(ev.Key)
	if d > 0 && l.seen.waitOther(ctx, ev.Client, ev.Key, d) {
		other, who = true, l.seen.lastClient(ev.Key)
	}
	if d > 0 {
		tries = l.seen.attemptsOf(ev.Key) - before
	}
	held <- holdOutcome{other, who, tries}
	return nil
}

// strike finds the leader and kills and restarts it (leader-kill), pauses
// and resumes it (leader-pause), or kills it and a seeded follower for
// 2×TTL (quorum-loss); it records the window and waits until the members
// serve again.
func (l *leaderFaults) strike(ctx context.Context, ev workload.Event, held <-chan holdOutcome) {
	c := l.env.Cluster
	lctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	leader, err := c.Leader(lctx)
	cancel()
	if err != nil {
		l.fail(fmt.Errorf("%s: find the leader: %w", l.mode, err))
		<-held
		return
	}
	var start, end int64
	var evidence string
	switch l.mode {
	case "leader-kill":
		start = l.env.Clock.Now()
		evidence, err = fault.Inject(ctx, &fault.NodeRestart{Node: leader, KeepsData: true})
		end = l.env.Clock.Now()
	case "leader-pause":
		f := &fault.NodePause{Node: leader}
		if evidence, err = fault.Inject(ctx, f); err != nil {
			break
		}
		start = l.env.Clock.Now()
		sleepCtx(ctx, 2*l.env.TTL)
		end = l.env.Clock.Now()
		var resumed string
		resumed, err = fault.Heal(ctx, f)
		evidence = fmt.Sprintf("%s for %v, then %s", evidence, time.Duration(end-start).Round(time.Millisecond), resumed)
	case "quorum-loss":
		var follower *cluster.Node
		var others []*cluster.Node
		for _, n := range c.Nodes() {
			if n != leader {
				others = append(others, n)
			}
		}
		if len(others) == 0 {
			err = errors.New("a single member: no quorum to lose")
			break
		}
		follower = others[newRand(l.env.Seed).IntN(len(others))]
		kills := []*fault.NodeKill{{Node: leader}, {Node: follower}}
		var evs []string
		for _, k := range kills {
			e, kerr := fault.Inject(ctx, k)
			if kerr != nil {
				err = kerr
				break
			}
			evs = append(evs, e)
		}
		start = l.env.Clock.Now()
		if err == nil {
			sleepCtx(ctx, 2*l.env.TTL)
		}
		end = l.env.Clock.Now()
		for _, k := range kills {
			e, herr := fault.Heal(ctx, k)
			err = errors.Join(err, herr)
			if e != "" {
				evs = append(evs, e)
			}
		}
		evidence = fmt.Sprintf("leader %s and follower %s down: %v", leader.Name(), follower.Name(), evs)
	}
	h := <-held
	if err != nil {
		l.fail(fmt.Errorf("%s: %w", l.mode, err))
		return
	}
	recordWindow(l.env, start, end, h.landing(), fmt.Sprintf("%s: leader %s: %s; struck client %d hold %d on %s; %s",
		l.mode, leader.Name(), evidence, ev.Client, ev.Hold, ev.Key, h))
	if c.Backend() != cluster.BackendExternal {
		wctx, cancel := context.WithTimeout(ctx, leaderRejoin)
		defer cancel()
		if err := c.WaitQuorum(wctx, leaderRejoin); err != nil {
			l.fail(fmt.Errorf("%s: after the strike: %w", l.mode, err))
		}
	}
}
