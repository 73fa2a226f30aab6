package chaos

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/cluster"
	"github.com/lockbench/lockbench/workload"
)

// keyLoss deletes a held lock key on every node the lock talks to (DEL,
// through a direct connection: what an eviction under maxmemory, a
// FLUSHDB or an operator does), and reads each node back for the evidence
// that the key is gone. Evidence: "DEL lb:k0 on n1: 1 (held c3's token);
// read back: gone". Heal has nothing to undo.
type keyLoss struct {
	nodes []*cluster.Node
	key   string
}

func (*keyLoss) Name() string             { return "key-loss" }
func (*keyLoss) Needs() []cluster.Feature { return nil }

// Inject deletes the key on every node and reads it back.
func (k *keyLoss) Inject(ctx context.Context) (string, error) {
	if len(k.nodes) == 0 || k.key == "" {
		return "", errors.New("no node or key to take")
	}
	var ev []string
	for _, n := range k.nodes {
		c := redis.NewClient(n.Security().Apply(&redis.Options{Addr: n.Addr(), MaxRetries: -1, PoolSize: 1, DialerRetries: 1, Protocol: 2, DisableIdentity: true,
			DialTimeout: time.Second, ReadTimeout: time.Second, WriteTimeout: time.Second}))
		deleted, err := c.Del(ctx, k.key).Result()
		if err != nil {
			c.Close()
			return strings.Join(ev, "; "), fmt.Errorf("DEL %s on %s: %w", k.key, n.Name(), err)
		}
		left, err := c.Exists(ctx, k.key).Result()
		c.Close()
		back := "gone"
		switch {
		case err != nil:
			back = "not read back: " + err.Error()
		case left > 0:
			back = "back already (another owner took it)"
		}
		ev = append(ev, fmt.Sprintf("DEL %s on %s: %d; read back: %s", k.key, n.Name(), deleted, back))
	}
	return strings.Join(ev, "; "), nil
}

// Heal has nothing to undo: the key is the lock's to set again.
func (*keyLoss) Heal(context.Context) (string, error) { return "", nil }

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

// HeldKeyLoss takes a held key away under its holder, six times a run:
// the key is deleted on every node (as an eviction under maxmemory or an
// operator's DEL would); the other clients' acquires of it wait TTL/2, so
// the holder's renewal (every TTL/3) finds it missing; then the holder
// runs on until another client is granted the key (at most 2×TTL) and
// TTL/10 more before its write. A lock that checks its renewal's answer notices (lost) and
// stops; one that trusts a missing key, or never renews, writes while
// another client holds the lock. It lands when another client is granted
// the key meanwhile.
func HeldKeyLoss() Scenario {
	return Scenario{Name: "held-key-loss", Kind: Process,
		Faults:  []Fault{&keyLoss{}},
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
	h.mu.Lock()
	h.key, h.holder, h.blockUntil = ev.Key, ev.Client, start+int64(h.env.TTL/2)
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		h.key, h.holder = "", -1
		h.mu.Unlock()
	}()
	nodes := h.env.Cluster.Nodes()[:nodeCount(h.env)]
	evidence, err := inject(ctx, &keyLoss{nodes: nodes, key: ev.Key})
	if err != nil {
		recordWindow(h.env, start, h.env.Clock.Now(), "", fmt.Sprintf("held-key-loss: client %d (hold %d on %s): %v", ev.Client, ev.Hold, ev.Key, err))
		return nil
	}
	sleepUntil(ctx, h.env, start+int64(h.env.TTL/2))
	other := h.seen.wait(ctx, ev.Client, ev.Key, since, false, 2*h.env.TTL-h.env.TTL/2)
	if other {
		sleepCtx(ctx, h.env.TTL/10) // the new owner's critical section (TTL/20 by default) writes first
	}
	ran := time.Duration(h.env.Clock.Now() - start).Round(time.Millisecond)
	recordWindow(h.env, start, h.env.Clock.Now(), landing(other), fmt.Sprintf("held-key-loss: client %d (hold %d on %s): %s; others' acquires of it held back %v; the holder ran on %v before its write; %s",
		ev.Client, ev.Hold, ev.Key, evidence, h.env.TTL/2, ran, grantedNote(other, "fault")))
	return nil
}
