package chaos

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/lockbench/lockbench/chaos/fault"
	"github.com/lockbench/lockbench/chaos/fault/link"
	"github.com/lockbench/lockbench/chaos/keystate"
	"github.com/lockbench/lockbench/cluster"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/workload"
)

// Timings of slow-node.
const (
	// slowReplyTTL is how late slow-node's node answers the struck
	// acquire, in TTLs: past the TTL, so a one-node lock's key has expired
	// when the grant reaches the client, and past a quorum lock's per-node
	// timeout, so its other nodes must make the quorum.
	slowReplyTTL = 1.5
	// slowStrikes is how many acquires a slow-node run strikes.
	slowStrikes = 3
	// slowTries is how many struck acquires a trigger spends at most until
	// one lands (under contention a struck acquire often finds the key
	// taken by another client, and tells nothing).
	slowTries = 5
	// slowOpTimeoutTTL is slow-node's call budget in TTLs: above the
	// delayed reply, so the call waits for it.
	slowOpTimeoutTTL = 3
)

// slowNodeScenario makes n1 (Redlock: one node of five) answer one client's
// outermost acquire 1.5×TTL late, three times a run: the SET runs at
// once, its reply comes after the key it set has expired (one-node
// locks), or after the lock's per-node timeout gave up on the node
// (quorum locks: the other four make the quorum). A granted holder is
// then kept in its critical section until another client is granted the
// key (at most 2×TTL) and has released it (at most TTL/2 more), so a lock
// that trusts the late grant writes while another owner holds the key,
// and a lock that counts its validity from the call's start does not
// write at all. A strike lands when the key was free before the call and
// either the call failed after the delay (the lock saw it had no validity
// left), or it was granted and another client was granted the key while
// the struck holder believed it held it.
func slowNodeScenario() Scenario {
	return Scenario{Name: "slow-node", Kind: Network,
		Faults:  []fault.Fault{&link.SlowReply{}},
		Applies: redisOnly(naProxied, nil),
		Summary: "at an outermost acquire of a free key (after 20%, 47% and 75% of the run) n1 (Redlock: one of five) answers that client 1.5×TTL late: the SET runs at once, its reply comes after the key expired (quorum locks: after the per-node timeout gave up on n1); a granted holder is kept in its critical section until another client was granted the key (≤ 2×TTL) and released it (≤ TTL/2), then writes; lock calls wait 3×TTL (quorum strategies: TTL ≥ 200 ms, 4 clients)",
		Setup: func(in impl.Info) Setup {
			s := proxiedSetup(in, 0) // quorum strategies: TTL ≥ 200 ms, 4 clients
			s.ProxyNode, s.OpTimeoutTTL = 1, slowOpTimeoutTTL
			return s
		},
		New: func(env Env) Nemesis {
			return &slowNodes{onePerTrigger: onePerTrigger{env: env, times: triggers(env.Duration, slowStrikes)},
				seen: newCycles(), pending: map[int]*slowStrike{}, kept: map[int64]*slowStrike{}}
		}}
}

// slowNodes is the nemesis of SlowNode.
type slowNodes struct {
	onePerTrigger
	faultLog
	seen *cycles

	mu      sync.Mutex
	pending map[int]*slowStrike   // client → its struck acquire in flight
	kept    map[int64]*slowStrike // hold → the granted strike whose holder is kept
	tries   int                   // strikes of the current trigger so far
	// block, while set, holds back the other clients' acquires of the
	// struck key until the struck SET has landed on the slow node (or
	// slowBlockTTL×TTL passed): under contention another client's SET
	// would often come first and the struck acquire would tell nothing.
	block *slowStrike

	// A schedule's slow-reply step plays slow-node's strike through these
	// (zero in the scenario): name heads each window's note ("slow-node"
	// when empty), ttls is how late the node answers in TTLs
	// (slowReplyTTL when 0), match narrows the calls struck (a step tied
	// to another step's hold), and struck is told each call struck.
	name   string
	ttls   float64
	match  func(workload.Event) bool
	struck func(workload.Event) // once, when set, strikes one call per trigger whatever it did (a
	// schedule's step fires once; a step tied to it follows that call).
	once bool
}

// late is how late the slow node answers, in TTLs.
func (s *slowNodes) late() float64 {
	if s.ttls > 0 {
		return s.ttls
	}
	return slowReplyTTL
}

// slowBlockTTL bounds how long the other clients' acquires wait for the
// struck SET to land, in TTLs.
const slowBlockTTL = 0.5

