package chaos

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/lockbench/lockbench/chaos/fault"
	"github.com/lockbench/lockbench/chaos/fault/link"
	"github.com/lockbench/lockbench/chaos/keystate"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/workload"
)

// replyScenarios are the lost-reply scenarios: a command reaches the
// server and runs, its reply is lost (proxy.LostReply), placed on one
// kind of lock call each.
func replyScenarios() []Scenario {
	return []Scenario{lostReplyScenario(), lostReplyReleaseScenario(), lostReplyExtendScenario(), lostReplyReentrantScenario()}
}

// replyTarget is the lock call a lost-reply scenario aims at.
type replyTarget string

// Targets.
const (
	targetAcquire   replyTarget = "acquire"    // an outermost acquire, of a free key
	targetReentrant replyTarget = "re-acquire" // a nested acquire (reentrant), of a key the client holds
	targetRelease   replyTarget = "release"    // an outermost release, of a key the client holds
	targetExtend    replyTarget = "extend"     // the first renewal of a hold, of a key the client holds
)

// replyStrikes is how many lost replies a run gets, spread over the run
// by triggers.
const replyStrikes = 3

// naReplyLinks is why the lost-reply scenarios do not apply to etcd and
// ZooKeeper locks.
const naReplyLinks = "drops a reply in lockbench's per-link proxy, which sits on Redis links only (RESP); etcd (gRPC) and ZooKeeper links have no proxy, so the reply cannot be dropped there"

// replySetup is the Setup of the lost-reply scenarios: every link through
// a proxy (quorum strategies: QuorumProxiedTTL, quorumProxiedClients).
func replySetup(in impl.Info) Setup { return proxiedSetup(in, partitionMinDuration) }

// lostReplyScenario drops the reply of an outermost acquire of a free key, after
// the server ran it, three times a run: the command took effect (the
// key holds the client's token) while the client sees its connection
// close. A correct lock reports the outcome unknown and the key expires
// by its TTL (an orphan: a liveness figure, not a violation); a lock
// that sets the key and its TTL in two commands (naive: SETNX, then
// PEXPIRE) never sends the second, and the key never expires. Quorum
// strategies lose the reply of every node (their cleanup on a failed
// acquire then meets the orphans). A strike lands when the key was free
// before the call and held at the drop, on every node whose reply was
// lost.
func lostReplyScenario() Scenario {
	return Scenario{Name: "lost-reply", Kind: Network,
		Faults:  []fault.Fault{&link.LostReply{}},
		Summary: "an outermost acquire of a free key reaches the server and runs; its reply is dropped and the connection closed (quorum strategies: on every node), three times a run; the key is read at the drop",
		Applies: redisOnly(naReplyLinks, nil),
		Setup:   replySetup,
		New:     func(env Env) Nemesis { return newLostReplies(env, "lost-reply", targetAcquire) }}
}

// lostReplyReleaseScenario drops the reply of an outermost release of a key the
// client holds, after the server ran it, three times a run: the key is
// gone (or its count down) while the client sees an error.
func lostReplyReleaseScenario() Scenario {
	return Scenario{Name: "lost-reply-release", Kind: Network,
		Faults:  []fault.Fault{&link.LostReply{}},
		Summary: "an outermost release of a key the client holds reaches the server and runs; its reply is dropped and the connection closed (quorum strategies: on every node), three times a run",
		Applies: redisOnly(naReplyLinks, nil),
		Setup:   replySetup,
		New:     func(env Env) Nemesis { return newLostReplies(env, "lost-reply-release", targetRelease) }}
}

// lostReplyExtendScenario drops the reply of the first renewal of a hold (a
// strategy's own renewal at impl.PointRenew, or an extend the workload
// drives), after the server ran it, three times a run: the TTL was
// extended while the client sees an error.
func lostReplyExtendScenario() Scenario {
	return Scenario{Name: "lost-reply-extend", Kind: Network,
		Faults:  []fault.Fault{&link.LostReply{}},
		Summary: "the first renewal of a hold reaches the server and extends the TTL; its reply is dropped and the connection closed (quorum strategies: on every node), three times a run",
		Applies: redisOnly(naReplyLinks, func(in impl.Info) (bool, string) {
			if !in.Claims.Renewal {
				return false, "the strategy does not renew: it makes no extend whose reply could be lost"
			}
			return true, ""
		}),
		Setup: replySetup,
		New:   func(env Env) Nemesis { return newLostReplies(env, "lost-reply-extend", targetExtend) }}
}

