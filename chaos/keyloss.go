package chaos

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/lockbench/lockbench/chaos/fault"
	"github.com/lockbench/lockbench/cluster/security"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/workload"
	"github.com/redis/go-redis/v9"
)

// heldKeyLoss is the nemesis of HeldKeyLoss: at the trigger's first
// PointInCS it deletes the holder's key on every node, keeps the other
// clients' acquires of that key waiting for TTL/2 (so the holder's next
// renewal, within TTL/3, finds the key missing rather than retaken), then
// lets them in and keeps the holder in its critical section until another
// client has been granted the key (at most 2×TTL) and TTL/10 more, so the
// new owner writes first, before its write.
type heldKeyLoss struct {
	onePerTrigger
	seen *cycles

	mu         sync.Mutex
	key        string // the struck key while others are held back
	holder     int
	blockUntil int64 // ns since run start
}

// keyLosses is how many times a run of held-key-loss takes a key: each
// strike gives a lock that trusts a missing key one chance in three or so
// to be saved by a renewal that sees the next owner's token first, so
// six strikes make the run's verdict stable.
const keyLosses = 6

// heldKeyLossScenario takes a held key away under its holder, six times a run:
// the key is deleted on every node (as an eviction under maxmemory or an
// operator's DEL would); the other clients' acquires of it wait TTL/2, so
// the holder's renewal (every TTL/3) finds it missing; then the holder
// runs on until another client is granted the key (at most 2×TTL) and
// TTL/10 more before its write. A lock that checks its renewal's answer notices (lost) and
// stops; one that trusts a missing key, or never renews, writes while
// another client holds the lock. It lands when another client is granted
// the key meanwhile.
func heldKeyLossScenario() Scenario {
	return Scenario{Name: "held-key-loss", Kind: Process,
		Faults:  []fault.Fault{&fault.KeyLoss{}},
		Summary: "at a holder's read its key is deleted on every node (an eviction, an operator's DEL); others' acquires of it wait TTL/2 (the holder's renewal finds it missing), then the holder runs on until another client is granted it (at most 2×TTL) and TTL/10 more and writes, six times a run",
		Applies: redisOnly("deletes a Redis key under its holder; an etcd or ZooKeeper lock is a session the server ends (waiter and leader faults cover it)", nil),
		New: func(env Env) Nemesis {
			return &heldKeyLoss{onePerTrigger: onePerTrigger{env: env, times: triggers(env.Duration, keyLosses)}, seen: newCycles(), holder: -1}
		}}
}

// At holds other clients back from the struck key, and takes the key of
// the trigger's first holder in its critical section.
func (h *heldKeyLoss) At(ctx context.Context, ev workload.Event) error {
	h.seen.see(ev)
	if ev.Point == workload.PointBeforeAcquire {
		h.mu.Lock()
		key, holder, until := h.key, h.holder, h.blockUntil
		h.mu.Unlock()
		if key == ev.Key && ev.Client != holder {
			sleepUntil(ctx, h.env, until)
		}
		return nil
	}
	if ev.Point != workload.PointInCS || !h.take() {
		return nil
	}
	defer h.done()
	since := h.seen.mark()
	start := h.env.Clock.Now()
	// The hold-back ends TTL/2 from now in schedule time (sleepUntil counts
	// from the readiness barrier, not from the run clock's zero: a
	// deadline in run-clock time would hold everyone back longer by the
	// clients' start-up, past the end of the run on a busy machine).
	sched, _ := h.env.since()
	h.mu.Lock()
	h.key, h.holder, h.blockUntil = ev.Key, ev.Client, sched+int64(h.env.TTL/2)
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		h.key, h.holder = "", -1
		h.mu.Unlock()
	}()
	nodes := h.env.Cluster.Nodes()[:nodeCount(h.env)]
	evidence, err := fault.Inject(ctx, &fault.KeyLoss{Nodes: nodes, Key: ev.Key})
	if err != nil {
		recordWindow(h.env, start, h.env.Clock.Now(), "", fmt.Sprintf("held-key-loss: client %d (hold %d on %s): %v", ev.Client, ev.Hold, ev.Key, err))
		return nil
	}
	sleepUntil(ctx, h.env, sched+int64(h.env.TTL/2))
	other := h.seen.wait(ctx, ev.Client, ev.Key, since, false, 2*h.env.TTL-h.env.TTL/2)
	if other {
		sleepCtx(ctx, h.env.TTL/10) // the new owner's critical section (TTL/20 by default) writes first
	}
	ran := time.Duration(h.env.Clock.Now() - start).Round(time.Millisecond)
	recordWindow(h.env, start, h.env.Clock.Now(), landing(other), fmt.Sprintf("held-key-loss: client %d (hold %d on %s): %s; others' acquires of it held back %v; the holder ran on %v before its write; %s",
		ev.Client, ev.Hold, ev.Key, evidence, h.env.TTL/2, ran, grantedNote(other, "fault")))
	return nil
}