// slowStrike is one struck acquire.
type slowStrike struct {
	f      *link.SlowReply
	ev     workload.Event
	before keystate.KeyObs
	start  int64     // history clock at the strike
	wall   time.Time // wall clock at the strike
	call   string    // the call's outcome and the key after it, for the note
	since  int64     // the grants seen at the struck grant (cycles.mark)
	// set is closed when the struck SET was seen on the slow node, or the
	// wait for it ended; during is the key as read then.
	set    chan struct{}
	during keystate.KeyObs
	landed bool // the key was seen set during the delay
	// granted are the tokens granted to other clients during the call: a
	// key seen set to one of them was not the struck SET's.
	granted []string
}

// Run does nothing: the faults act at lock events.
func (s *slowNodes) Run(context.Context) error { return nil }

// Heal removes the delays still in force, records the strikes in flight
// as missed, heals every link (healAll) and returns the errors of the
// run's fault actions.
func (s *slowNodes) Heal(ctx context.Context) error {
	s.mu.Lock()
	pending := s.pending
	s.pending = map[int]*slowStrike{}
	s.mu.Unlock()
	for _, st := range pending {
		_, err := fault.Heal(ctx, st.f)
		s.fail(err)
		s.record(st, false, "the run ended during the call")
	}
	s.bg.Wait()
	return errors.Join(s.err(), healAll(ctx, s.env))
}

// At ends a struck acquire when its client moves on, keeps a granted
// struck holder at its PointInCS, and strikes the first outermost acquire
// of a free key after each trigger.
func (s *slowNodes) At(ctx context.Context, ev workload.Event) error {
	s.seen.see(ev)
	switch ev.Point {
	case workload.PointRenew, workload.PointBeforeExtend, workload.PointAfterSetNX:
		return nil // the renewal goroutine, or inside the struck call
	}
	s.mu.Lock()
	if ev.Point == workload.PointAcquired && ev.Lease != nil {
		for c, p := range s.pending {
			if c != ev.Client {
				p.granted = append(p.granted, ev.Lease.Token)
			}
		}
	}
	st := s.pending[ev.Client]
	delete(s.pending, ev.Client)
	kept := s.kept[ev.Hold]
	if ev.Hold != 0 {
		delete(s.kept, ev.Hold)
	}
	s.mu.Unlock()
	if st != nil {
		s.returned(ctx, st, ev)
		return nil
	}
	if kept != nil {
		s.keep(ctx, kept, ev)
		return nil
	}
	if ev.Point == workload.PointBeforeAcquire {
		s.mu.Lock()
		b := s.block
		s.mu.Unlock()
		if b != nil && b.ev.Client != ev.Client && b.ev.Key == ev.Key && ev.Depth <= 1 {
			select {
			case <-b.set:
			case <-ctx.Done():
			}
		}
	}
	if ev.Point != workload.PointBeforeAcquire || ev.Depth > 1 || (s.match != nil && !s.match(ev)) || !s.take() {
		return nil
	}
	env := s.env
	node := env.Cluster.Nodes()[0]
	f := &link.SlowReply{Links: env.Links, Client: ev.Client, Node: 0, NodeName: node.Name(), D: time.Duration(s.late() * float64(env.TTL))}
	st = &slowStrike{f: f, ev: ev, set: make(chan struct{})}
	// Hold the other clients' acquires of the key back from now on, and
	// wait until the key is free (its holder released it or it expired),
	// at most a TTL: then no other SET is in flight to beat the struck one.
	s.mu.Lock()
	s.block = st
	s.mu.Unlock()
	before, free := s.waitFree(ctx, node, ev.Key, env.TTL)
	if !free {
		s.unblock(st)
		s.untake() // the key stayed held (or unreadable): try another call
		return nil
	}
	st.before, st.start, st.wall = before, env.Clock.Now(), time.Now()
	if _, err := fault.Inject(ctx, f); err != nil {
		s.fail(err)
		s.unblock(st)
		s.done()
		return nil
	}
	s.mu.Lock()
	s.pending[ev.Client] = st
	s.block = st
	s.mu.Unlock()
	if s.struck != nil {
		s.struck(ev)
	}
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		s.watchSet(context.WithoutCancel(ctx), st)
	}()
	return nil
}

// watchSet reads the key on the slow node until the struck SET shows
// (the key present: the others' acquires are held back meanwhile, so it
// is the struck client's), at most slowBlockTTL×TTL, then lets the other
// clients' acquires go on.
func (s *slowNodes) watchSet(ctx context.Context, st *slowStrike) {
	node := s.env.Cluster.Nodes()[st.f.Node]
	deadline := time.Now().Add(time.Duration(slowBlockTTL * float64(s.env.TTL)))
	for {
		o := keystate.Key(ctx, node.Name(), node.Addr(), st.ev.Key, node.Security())
		if o.Present() || !time.Now().Before(deadline) || ctx.Err() != nil {
			s.mu.Lock()
			st.during, st.landed = o, o.Present()
			s.mu.Unlock()
			s.unblock(st)
			return
		}
		sleepCtx(ctx, time.Millisecond)
	}
}

