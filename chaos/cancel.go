package chaos

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/lockbench/lockbench/chaos/fault"
	"github.com/lockbench/lockbench/chaos/keystate"
	"github.com/lockbench/lockbench/cluster"
	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/workload"
)

// cancelScenarios are the scenarios that cancel a lock call in flight.
func cancelScenarios() []Scenario { return []Scenario{cancelScenario()} }

// Timings of cancel, in TTLs.
const (
	// cancelSendTTL is how long after the struck call starts it is
	// cancelled: time for its first command to leave the client (an
	// adapter: for the request to cross its pipe) and queue in the stopped
	// node.
	cancelSendTTL = 0.05
	// cancelReactTTL bounds how long the nodes stay stopped after the
	// cancel, for the client to act on it: they are resumed as soon as the
	// call returns, or after this.
	cancelReactTTL = 0.05
	// cancelSettleTTL is how long the key's events are collected after the
	// resume and the call's return (the cancelled call's own clean-up).
	cancelSettleTTL = 0.1
	// cancelStrikes is how many acquires a run strikes; cancelTries how
	// many struck acquires a trigger spends at most until one lands.
	cancelStrikes = 3
	cancelTries   = 5
)

// cancelShownEvents is how many of a node's key events after the resume
// a note lists (the struck command's, its clean-up's, then the client's
// next holds).
const cancelShownEvents = 4

// naCancel is why cancel does not apply to etcd and ZooKeeper locks.
const naCancel = "stops the lock's Redis nodes so the cancelled call's command queues, and reads its effect in Redis keyspace notifications; an etcd or ZooKeeper call has no such queue lockbench can hold"

// cancelScenario cancels an outermost acquire of a free key in flight, three
// times a run: the lock's nodes are SIGSTOPped, the acquire goes out (its
// SET queues in the stopped nodes), TTL/20 later it is cancelled (an
// adapter gets a cancel request, an in-process strategy's ctx is
// cancelled), and the nodes are resumed once the call returned or TTL/20
// after the cancel, so the queued SET still runs. Other clients'
// acquires of the key wait meanwhile. A lock that answers "not acquired"
// for a cancelled call without deleting what its command set leaves an
// orphan: the key holds the token of an acquire that said fail (the
// orphan check). A lock that does not abandon a written command (go-redis
// does not watch a call's context once it wrote it) returns the real
// outcome once the nodes resume. A strike lands when the key was free
// before and the key's events after the resume show the struck command
// set it, on every node; one that did not (the command never left, or
// another client's came first) is missed and the next acquire is struck,
// up to 5 times a trigger.
func cancelScenario() Scenario {
	return Scenario{Name: "cancel", Kind: Client,
		Faults:  []fault.Fault{&fault.CancelCall{}},
		Summary: "an outermost acquire of a free key is cancelled in flight (adapters: a cancel request), its SET queued in the lock's SIGSTOPped nodes, which resume once it returned (≤ TTL/20 after the cancel) so the SET still runs; others' acquires of the key wait; three times a run",
		Applies: redisOnly(naCancel, nil),
		New: func(env Env) Nemesis {
			return &cancels{onePerTrigger: onePerTrigger{env: env, times: triggers(env.Duration, cancelStrikes)},
				pending: map[int]*cancelStrike{}}
		}}
}

// cancels is the nemesis of Cancel.
type cancels struct {
	onePerTrigger
	faultLog

	mu      sync.Mutex
	pending map[int]*cancelStrike // client → its struck acquire in flight
	block   *cancelStrike         // holds back the other clients' acquires of its key
	tries   int                   // strikes of the current trigger so far

	// A schedule's cancel step plays the scenario's strike through these
	// (zero in the scenario): name heads each window's note ("cancel"
	// when empty), match narrows the calls struck (a step tied to another
	// step's hold), and struck is told each call struck.
	name   string
	match  func(workload.Event) bool
	struck func(workload.Event) // once, when set, strikes one call per trigger whatever it did (a
	// schedule's step fires once; a step tied to it follows that call).
	once bool
}

// label heads a window's note.
func (c *cancels) label() string {
	if c.name != "" {
		return c.name
	}
	return "cancel"
}