// heldKeyRetaken is the nemesis of HeldKeyRetaken: at the trigger's first
// PointInCS it waits for the holder's next renewal (the key's PTTL going
// back up on the lock's first node; TTL/2 at most), deletes the key on
// every node and lets the other clients in at once; the first other
// client in its critical section on the key (the new owner) is kept there
// TTL/2, and the holder until then and TTL/10 more, so the new owner
// writes first.
type heldKeyRetaken struct {
	onePerTrigger
	seen *cycles

	mu        sync.Mutex
	key       string    // the struck key, "" between strikes
	holder    int       // the struck client
	since     int64     // the grant mark when the key was deleted (-1: not yet)
	owner     int       // the new owner kept in its critical section (-1: none yet)
	keepUntil time.Time // until when the new owner is kept (zero: not yet granted)
}

// heldKeyRetakenScenario takes a renewed hold's key away and lets another client
// take it between two of the holder's renewals, six times a run: right
// after a renewal (the key's PTTL back up) the key is deleted on every
// node and the other clients' acquires go on; the first other client
// granted it is kept in its critical section TTL/2, so the holder's next
// renewal (a lock that renews every TTL/2 or more often) finds the key
// another owner's; then the new owner writes, and the holder TTL/10 later.
// A lock whose renewal checks the key's owner says lost and the holder
// stops; one whose renewal extends whatever holds the key (PEXPIRE without
// a token check) renews the new owner's lock as its own, and the holder
// writes while another client holds the lock. It lands when another
// client is granted the key meanwhile.
func heldKeyRetakenScenario() Scenario {
	return Scenario{Name: "held-key-retaken", Kind: Process,
		Faults:  []fault.Fault{&fault.KeyLoss{}},
		Summary: "during a renewed hold, right after a renewal (the key's PTTL back up; TTL/2 at most) the key is deleted on every node and the others may take it at once; the new owner is kept in its critical section TTL/2 (past the holder's next renewal), then writes, and the holder TTL/10 later, six times a run",
		Applies: redisOnly("deletes a Redis key under its holder; an etcd or ZooKeeper lock is a session the server ends (waiter and leader faults cover it)", func(in impl.Info) (bool, string) {
			if !in.Claims.Renewal {
				return false, "strikes between two renewals of a hold (the holder is kept past its next renewal, longer than a lease nothing renews); held-key-loss takes the key of a lock that does not renew"
			}
			return true, ""
		}),
		New: func(env Env) Nemesis {
			return &heldKeyRetaken{onePerTrigger: onePerTrigger{env: env, times: triggers(env.Duration, keyLosses)}, seen: newCycles(), holder: -1, since: -1, owner: -1}
		}}
}

// At keeps the new owner of the struck key in its critical section, and
// strikes the trigger's first holder in its critical section.
func (h *heldKeyRetaken) At(ctx context.Context, ev workload.Event) error {
	h.seen.see(ev)
	if ev.Point != workload.PointInCS {
		return nil
	}
	if h.keepNewOwner(ctx, ev) || !h.take() {
		return nil
	}
	defer h.done()
	h.strike(ctx, ev)
	return nil
}

