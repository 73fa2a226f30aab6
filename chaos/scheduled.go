package chaos

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/lockbench/lockbench/chaos/fault"
	"github.com/lockbench/lockbench/chaos/fault/link"
	"github.com/lockbench/lockbench/chaos/keystate"
	"github.com/lockbench/lockbench/chaos/schedule"
	"github.com/lockbench/lockbench/cluster"
	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/workload"
)

// ScheduleScenario is the scenario that plays the fault schedule s: its
// name is s.Scenario() ("schedule:NAME"), its faults the primitives of
// the steps, its setup what they need (per-link proxies for link faults
// and lost replies, the clock shim for clock jumps, nesting for a nested
// call, the TTL floor of the scenarios that exercise each primitive), and
// its nemesis the generic one (a *scheduled): each step waits for its
// lock event after its time, strikes its target, and is recorded as a
// nemesis operation "PRIMITIVE (step N): ..." with its landing.
func ScheduleScenario(s schedule.Schedule) Scenario {
	var faults []fault.Fault
	kinds := map[Kind]bool{}
	for _, name := range s.Faults() {
		if p, ok := schedule.LookupPrimitive(name); ok {
			faults = append(faults, p.Fault)
			kinds[primitiveKind(name)] = true
		}
	}
	kind := Mixed
	switch len(kinds) {
	case 0:
		kind = None
	case 1:
		for k := range kinds {
			kind = k
		}
	}
	onCluster, onReplicas := writtenFor(s)
	return Scenario{Name: s.Scenario(), Kind: kind, Summary: "fault schedule: " + s.String(), Faults: faults,
		Applies: func(in impl.Info) (bool, string) { return scheduleApplies(s, in) },
		Setup:   func(in impl.Info) Setup { return scheduleSetup(s, in) }, OnCluster: onCluster, OnReplicas: onReplicas,
		New: func(env Env) Nemesis { return newScheduled(env, s) }}
}

// primitiveKind is where a primitive acts, as a scenario Kind.
func primitiveKind(name string) Kind {
	switch name {
	case "client-pause", "slow-cs", "client-crash", "cancel":
		return Client
	case "node-kill", "node-restart", "node-pause", "key-loss":
		return Process
	case "clock-jump", "client-clock-step":
		return Clock
	}
	return Network
}

// scheduled is the generic nemesis of a fault schedule: it matches every
// lock event against the steps in order, strikes each step once, and
// records each strike as a nemesis operation. Client-side faults (a
// pause, a slow critical section, a crash) act on the client's goroutine
// inside At; server and link faults run in the background, so a slow
// kill or restart never holds the client; lost replies, slow replies to
// an acquire and cancelled acquires are played by their scenario's
// nemesis (lostReplies, slowNodes, cancels), one per step, so a step
// strikes, and lands, as the scenario does.
type scheduled struct {
	env    Env
	steps  []*stepRun
	paused *fault.PausedClients
	seen   *cycles
	clocks *fault.Clocks
	log    faultLog

	mu      sync.Mutex
	holders map[string]int // key → its current holder (outermost grant to release)
	// blocked holds other clients' acquires of a key a key-loss step took
	// back until a time (run clock, ns), as held-key-loss does.
	blocked map[string]keyBlock
	// clockSteps are the client-clock-step steps whose window is open,
	// by struck client.
	clockSteps map[int]*openClockStep
}

// keyBlock holds back the acquires of a key by every client but holder
// until until (run clock, ns).
type keyBlock struct {
	holder int
	until  int64
}

// stepRun is one step of a schedule in a run.
type stepRun struct {
	n  int // 1-based
	st schedule.Step
	p  schedule.Primitive
	at int64 // ns after the schedule started
	// sub, when set, plays the step: the nemesis of the scenario that
	// exercises the primitive alone, narrowed to the step's time and tie.
	sub Nemesis

	mu      sync.Mutex
	claimed bool
	fired   chan struct{} // closed once claimed; ev is set then
	ev      workload.Event
}