// lostReplyReentrantScenario drops the reply of a nested acquire (the holder
// acquires the key it holds again), after the server ran it, three times
// a run: the hold count went up while the client sees an error, so its
// releases leave the count above 0.
func lostReplyReentrantScenario() Scenario {
	return Scenario{Name: "lost-reply-reentrant", Kind: Network,
		Faults:  []fault.Fault{&link.LostReply{}},
		Summary: "a nested acquire by the holder reaches the server and raises the hold count; its reply is dropped and the connection closed, three times a run",
		Applies: redisOnly(naReplyLinks, func(in impl.Info) (bool, string) {
			if !in.Claims.Reentrant {
				return false, "the strategy is not reentrant: no nested acquire"
			}
			return true, ""
		}),
		Setup: func(in impl.Info) Setup {
			s := replySetup(in)
			s.Reentrancy = 2
			return s
		},
		New: func(env Env) Nemesis { return newLostReplies(env, "lost-reply-reentrant", targetReentrant) }}
}

// lostReplies is the nemesis of the lost-reply scenarios: at the first
// call of its target after each trigger whose key is in the state the
// target needs (free for an acquire, held by the client otherwise), it
// reads the key on the client's nodes, arms a link.LostReply on the client's
// links and lets the call go; the strike ends when every armed link
// dropped its reply or the client has moved on (its next event: the call
// returned), and is recorded with the key before the call and at each
// drop.
type lostReplies struct {
	onePerTrigger
	faultLog
	name   string
	target replyTarget

	mu      sync.Mutex
	pending map[int]*replyStrike // client → its strike in flight
	renewed map[int64]bool       // holds whose first renewal passed
	tries   int                  // strikes of the current trigger so far
	// stretched is the hold lost-reply-extend keeps in its critical
	// section until its first renewal was struck (0: none), and
	// stretchEnd is closed when that strike is recorded.
	stretched  int64
	stretchEnd chan struct{}
	// match, when set, narrows the calls struck to those it accepts (a
	// schedule's step tied to another step's hold); nil: every call of
	// the target.
	match func(workload.Event) bool
	// struck, when set, is told each call struck, as the strike starts.
	struck func(workload.Event)
	// once, when set, strikes one call per trigger whatever it did (a
	// schedule's step fires once, and a step tied to it follows that
	// call); otherwise a call that did nothing is followed by the next,
	// up to replyTries.
	once bool
}

// replyTries is how many calls a trigger strikes at most until one
// lands: under contention a struck acquire often finds the key taken by
// another client between the nemesis's read and its command.
const replyTries = 5

// replyStrike is one lost reply in flight.
type replyStrike struct {
	f      *link.LostReply
	ev     workload.Event
	before []keystate.KeyObs
	start  int64
	moved  chan struct{} // closed when the client moved on
	once   sync.Once
}

func newLostReplies(env Env, name string, target replyTarget) *lostReplies {
	return &lostReplies{onePerTrigger: onePerTrigger{env: env, times: triggers(env.Duration, replyStrikes)},
		name: name, target: target, pending: map[int]*replyStrike{}, renewed: map[int64]bool{}}
}

// Run does nothing: the faults act at lock events.
func (r *lostReplies) Run(context.Context) error { return nil }

// Heal ends the strikes in flight, waits for them to be recorded, heals
// every link (healAll) and returns the errors of the run's fault actions.
func (r *lostReplies) Heal(ctx context.Context) error {
	r.mu.Lock()
	for _, s := range r.pending {
		s.moveOn()
	}
	r.mu.Unlock()
	r.bg.Wait()
	return errors.Join(r.err(), healAll(ctx, r.env))
}

func (s *replyStrike) moveOn() { s.once.Do(func() { close(s.moved) }) }