// cancelStrike is one struck acquire.
type cancelStrike struct {
	f      *fault.CancelCall
	ev     workload.Event
	before []keystate.KeyObs
	start  int64 // history clock at the strike
	// returned is closed at the client's next event (the call returned);
	// back is that event.
	returned chan struct{}
	back     workload.Event
	backAt   time.Time
	once     sync.Once
	// end is closed when the strike is over: the others' acquires go on.
	end     chan struct{}
	endOnce sync.Once
}

func (st *cancelStrike) moveOn(ev workload.Event) {
	st.once.Do(func() {
		st.back, st.backAt = ev, time.Now()
		close(st.returned)
	})
}

func (st *cancelStrike) finish() { st.endOnce.Do(func() { close(st.end) }) }

// Run does nothing: the faults act at lock events.
func (c *cancels) Run(context.Context) error { return nil }

// Heal ends the strikes in flight, waits for them to be recorded, heals
// every node and returns the errors of the run's fault actions.
func (c *cancels) Heal(ctx context.Context) error {
	c.mu.Lock()
	for _, st := range c.pending {
		st.moveOn(workload.Event{})
	}
	c.mu.Unlock()
	c.bg.Wait()
	return errors.Join(c.err(), healAll(ctx, c.env))
}

// At ends a struck acquire at its client's next event, holds the other
// clients' acquires of a struck key back, and strikes the first outermost
// acquire of a free key after each trigger.
func (c *cancels) At(ctx context.Context, ev workload.Event) error {
	switch ev.Point {
	case workload.PointRenew, workload.PointBeforeExtend, workload.PointAfterSetNX:
		return nil // the renewal goroutine, or inside the struck call
	}
	c.mu.Lock()
	st := c.pending[ev.Client]
	delete(c.pending, ev.Client)
	b := c.block
	c.mu.Unlock()
	if st != nil {
		st.moveOn(ev)
	}
	if ev.Point != workload.PointBeforeAcquire || ev.Depth > 1 {
		return nil
	}
	if b != nil && b.ev.Client != ev.Client && b.ev.Key == ev.Key {
		select {
		case <-b.end:
		case <-ctx.Done():
		}
	}
	if ev.Call == nil || (c.match != nil && !c.match(ev)) || !c.take() {
		return nil
	}
	env := c.env
	nodes := env.Cluster.Nodes()[:nodeCount(env)]
	f := &fault.CancelCall{Nodes: nodes, Key: ev.Key, External: env.Cluster.Backend() == cluster.BackendExternal,
		Security: env.Cluster.Security()}
	st = &cancelStrike{f: f, ev: ev, returned: make(chan struct{}), end: make(chan struct{})}
	c.mu.Lock()
	c.block = st
	c.mu.Unlock()
	before, free := keyFree(ctx, nodes, ev.Key, env.TTL)
	if !free {
		c.unblock(st)
		c.untake() // the key stayed held (or unreadable): try another call
		return nil
	}
	st.before, st.start = before, env.Clock.Now()
	if _, err := fault.Inject(ctx, f); err != nil {
		c.unblock(st)
		if errors.Is(err, keystate.ErrWatch) {
			// Nothing was stopped: a missed strike, not a failed run.
			recordWindow(env, st.start, env.Clock.Now(), history.Missed, fmt.Sprintf("%s: client %d's acquire of %s not struck: %v", c.label(), ev.Client, ev.Key, err))
			c.again(false)
			return nil
		}
		c.fail(fmt.Errorf("%s: %w", c.label(), err))
		c.done()
		return nil
	}
	f.Call = ev.Call.Cancellable()
	c.mu.Lock()
	c.pending[ev.Client] = st
	c.mu.Unlock()
	if c.struck != nil {
		c.struck(ev)
	}
	c.bg.Add(1)
	go func() {
		defer c.bg.Done()
		c.strike(context.WithoutCancel(ctx), st)
	}()
	return nil
}

// keyFree reads key on every node until it is absent on all, at most
// max, and returns the last reads and whether the key was free.
func keyFree(ctx context.Context, nodes []*cluster.Node, key string, max time.Duration) ([]keystate.KeyObs, bool) {
	deadline := time.Now().Add(max)
	for {
		obs := make([]keystate.KeyObs, len(nodes))
		free := true
		for i, n := range nodes {
			obs[i] = keystate.Key(ctx, n.Name(), n.Addr(), key, n.Security())
			free = free && obs[i].Err == nil && !obs[i].Present()
		}
		if free {
			return obs, true
		}
		if !time.Now().Before(deadline) || ctx.Err() != nil {
			return obs, false
		}
		sleepCtx(ctx, time.Millisecond)
	}
}