// waitFree reads key on node until it is absent, at most max, and
// returns the last read and whether the key was free.
func (s *slowNodes) waitFree(ctx context.Context, node *cluster.Node, key string, max time.Duration) (keystate.KeyObs, bool) {
	deadline := time.Now().Add(max)
	for {
		o := keystate.Key(ctx, node.Name(), node.Addr(), key, node.Security())
		if o.Err == nil && !o.Present() {
			return o, true
		}
		if !time.Now().Before(deadline) || ctx.Err() != nil {
			return o, false
		}
		sleepCtx(ctx, time.Millisecond)
	}
}

// unblock lets the other clients' acquires held back for st go on.
func (s *slowNodes) unblock(st *slowStrike) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.block == st {
		s.block = nil
	}
	select {
	case <-st.set:
	default:
		close(st.set)
	}
}

// returned ends a struck acquire at its client's next event ev: the
// delay is removed and the key read on the slow node. A granted call
// (PointAcquired) goes on to be kept; any other ends the strike.
func (s *slowNodes) returned(ctx context.Context, st *slowStrike, ev workload.Event) {
	took := time.Since(st.wall)
	<-st.set // bounded by slowBlockTTL×TTL
	_, err := fault.Heal(ctx, st.f)
	s.fail(err)
	node := s.env.Cluster.Nodes()[st.f.Node]
	after := keystate.Key(ctx, node.Name(), node.Addr(), st.ev.Key, node.Security())
	granted := ev.Point == workload.PointAcquired && ev.Hold != 0
	outcome := "did not grant"
	if granted {
		outcome = "granted"
		if ev.Lease != nil {
			outcome += " with token " + ev.Lease.Token
		}
	}
	s.mu.Lock()
	set, during := st.landed, st.during
	if slices.Contains(st.granted, during.Value) {
		set = false // another client's SET came first
	}
	s.mu.Unlock()
	st.call = fmt.Sprintf("before %s; during the delay (others' acquires held back) %s; the call took %.1fms and %s; %s after it: %s",
		st.before, during, float64(took)/1e6, outcome, node.Name(), after)
	if !set {
		s.record(st, false, "its SET was not seen on "+node.Name()+" (another client's came first)")
		return
	}
	if granted {
		st.since = s.seen.mark()
		s.mu.Lock()
		s.kept[ev.Hold] = st
		s.mu.Unlock()
		return
	}
	s.record(st, took >= st.f.D, "")
}

// keep holds a granted struck holder at its PointInCS until another
// client was granted the key after it (at most 2×TTL) and has released
// it (at most TTL/2 more), then lets it go on to its write. At any other
// event of the hold (it left before its critical section) it records the
// strike as it stands.
func (s *slowNodes) keep(ctx context.Context, st *slowStrike, ev workload.Event) {
	if ev.Point != workload.PointInCS {
		s.record(st, s.seen.has(st.ev.Client, st.ev.Key, st.since, false), "the hold ended before its critical section")
		return
	}
	t := time.Now()
	other := s.seen.wait(ctx, ev.Client, ev.Key, st.since, false, 2*s.env.TTL)
	extra := fmt.Sprintf("then kept in its critical section %.1fms until another client was granted the key (granted: %v)",
		float64(time.Since(t))/1e6, other)
	if other {
		t = time.Now()
		done := s.seen.wait(ctx, ev.Client, ev.Key, st.since, true, s.env.TTL/2)
		extra += fmt.Sprintf(", %.1fms more until that holder released (released: %v)", float64(time.Since(t))/1e6, done)
	}
	s.record(st, other, extra)
}

// record records a strike's window from the strike to now, ends the
// trigger, or gives it back when the strike did not land and the trigger
// has tries left.
func (s *slowNodes) record(st *slowStrike, landed bool, extra string) {
	name := s.name
	if name == "" {
		name = "slow-node"
	}
	note := fmt.Sprintf("%s: client %d's acquire of %s: %s %v (%.3g×TTL): %s",
		name, st.ev.Client, st.ev.Key, "replies of "+st.f.NodeName+" delayed", st.f.D, s.late(), st.call)
	if extra != "" {
		note += "; " + extra
	}
	recordWindow(s.env, st.start, s.env.Clock.Now(), landing(landed), note)
	s.mu.Lock()
	s.tries++
	again := !landed && s.tries < slowTries && !s.once
	if !again {
		s.tries = 0
	}
	s.mu.Unlock()
	if again {
		s.untake()
	} else {
		s.done()
	}
}