func newScheduled(env Env, s schedule.Schedule) *scheduled {
	m := &scheduled{env: env, paused: fault.NewPausedClients(), seen: newCycles(), clocks: fault.NewClocks(), holders: map[string]int{}, blocked: map[string]keyBlock{}, clockSteps: map[int]*openClockStep{}}
	for i, st := range s.Steps {
		p, _ := schedule.LookupPrimitive(st.Fault)
		r := &stepRun{n: i + 1, st: st, p: p, at: int64(st.At * float64(env.TTL)), fired: make(chan struct{})}
		switch {
		case st.Fault == "lost-reply":
			r.sub = m.lostReplyOf(r)
		case st.Fault == "slow-reply" && st.On == string(workload.PointBeforeAcquire):
			r.sub = m.slowNodeOf(r)
		case st.Fault == "cancel":
			r.sub = m.cancelOf(r)
		}
		m.steps = append(m.steps, r)
	}
	return m
}

// name is the step's window name: "PRIMITIVE (step N)".
func (r *stepRun) name() string { return fmt.Sprintf("%s (step %d)", r.st.Fault, r.n) }

// lostReplyOf builds the lost-reply nemesis that plays step r: one
// trigger at r's time (at once for a step tied to another), aimed at the
// call r's event names, narrowed to r's tie.
func (m *scheduled) lostReplyOf(r *stepRun) *lostReplies {
	target := targetExtend
	switch {
	case r.st.On == string(workload.PointBeforeAcquire) && r.st.Depth >= 2:
		target = targetReentrant
	case r.st.On == string(workload.PointBeforeAcquire):
		target = targetAcquire
	case r.st.On == string(workload.PointBeforeRelease):
		target = targetRelease
	}
	lr := &lostReplies{onePerTrigger: onePerTrigger{env: m.env, times: []int64{r.subAt()}},
		name: r.name(), target: target, pending: map[int]*replyStrike{}, renewed: map[int64]bool{}, once: true}
	lr.match = func(ev workload.Event) bool { return m.tied(r, ev) }
	lr.struck = func(ev workload.Event) { r.claim(ev) }
	return lr
}

// subAt is when a step played by a sub-nemesis is due: r's time, or at
// once for a step tied to another (its tie decides).
func (r *stepRun) subAt() int64 {
	if r.st.With > 0 {
		return 0
	}
	return r.at
}

// slowNodeOf builds the slow-node nemesis that plays slow-reply step r
// (at an outermost acquire): one trigger at r's time, the node answering
// r's Size TTLs late, narrowed to r's tie.
func (m *scheduled) slowNodeOf(r *stepRun) *slowNodes {
	s := &slowNodes{onePerTrigger: onePerTrigger{env: m.env, times: []int64{r.subAt()}},
		seen: newCycles(), pending: map[int]*slowStrike{}, kept: map[int64]*slowStrike{},
		name: r.name(), ttls: r.st.Size, once: true}
	s.match = func(ev workload.Event) bool { return m.tied(r, ev) }
	s.struck = func(ev workload.Event) { r.claim(ev) }
	return s
}

// cancelOf builds the cancel nemesis that plays cancel step r: one
// trigger at r's time, narrowed to r's tie.
func (m *scheduled) cancelOf(r *stepRun) *cancels {
	c := &cancels{onePerTrigger: onePerTrigger{env: m.env, times: []int64{r.subAt()}},
		pending: map[int]*cancelStrike{}, name: r.name(), once: true}
	c.match = func(ev workload.Event) bool { return m.tied(r, ev) }
	c.struck = func(ev workload.Event) { r.claim(ev) }
	return c
}

// claim marks r fired by ev; false if it had fired already.
func (r *stepRun) claim(ev workload.Event) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.claimed {
		return false
	}
	r.claimed, r.ev = true, ev
	close(r.fired)
	return true
}

// struck returns the event r fired at; ok is false before it fired.
func (r *stepRun) struck() (workload.Event, bool) {
	select {
	case <-r.fired:
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.ev, true
	default:
		return workload.Event{}, false
	}
}

// tied reports whether ev is an event step r may strike beyond its point:
// with a tie (With), the client and hold of the step tied to (another
// client on its key for target waiter) once that step fired; without one,
// any event after r's time (for target waiter: of a client other than the
// key's holder).
func (m *scheduled) tied(r *stepRun, ev workload.Event) bool {
	if r.st.With > 0 {
		ref, ok := m.steps[r.st.With-1].struck()
		if !ok {
			return false
		}
		if r.st.Target == schedule.TargetWaiter {
			return ev.Client != ref.Client && ev.Key == ref.Key
		}
		return ev.Client == ref.Client && (ev.Key == "" || ref.Key == "" || ev.Key == ref.Key) &&
			(ev.Hold == 0 || ref.Hold == 0 || ev.Hold == ref.Hold)
	}
	if r.st.Target == schedule.TargetWaiter {
		m.mu.Lock()
		h, held := m.holders[ev.Key]
		m.mu.Unlock()
		return held && h != ev.Client
	}
	return true
}