// unblock lets the other clients' acquires held back for st go on.
func (c *cancels) unblock(st *cancelStrike) {
	c.mu.Lock()
	if c.block == st {
		c.block = nil
	}
	c.mu.Unlock()
	st.finish()
}

// strike plays one struck acquire: it cancels the call cancelSendTTL
// after it started, resumes the nodes once it returned or cancelReactTTL
// after the cancel, waits for the call to return and its clean-up to
// settle, and records the strike.
func (c *cancels) strike(ctx context.Context, st *cancelStrike) {
	ttl := c.env.TTL
	t0 := time.Now()
	sleepCtx(ctx, time.Duration(cancelSendTTL*float64(ttl)))
	early := false
	select {
	case <-st.returned:
		early = true // it returned before the cancel (an error at once)
	default:
	}
	st.f.Cancel()
	cancelAt := time.Now()
	react := time.NewTimer(time.Duration(cancelReactTTL * float64(ttl)))
	select {
	case <-st.returned:
	case <-react.C:
	case <-ctx.Done():
	}
	react.Stop()
	resumeAt := time.Now() // the SIGCONTs go out now
	resumed, err := fault.Heal(ctx, st.f)
	c.fail(err)
	bound := time.NewTimer(replyBound(ttl))
	select {
	case <-st.returned:
	case <-bound.C:
	case <-ctx.Done():
	}
	bound.Stop()
	sleepCtx(ctx, time.Duration(cancelSettleTTL*float64(ttl)))
	events := st.f.AfterResume()
	st.f.Close()
	c.unblock(st)

	names := make([]string, len(st.f.Nodes))
	for i, n := range st.f.Nodes {
		names[i] = n.Name()
	}
	var lines []string
	took := 0
	for i, evs := range events {
		set := len(evs) > 0 && keystate.TakesKey(evs[0])
		if set {
			took++
		}
		seen := "none"
		switch {
		case len(evs) > cancelShownEvents:
			seen = fmt.Sprintf("%s, … (%d in all)", strings.Join(evs[:cancelShownEvents], ", "), len(evs))
		case len(evs) > 0:
			seen = strings.Join(evs, ", ")
		}
		line := fmt.Sprintf("%s: before %s; key events after the resume: %s", names[i], st.before[i], seen)
		if set {
			line += " (the struck command ran after the cancel)"
		}
		lines = append(lines, line)
	}
	outcome := "had not returned by the end of the strike"
	select {
	case <-st.returned:
		switch {
		case st.back.Point == workload.PointAcquired && st.back.Lease != nil:
			outcome = "returned granted with token " + st.back.Lease.Token
		case st.back.Point == "":
			outcome = "had not returned when the run ended"
		default:
			outcome = "returned without a grant"
		}
		if st.backAt.Before(resumeAt) {
			outcome += fmt.Sprintf(" %.1fms after the cancel, before the resume", float64(st.backAt.Sub(cancelAt))/1e6)
		} else {
			outcome += fmt.Sprintf(" %.1fms after the resume", float64(st.backAt.Sub(resumeAt))/1e6)
		}
	default:
	}
	landed := !early && took == len(events) && len(events) > 0
	if early {
		outcome = "returned before the cancel (" + outcome + ")"
	}
	note := fmt.Sprintf("%s: client %d's acquire of %s: nodes stopped, the call cancelled %.1fms after it started, nodes resumed %.1fms after the cancel (%s); the call %s; %s",
		c.label(), st.ev.Client, st.ev.Key, float64(cancelAt.Sub(t0))/1e6, float64(resumeAt.Sub(cancelAt))/1e6, resumed, outcome, strings.Join(lines, "; "))
	recordWindow(c.env, st.start, c.env.Clock.Now(), landing(landed), note)
	c.mu.Lock()
	if c.pending[st.ev.Client] == st {
		delete(c.pending, st.ev.Client)
	}
	c.mu.Unlock()
	c.again(landed)
}

// again ends the trigger of a strike, or gives it back when the strike
// did not land and the trigger has tries left.
func (c *cancels) again(landed bool) {
	c.mu.Lock()
	c.tries++
	again := !landed && c.tries < cancelTries && !c.once
	if !again {
		c.tries = 0
	}
	c.mu.Unlock()
	if again {
		c.untake()
	} else {
		c.done()
	}
}
