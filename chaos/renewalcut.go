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

// renewalCutScenarios are the scenarios that cut a renewed hold's links
// between two renewals.
func renewalCutScenarios() []Scenario { return []Scenario{renewalCutScenario()} }

// Timings of renewal-cut, in TTLs.
const (
	// renewalCutWaitTTL bounds the wait for the held lease's next renewal
	// (watchdog and redislock renew every TTL/3).
	renewalCutWaitTTL = 0.6
	// renewalCutSettleTTL is how long after the renewal's event the cut
	// starts: time for that renewal to answer.
	renewalCutSettleTTL = 0.05
	// renewalCutTTL is how long the links stay cut: past the next two
	// renewals and past the TTL the last successful one set, so the key
	// expires during the cut and another client can take it.
	renewalCutTTL = 1.2
)

// renewalCutScenario cuts a renewed holder off from every Redis node right after
// one of its renewals, twice a run: at its critical section the holder is
// kept until its lease's next renewal answered (waitRenewal), then its
// links refuse
// connects and drop open connections for 1.2×TTL (its next renewals fail,
// and the key, renewed just before, expires during the cut), then they
// come back; the holder is kept until another client was granted the key
// (at most a TTL more) and released it (at most TTL/2), then writes. A
// lock that heeds its failed renewals (Lost) stops first; one that
// swallows them writes over the next owner. Lands when the renewal was
// seen, the key held the holder's token right before the cut, and
// another client was granted the key after it.
func renewalCutScenario() Scenario {
	return Scenario{Name: "renewal-cut", Kind: Network,
		Faults: []fault.Fault{&link.Cut{}},
		Applies: redisOnly(naProxied, func(in impl.Info) (bool, string) {
			if !in.Claims.Renewal {
				return false, "the strategy does not renew: there is no renewal to cut between (partition-holder cuts a hold that is not renewed)"
			}
			return true, ""
		}),
		Summary: "at 20% and 50% of the run a renewed holder is kept in its critical section until its next renewal; TTL/20 after it the holder's links to every node are cut for 1.2×TTL (its next renewals fail, the key expires), then come back; the holder is kept until another client was granted (≤ TTL) and released (≤ TTL/2), then writes (quorum strategies: TTL ≥ 200 ms, 4 clients)",
		Setup:   func(in impl.Info) Setup { return proxiedSetup(in, partitionMinDuration) },
		New: func(env Env) Nemesis {
			times := []int64{int64(float64(env.Duration) * 0.2), int64(float64(env.Duration) * 0.5)}
			return &renewalCut{onePerTrigger: onePerTrigger{env: env, times: times}, seen: newCycles()}
		}}
}

// renewalCut is the nemesis of RenewalCut.
type renewalCut struct {
	onePerTrigger
	faultLog
	seen *cycles

	mu      sync.Mutex
	hold    int64         // the struck hold (0: none)
	renewed chan struct{} // closed at its next renewal event
}

// Run does nothing: the faults act at lock events.
func (r *renewalCut) Run(context.Context) error { return nil }

// Heal heals every link and returns the errors of the run's cuts.
func (r *renewalCut) Heal(ctx context.Context) error {
	return errors.Join(r.err(), healAll(ctx, r.env))
}