// matches reports whether ev triggers step r (not yet fired): its point
// and depth, its time, its tie.
func (m *scheduled) matches(r *stepRun, ev workload.Event) bool {
	if r.st.On == schedule.OnTime || string(ev.Point) != r.st.On {
		return false
	}
	if ev.Point == workload.PointBeforeAcquire || ev.Point == workload.PointBeforeRelease {
		if r.st.Depth == 0 && ev.Depth > 1 || r.st.Depth >= 2 && ev.Depth != r.st.Depth {
			return false
		}
	}
	if r.st.With == 0 && !stepDue(m.env, r.at) {
		return false
	}
	return m.tied(r, ev)
}

// stepDue reports whether schedule time at (ns after the schedule
// started) has come.
func stepDue(env Env, at int64) bool { return env.due(at) }

// see keeps the key → holder map from grants and releases.
func (m *scheduled) see(ev workload.Event) {
	m.seen.see(ev)
	switch ev.Point {
	case workload.PointAcquired:
		m.mu.Lock()
		m.holders[ev.Key] = ev.Client
		m.mu.Unlock()
	case workload.PointReleased:
		m.mu.Lock()
		if m.holders[ev.Key] == ev.Client {
			delete(m.holders, ev.Key)
		}
		m.mu.Unlock()
	}
	if ev.Point == workload.PointBeforeRelease || ev.Point == workload.PointReleased {
		m.closeClockStep(ev.Client, ev.Hold, "its release")
	}
}

// At plays the steps an event triggers, in step order: a paused client
// first waits out its pause (every event of it, its renewal's too), then
// each step, in order: one played by its scenario's nemesis (a lost
// reply, a slow reply to an acquire, a cancel) sees every event and
// strikes as that nemesis does; any other strikes when the event matches
// it. A crash returns impl.ErrCrashed.
func (m *scheduled) At(ctx context.Context, ev workload.Event) error {
	m.see(ev)
	if err := m.paused.Wait(ctx, ev.Client); err != nil {
		return nil
	}
	if ev.Point == workload.PointBeforeAcquire {
		m.mu.Lock()
		b, ok := m.blocked[ev.Key]
		m.mu.Unlock()
		if d := time.Duration(b.until - m.env.Clock.Now()); ok && b.holder != ev.Client && d > 0 {
			sleepCtx(ctx, d)
		}
	}
	for _, r := range m.steps {
		if r.sub != nil {
			if err := r.sub.At(ctx, ev); err != nil {
				return err
			}
			continue
		}
		if !m.matches(r, ev) || !r.claim(ev) {
			continue
		}
		if err := m.strike(ctx, r, ev); err != nil {
			return err
		}
	}
	return nil
}

// Run plays the steps on OnTime at their time, each in the background,
// and returns when they are struck or ctx ends.
func (m *scheduled) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	for _, r := range m.steps {
		if r.st.On != schedule.OnTime {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if !sleepUntil(ctx, m.env, r.at) || !r.claim(workload.Event{Client: -1}) {
				return
			}
			m.strike(ctx, r, workload.Event{Client: -1})
		}()
	}
	wg.Wait()
	return nil
}

// Heal ends the strikes in flight (the steps played by a scenario's
// nemesis first), waits for the
// background ones to be recorded, heals everything (healAll) and returns
// the errors of the heals: a step that could not be injected is recorded
// as a missed window ("not injected: why"), not an error.
func (m *scheduled) Heal(ctx context.Context) error {
	var errs []error
	for _, r := range m.steps {
		if r.sub != nil {
			errs = append(errs, r.sub.Heal(ctx))
		}
	}
	m.log.bg.Wait()
	m.neverStruck()
	m.healClockSteps()
	return errors.Join(append(errs, m.log.err(), healAll(ctx, m.env))...)
}