// keepNewOwner keeps ev's client in its critical section until keepUntil
// when it is the first other client in one on the struck key since the
// key was deleted; it reports whether ev was on the struck key.
func (h *heldKeyRetaken) keepNewOwner(ctx context.Context, ev workload.Event) bool {
	h.mu.Lock()
	if h.key == "" || ev.Key != h.key || ev.Client == h.holder || h.since < 0 || !h.seen.has(h.holder, h.key, h.since, false) {
		h.mu.Unlock()
		return false
	}
	if h.owner < 0 {
		h.owner = ev.Client
		if h.keepUntil.IsZero() {
			h.keepUntil = time.Now().Add(h.env.TTL / 2)
		}
	}
	owner, until := h.owner, h.keepUntil
	h.mu.Unlock()
	if owner == ev.Client {
		sleepCtx(ctx, time.Until(until))
	}
	return true
}

// strike runs one strike on the holder of ev and records its window.
func (h *heldKeyRetaken) strike(ctx context.Context, ev workload.Event) {
	start := h.env.Clock.Now()
	h.mu.Lock()
	h.key, h.holder, h.since, h.owner, h.keepUntil = ev.Key, ev.Client, -1, -1, time.Time{}
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		h.key, h.holder, h.since, h.owner = "", -1, -1, -1
		h.mu.Unlock()
	}()
	nodes := h.env.Cluster.Nodes()[:nodeCount(h.env)]
	renewal := awaitRenewal(ctx, nodes[0].Addr(), ev.Key, h.env.TTL, h.env.Cluster.Security())
	h.mu.Lock()
	h.since = h.seen.mark()
	h.mu.Unlock()
	evidence, err := fault.Inject(ctx, &fault.KeyLoss{Nodes: nodes, Key: ev.Key})
	if err != nil {
		recordWindow(h.env, start, h.env.Clock.Now(), "", fmt.Sprintf("held-key-retaken: client %d (hold %d on %s): %s; %v", ev.Client, ev.Hold, ev.Key, renewal, err))
		return
	}
	deleted := time.Now()
	other := h.seen.wait(ctx, ev.Client, ev.Key, h.since, false, 2*h.env.TTL)
	taken := "no other client was granted the key within 2×TTL"
	if other {
		h.mu.Lock()
		if h.keepUntil.IsZero() {
			h.keepUntil = time.Now().Add(h.env.TTL / 2)
		}
		until := h.keepUntil
		h.mu.Unlock()
		taken = fmt.Sprintf("another client was granted the key %v after the DEL and kept in its critical section until TTL/2 after it", time.Since(deleted).Round(time.Millisecond))
		sleepCtx(ctx, time.Until(until)+h.env.TTL/10) // the new owner writes first
	}
	ran := time.Duration(h.env.Clock.Now() - start).Round(time.Millisecond)
	recordWindow(h.env, start, h.env.Clock.Now(), landing(other), fmt.Sprintf("held-key-retaken: client %d (hold %d on %s): %s; %s; %s; the holder ran on %v before its write",
		ev.Client, ev.Hold, ev.Key, renewal, evidence, taken, ran))
}

// awaitRenewal polls key's PTTL on the node at addr (every millisecond,
// through a direct connection with sec's AUTH and TLS) until it goes back up, a renewal, or TTL/2
// passes, and says which: "renewal seen 41ms in (PTTL 131ms → 199ms)",
// "no renewal seen in TTL/2 (100ms)".
func awaitRenewal(ctx context.Context, addr, key string, ttl time.Duration, sec security.Security) string {
	c := redis.NewClient(sec.Apply(&redis.Options{Addr: addr, MaxRetries: -1, PoolSize: 1, DialerRetries: 1, Protocol: 2, DisableIdentity: true,
		DialTimeout: time.Second, ReadTimeout: time.Second, WriteTimeout: time.Second}))
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, ttl/2)
	defer cancel()
	start := time.Now()
	prev := time.Duration(-1)
	for ctx.Err() == nil {
		d, err := c.PTTL(ctx, key).Result()
		if err == nil && d > 0 {
			if prev > 0 && d > prev+ttl/20 {
				return fmt.Sprintf("renewal seen %v in (PTTL %v → %v)", time.Since(start).Round(time.Millisecond), prev.Round(time.Millisecond), d.Round(time.Millisecond))
			}
			prev = d
		}
		sleepCtx(ctx, time.Millisecond)
	}
	return fmt.Sprintf("no renewal seen in TTL/2 (%v)", ttl/2)
}