// At notes the struck hold's renewal, and strikes a hold at its
// PointInCS after each trigger.
func (r *renewalCut) At(ctx context.Context, ev workload.Event) error {
	r.seen.see(ev)
	if ev.Point == workload.PointRenew || ev.Point == workload.PointBeforeExtend {
		r.mu.Lock()
		if r.hold != 0 && ev.Hold == r.hold && r.renewed != nil {
			close(r.renewed)
			r.renewed = nil
		}
		r.mu.Unlock()
		return nil
	}
	if ev.Point != workload.PointInCS || ev.Hold == 0 || ev.Lease == nil || !r.take() {
		return nil
	}
	defer r.done()
	env := r.env
	renewed := make(chan struct{})
	r.mu.Lock()
	r.hold, r.renewed = ev.Hold, renewed
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		r.hold, r.renewed = 0, nil
		r.mu.Unlock()
	}()
	start := env.Clock.Now()
	seen, how := r.waitRenewal(ctx, ev, renewed)
	if !seen {
		recordWindow(env, start, env.Clock.Now(), landing(false), fmt.Sprintf("renewal-cut: client %d (hold %d on %s): no renewal within %.1f×TTL (%s): not cut",
			ev.Client, ev.Hold, ev.Key, renewalCutWaitTTL, how))
		return nil
	}
	sleepCtx(ctx, time.Duration(renewalCutSettleTTL*float64(env.TTL)))
	all := indexes(nodeCount(env))
	nodes := env.Cluster.Nodes()
	var before []string
	held := true
	for _, i := range all {
		o := keystate.Key(ctx, nodes[i].Name(), nodes[i].Addr(), ev.Key, nodes[i].Security())
		held = held && o.Holds(ev.Lease.Token)
		before = append(before, nodes[i].Name()+": "+o.String())
	}
	since := r.seen.mark()
	cut := &link.Cut{Links: env.Links, Client: ev.Client, Nodes: all}
	cutAt := env.Clock.Now()
	evidence, err := fault.Inject(ctx, cut)
	r.fail(err)
	d := time.Duration(renewalCutTTL * float64(env.TTL))
	sleepCtx(ctx, d)
	_, err = fault.Heal(ctx, cut)
	r.fail(err)
	extra := ""
	other := r.seen.has(ev.Client, ev.Key, since, false)
	if !other {
		t := env.Clock.Now()
		other = r.seen.wait(ctx, ev.Client, ev.Key, since, false, env.TTL)
		extra = fmt.Sprintf("; then %.1fms more until another grant (granted: %v)", float64(env.Clock.Now()-t)/1e6, other)
	}
	if other && !r.seen.has(ev.Client, ev.Key, since, true) {
		t := env.Clock.Now()
		done := r.seen.wait(ctx, ev.Client, ev.Key, since, true, env.TTL/2)
		extra += fmt.Sprintf("; then %.1fms more until that holder released (released: %v)", float64(env.Clock.Now()-t)/1e6, done)
	}
	recordWindow(env, start, env.Clock.Now(), landing(seen && held && other && err == nil),
		fmt.Sprintf("renewal-cut: client %d (hold %d on %s) kept until its renewal (%s, %.1fms); right before the cut %s; cut off from %s for %v, then restored (%s)%s",
			ev.Client, ev.Hold, ev.Key, how, float64(cutAt-start)/1e6, strings.Join(before, ", "), nodeNames(env, all), d, evidence, extra))
	return nil
}

// waitRenewal waits, at most renewalCutWaitTTL×TTL, until the held
// lease's next renewal answered: its renew event (a renewal lockbench
// sees) followed by renewalCutSettleTTL×TTL, or, first, the key's PTTL
// on the lock's first node read higher than at the read before while it
// holds the lease's token (a renewal seen on the server: an adapter's own
// renewal sends no event). It returns whether one came and how it was
// seen.
func (r *renewalCut) waitRenewal(ctx context.Context, ev workload.Event, renewed <-chan struct{}) (bool, string) {
	env := r.env
	node := env.Cluster.Nodes()[0]
	deadline := time.Now().Add(time.Duration(renewalCutWaitTTL * float64(env.TTL)))
	last := keystate.Key(ctx, node.Name(), node.Addr(), ev.Key, node.Security())
	for time.Now().Before(deadline) && ctx.Err() == nil {
		select {
		case <-renewed:
			sleepCtx(ctx, time.Duration(renewalCutSettleTTL*float64(env.TTL)))
			return true, "its renew event, then TTL/20"
		default:
		}
		sleepCtx(ctx, 2*time.Millisecond)
		o := keystate.Key(ctx, node.Name(), node.Addr(), ev.Key, node.Security())
		if o.Holds(ev.Lease.Token) && last.Holds(ev.Lease.Token) && o.PTTL > last.PTTL {
			return true, fmt.Sprintf("seen on %s: PTTL %v, then %v", node.Name(), last.PTTL.Round(time.Millisecond), o.PTTL.Round(time.Millisecond))
		}
		if !o.Holds(ev.Lease.Token) && o.Err == nil {
			return false, fmt.Sprintf("the key no longer holds the lease on %s: %s", node.Name(), o)
		}
		last = o
	}
	return false, "no renew event, and the key's PTTL never went up"
}