// neverStruck records, for each step whose event never came (the run
// ended first, or the step it is tied to never fired), a missed window
// at the end saying so: a schedule whose steps never struck tested
// nothing, and the run's faults and report say which ones.
func (m *scheduled) neverStruck() {
	for _, r := range m.steps {
		if _, ok := r.struck(); ok {
			continue
		}
		t := m.env.Clock.Now()
		why := "the run ended first"
		if r.st.With > 0 {
			why = fmt.Sprintf("the run ended first, or step %d it is tied to never gave it its event", r.st.With)
		}
		what := fmt.Sprintf("no matching %s event after %v (%s)", r.st.On, time.Duration(r.at), why)
		if r.st.On == schedule.OnTime {
			what = fmt.Sprintf("its time, %v into the schedule, came after the run ended", time.Duration(r.at))
		}
		recordWindow(m.env, t, t, history.Missed, fmt.Sprintf("%s: %s: never struck: %s", r.name(), r.st, what))
	}
}

// strike plays step r at event ev: a client-side fault on the calling
// goroutine (it returns when the fault ends; a crash returns
// impl.ErrCrashed), any other in the background after the step's delay.
func (m *scheduled) strike(ctx context.Context, r *stepRun, ev workload.Event) error {
	switch r.st.Fault {
	case "client-pause":
		m.pause(ctx, r, ev)
		return nil
	case "slow-cs":
		m.window(ctx, r, ev, &fault.SlowCS{D: m.ttls(r.st.For)}, false)
		return nil
	case "client-clock-step":
		m.clockStep(ctx, r, ev)
		return nil
	case "slow-reply": // at a renewal or an extend; an acquire's is r.sub
		m.slowExtend(ctx, r, ev)
		return nil
	case "client-crash":
		evidence, _ := fault.Inject(ctx, &fault.ClientCrash{Event: ev})
		t := m.env.Clock.Now()
		recordWindow(m.env, t, t, history.Landed, fmt.Sprintf("%s: %s: %s", r.name(), r.st, evidence))
		return impl.ErrCrashed
	}
	m.log.bg.Add(1)
	go func() {
		defer m.log.bg.Done()
		bctx := context.WithoutCancel(ctx)
		sleepCtx(ctx, m.ttls(r.st.Delay))
		f, err := m.fault(bctx, r, ev)
		if err != nil {
			t := m.env.Clock.Now()
			recordWindow(m.env, t, t, history.Missed, fmt.Sprintf("%s: %s: not injected: %v", r.name(), r.st, err))
			return
		}
		m.window(ctx, r, ev, f, true)
	}()
	return nil
}

// ttls is x TTLs of the run.
func (m *scheduled) ttls(x float64) time.Duration { return time.Duration(x * float64(m.env.TTL)) }

// window injects f, keeps it in force for the step's For (cut short when
// ctx ends; an instant fault has none), heals it and records the window
// with its landing: for a step struck at a client's event on a key,
// landed when another client was granted that key from the event to the
// heal; "" (cannot tell) for a step on the schedule's clock. heal false:
// f heals itself (a slow critical section).
func (m *scheduled) window(ctx context.Context, r *stepRun, ev workload.Event, f fault.Fault, healIt bool) {
	since := m.seen.mark()
	start := m.env.Clock.Now()
	undo := context.WithoutCancel(ctx)
	evidence, err := fault.Inject(undo, f)
	if err != nil {
		// A drawn schedule may aim two steps at one target (a node paused
		// twice): the step is recorded missed, not a failed run. What it
		// may have left half done is healed at the end (healAll).
		recordWindow(m.env, start, m.env.Clock.Now(), history.Missed, fmt.Sprintf("%s: %s: not injected: %v", r.name(), r.st, err))
		return
	}
	if healIt && r.p.Window {
		sleepCtx(ctx, m.ttls(r.st.For))
	}
	var healed string
	if healIt {
		healed, err = fault.Heal(undo, f)
		m.log.fail(err)
	}
	end := m.env.Clock.Now()
	note := fmt.Sprintf("%s: %s: %s", r.name(), r.st, evidence)
	if healed != "" {
		note += "; then " + healed
	}
	var l history.Landing
	if ev.Client >= 0 && ev.Key != "" {
		other := m.seen.has(ev.Client, ev.Key, since, false)
		l = landing(other)
		note += fmt.Sprintf("; struck client %d (hold %d on %s); %s", ev.Client, ev.Hold, ev.Key, grantedNote(other, "fault"))
	}
	recordWindow(m.env, start, end, l, note)
}