// aims reports whether ev is a call of the target: an outermost acquire,
// a nested acquire, an outermost release, or the first renewal of a hold.
func (r *lostReplies) aims(ev workload.Event) bool {
	switch r.target {
	case targetAcquire:
		return ev.Point == workload.PointBeforeAcquire && ev.Depth <= 1
	case targetReentrant:
		return ev.Point == workload.PointBeforeAcquire && ev.Depth >= 2 && ev.Lease != nil
	case targetRelease:
		return ev.Point == workload.PointBeforeRelease && ev.Depth <= 1 && ev.Lease != nil
	case targetExtend:
		if (ev.Point != workload.PointRenew && ev.Point != workload.PointBeforeExtend) || ev.Hold == 0 || ev.Lease == nil {
			return false
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		first := !r.renewed[ev.Hold]
		r.renewed[ev.Hold] = true
		return first
	}
	return false
}

// movedOn reports whether ev shows that the client's struck call has
// returned: any later event of the client on its own goroutine (a call
// aimed at an acquire or release), or, for a renewal (on the renewal
// goroutine), the hold's next renewal or its release.
func (r *lostReplies) movedOn(ev workload.Event) bool {
	renewal := ev.Point == workload.PointRenew || ev.Point == workload.PointBeforeExtend
	if r.target == targetExtend {
		return renewal || ev.Point == workload.PointBeforeRelease || ev.Point == workload.PointReleased
	}
	return ev.Point != workload.PointRenew
}

// ready reports whether the key, as read on every node before the call,
// is in the state the target needs: free for an acquire, held by the
// client's lease otherwise.
func (r *lostReplies) ready(before []keystate.KeyObs, ev workload.Event) bool {
	for _, o := range before {
		if o.Err != nil {
			return false
		}
		switch r.target {
		case targetAcquire:
			if o.Present() {
				return false
			}
		default:
			if ev.Lease == nil || !o.Holds(ev.Lease.Token) {
				return false
			}
		}
	}
	return len(before) > 0
}

// effect says whether the target's command took effect on a node, from
// the key before the call and at the drop (at), and, where the key alone
// cannot tell, the reply the client lost: an acquire under contention
// finds the key held at the drop whoever set it, so its reply must say it
// set it (link.ReplyDone); a release of the client's own key is seen in the
// key alone (its script's reply, the remaining count, is 0 when done).
func (r *lostReplies) effect(before, at keystate.KeyObs, reply, token string) bool {
	if at.Type == "" {
		return false
	}
	switch r.target {
	case targetAcquire:
		return link.ReplyDone(reply) && !before.Present() && at.Present()
	case targetReentrant:
		return link.ReplyDone(reply) && at.Count(token) == before.Count(token)+1
	case targetRelease:
		return before.Holds(token) && !replyRefused(reply) && (!at.Holds(token) || at.Count(token) < before.Count(token))
	case targetExtend:
		return link.ReplyDone(reply) && at.Holds(token) && at.PTTL > before.PTTL
	}
	return false
}

// replyRefused reports whether a release's reply says it found nothing
// to release: an error, a null, a negative integer (reentrant's "not
// held"). A 0 is ambiguous (token-lua's "not held", reentrant's "0 levels
// left, deleted"): the key before and at the drop decide then.
func replyRefused(reply string) bool {
	return reply == "" || reply[0] == '-' || reply[0] == '_' || strings.HasPrefix(reply, ":-") || reply == "$-1" || reply == "*-1"
}

// effectText says what the command did, for the note.
func (r *lostReplies) effectText() string {
	switch r.target {
	case targetAcquire:
		return "the acquire took effect (the key was free before)"
	case targetReentrant:
		return "the hold count went up"
	case targetRelease:
		return "the release took effect"
	case targetExtend:
		return "the TTL was extended"
	}
	return ""
}

// At ends a strike in flight when its client moved on, and strikes at the
// first call of the target after each trigger whose key is ready.
func (r *lostReplies) At(ctx context.Context, ev workload.Event) error {
	r.mu.Lock()
	s := r.pending[ev.Client]
	if s != nil && r.movedOn(ev) {
		delete(r.pending, ev.Client)
	} else {
		s = nil
	}
	r.mu.Unlock()
	if s != nil {
		// The struck call has returned: disarm before the client's next
		// command can go up, so no other call loses its reply.
		if _, err := fault.Heal(ctx, s.f); err != nil {
			r.fail(fmt.Errorf("%s: %w", r.name, err))
		}
		s.moveOn()
	}
	if r.target == targetExtend && ev.Point == workload.PointInCS {
		if r.match == nil || r.match(ev) {
			r.stretch(ctx, ev)
		}
		return nil
	}
	if !r.aims(ev) || (r.match != nil && !r.match(ev)) || !r.take() {
		return nil
	}
	env := r.env
	nodes := indexes(nodeCount(env))
	all := env.Cluster.Nodes()
	f := &link.LostReply{Links: env.Links, Client: ev.Client, Nodes: nodes, Key: ev.Key, Sec: env.Cluster.Security()}
	for _, i := range nodes {
		f.Names = append(f.Names, all[i].Name())
		f.Addrs = append(f.Addrs, all[i].Addr())
	}
	before := make([]keystate.KeyObs, len(nodes))
	for i := range nodes {
		before[i] = keystate.Key(ctx, f.Names[i], f.Addrs[i], ev.Key, f.Sec)
	}
	if !r.ready(before, ev) {
		r.untake() // the key is not in the state the target needs: wait for another call
		return nil
	}
	start := env.Clock.Now()
	if _, err := fault.Inject(ctx, f); err != nil {
		r.fail(fmt.Errorf("%s: %w", r.name, err))
		r.done()
		return nil
	}
	s = &replyStrike{f: f, ev: ev, before: before, start: start, moved: make(chan struct{})}
	r.mu.Lock()
	r.pending[ev.Client] = s
	r.mu.Unlock()
	if r.struck != nil {
		r.struck(ev)
	}
	r.bg.Add(1)
	go func() {
		defer r.bg.Done()
		r.finish(context.WithoutCancel(ctx), s) // ends the trigger
	}()
	return nil
}

// stretch keeps a holder in its critical section, when a trigger of
// lost-reply-extend is due and no other hold is kept, until its first
// renewal (TTL/3 after the grant, for watchdog and redislock) was struck
// and recorded, at most TTL/2: critical sections far shorter than the
// TTL end before any renewal, and a renewal is the lock state this
// target waits for. The renewal keeps the lease meanwhile.
func (r *lostReplies) stretch(ctx context.Context, ev workload.Event) {
	if ev.Hold == 0 || !r.due() {
		return
	}
	r.mu.Lock()
	if r.stretched != 0 || r.renewed[ev.Hold] {
		r.mu.Unlock()
		return
	}
	end := make(chan struct{})
	r.stretched, r.stretchEnd = ev.Hold, end
	r.mu.Unlock()
	t := time.NewTimer(r.env.TTL / 2)
	defer t.Stop()
	select {
	case <-end:
	case <-t.C:
	case <-ctx.Done():
	}
	r.mu.Lock()
	r.stretched, r.stretchEnd = 0, nil
	r.mu.Unlock()
}

// unstretch ends the stretch of hold, if it is the one kept.
func (r *lostReplies) unstretch(hold int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stretched == hold && r.stretchEnd != nil {
		close(r.stretchEnd)
		r.stretchEnd = nil
	}
}

// replyBound bounds a strike in flight that neither fired nor saw its
// client move on (a client that stopped): past it the links are disarmed.
func replyBound(ttl time.Duration) time.Duration { return max(4*ttl, 2*time.Second) }

// finish waits until every armed link dropped its reply or the client
// moved on, disarms the links and records the window; then it ends the
// trigger, or gives it back when the strike did not land and the trigger
// has tries left.
func (r *lostReplies) finish(ctx context.Context, s *replyStrike) {
	wctx, cancel := context.WithTimeout(ctx, replyBound(r.env.TTL))
	s.f.Wait(wctx, s.moved)
	cancel()
	end := r.env.Clock.Now()
	dropped, at, cmds, replies := s.f.Drops()
	if _, err := fault.Heal(ctx, s.f); err != nil {
		r.fail(fmt.Errorf("%s: %w", r.name, err))
	}
	token := ""
	if s.ev.Lease != nil {
		token = s.ev.Lease.Token
	}
	var lines []string
	lost, took := 0, 0
	for i := range dropped {
		line := fmt.Sprintf("%s: before %s", s.f.Names[i], s.before[i])
		if dropped[i] {
			lost++
			ok := r.effect(s.before[i], at[i], replies[i], token)
			if ok {
				took++
			}
			line += fmt.Sprintf("; %s went up and ran, its reply %q was dropped and the connection closed; at the drop %s", cmds[i], replies[i], at[i])
			if ok {
				line += ": " + r.effectText()
			} else {
				line += ": it did nothing (another client was first, or the key had changed)"
			}
		} else {
			line += "; no reply dropped (no command went up on this link)"
		}
		lines = append(lines, line)
	}
	landed := lost > 0 && took == lost
	r.mu.Lock()
	r.tries++
	again := !landed && r.tries < replyTries && !r.once
	if !again {
		r.tries = 0
	}
	r.mu.Unlock()
	if again {
		// The next call of the target is struck again for this trigger:
		// a struck call that did nothing (contention) tells nothing.
		defer r.untake()
	} else {
		defer r.done()
	}
	what := fmt.Sprintf("client %d's %s of %s", s.ev.Client, r.target, s.ev.Key)
	if s.ev.Hold != 0 {
		what += fmt.Sprintf(" (hold %d)", s.ev.Hold)
	}
	recordWindow(r.env, s.start, end, landing(landed), fmt.Sprintf("%s: %s: %s", r.name, what, strings.Join(lines, "; ")))
	r.unstretch(s.ev.Hold)
}

// due reports whether a trigger is due and free (take would hand it out).
func (o *onePerTrigger) due() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return !o.busy && o.next < len(o.times) && o.env.due(o.times[o.next])
}

// untake gives back the trigger take handed out, for a call that turned
// out not to be the one aimed at.
func (o *onePerTrigger) untake() {
	o.mu.Lock()
	o.next--
	o.busy = false
	o.mu.Unlock()
}