// pause stops the event's client for the step's For: its goroutine waits
// here, its other goroutines (renewal) at their next lock event, its
// adapter process with SIGSTOP.
func (m *scheduled) pause(ctx context.Context, r *stepRun, ev workload.Event) {
	f := &fault.ClientPause{Clients: m.paused, Client: ev.Client, Process: ev.Process}
	m.window(ctx, r, ev, f, true)
}

// fault builds the fault of a background step struck at ev: the target
// resolved to nodes and links.
func (m *scheduled) fault(ctx context.Context, r *stepRun, ev workload.Event) (fault.Fault, error) {
	env := m.env
	switch r.st.Fault {
	case "node-kill", "node-restart", "node-pause", "clock-jump":
		i, err := m.node(ctx, r, ev)
		if err != nil {
			return nil, err
		}
		n := env.Cluster.Nodes()[i]
		switch r.st.Fault {
		case "node-kill":
			return &fault.NodeKill{Node: n}, nil
		case "node-restart":
			nr := &fault.NodeRestart{Node: n, KeepsData: onConsensus(env.Info)}
			if env.Links != nil && i < nodeCount(env) {
				nr.Links, nr.Index = env.Links, i
			}
			return nr, nil
		case "node-pause":
			return &fault.NodePause{Node: n, External: env.Cluster.Backend() == cluster.BackendExternal, D: m.ttls(r.st.For)}, nil
		}
		return &fault.ClockJump{Clocks: m.clocks, Node: n, Step: m.ttls(r.st.Size)}, nil
	case "key-loss":
		if ev.Key == "" {
			return nil, errors.New("the event names no key")
		}
		m.mu.Lock()
		m.blocked[ev.Key] = keyBlock{holder: ev.Client, until: env.Clock.Now() + int64(env.TTL/2)}
		m.mu.Unlock()
		return &fault.KeyLoss{Nodes: env.Cluster.Nodes()[:nodeCount(env)], Key: ev.Key}, nil
	case "link-cut":
		return &link.Cut{Links: env.Links, Client: ev.Client, Nodes: indexes(nodeCount(env))}, nil
	case "link-blackhole":
		return &link.Blackhole{Links: env.Links, Client: ev.Client, Nodes: indexes(nodeCount(env))}, nil
	case "link-latency":
		if r.st.Target == schedule.TargetNode {
			return &link.Latency{Links: env.Links, Node: r.st.Node - 1, D: m.ttls(r.st.Size)}, nil
		}
		return &link.ClientLatency{Links: env.Links, Client: ev.Client, Nodes: indexes(nodeCount(env)), D: m.ttls(r.st.Size)}, nil
	}
	return nil, fmt.Errorf("no schedule action for %s", r.st.Fault)
}

// node resolves a node target to a node index: Step.Node; the leader of
// an etcd cluster or ZooKeeper ensemble; the lowest node holding the
// struck client's token on a quorum lock (node 1 when none can be read or
// the client holds no lease yet); node 1 of a single-node lock.
func (m *scheduled) node(ctx context.Context, r *stepRun, ev workload.Event) (int, error) {
	env := m.env
	nodes := env.Cluster.Nodes()
	if r.st.Target == schedule.TargetNode {
		if r.st.Node > len(nodes) {
			return 0, fmt.Errorf("node n%d: the cluster has %d", r.st.Node, len(nodes))
		}
		return r.st.Node - 1, nil
	}
	if onConsensus(env.Info) {
		lctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		leader, err := env.Cluster.Leader(lctx)
		if err != nil {
			return 0, fmt.Errorf("find the leader: %w", err)
		}
		for i, n := range nodes {
			if n == leader {
				return i, nil
			}
		}
		return 0, fmt.Errorf("leader %s is not a member", leader.Name())
	}
	if nodeCount(env) > 1 && ev.Lease != nil && ev.Key != "" {
		for i := range nodeCount(env) {
			if o := keystate.Key(ctx, nodes[i].Name(), nodes[i].Addr(), ev.Key, nodes[i].Security()); o.Holds(ev.Lease.Token) {
				return i, nil
			}
		}
	}
	return 0, nil
}
