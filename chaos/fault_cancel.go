package chaos

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/lockbench/lockbench/cluster"
	"github.com/lockbench/lockbench/impl"
	"github.com/redis/go-redis/v9"
)

// cancelCall cancels one lock call in flight while its commands wait in
// stopped nodes: Inject watches the call's key on every node (keyspace
// notifications, through a connection of its own) and SIGSTOPs the nodes,
// so the commands the call sends queue in their sockets; cancel cancels
// the call (workload.Call's canceller: an adapter is sent a cancel
// request, an in-process strategy's ctx reports Done); Heal SIGCONTs the
// nodes, which then run the queued commands. The key's events after the
// resume are the evidence that the cancelled call's command still took
// effect ("set" on n1 after the resume: the SET of a cancelled acquire
// ran), and what the client did about it ("del": it deleted its key).
// Evidence: "n1 pid 42 SIGSTOPped: state T (events of lb:k0 watched)";
// from Heal: "n1 SIGCONT: state S".
type cancelCall struct {
	nodes []*cluster.Node
	key   string
	call  impl.Canceller

	mu       sync.Mutex
	watches  []*keyEvents // per node, in nodes order
	stopped  time.Time    // when the first node was stopped: every later event came after the resume
	paused   []*nodePause
	sent     bool // cancel was called
	external bool // the external backend: its servers cannot be stopped on cue
}

func (*cancelCall) Name() string             { return "cancel" }
func (*cancelCall) Needs() []cluster.Feature { return []cluster.Feature{cluster.FeaturePause} }

// Inject watches the key on every node, then stops every node; on an
// error it undoes what it did.
func (c *cancelCall) Inject(ctx context.Context) (string, error) {
	if len(c.nodes) == 0 || c.key == "" {
		return "", errors.New("needs nodes and a key")
	}
	if c.external {
		return "", errors.New("needs SIGSTOP (process or docker backend): the external backend's DEBUG SLEEP cannot be ended on cue")
	}
	var ev []string
	var watches []*keyEvents
	for _, n := range c.nodes {
		w, err := watchKeyEvents(ctx, n.Name(), n.Addr(), c.key)
		if err != nil {
			closeWatches(watches)
			return "", fmt.Errorf("%w: %w", errWatch, err)
		}
		watches = append(watches, w)
	}
	c.mu.Lock()
	c.watches = watches
	c.mu.Unlock()
	var paused []*nodePause
	c.mu.Lock()
	c.stopped = time.Now()
	c.mu.Unlock()
	for _, n := range c.nodes {
		p := &nodePause{node: n}
		e, err := p.Inject(ctx)
		if err != nil {
			for _, q := range paused {
				_, _ = q.Heal(ctx)
			}
			closeWatches(watches)
			return strings.Join(append(ev, e), "; "), err
		}
		paused = append(paused, p)
		ev = append(ev, e)
	}
	c.mu.Lock()
	c.paused = paused
	c.mu.Unlock()
	return fmt.Sprintf("%s (events of %s watched)", strings.Join(ev, "; "), c.key), nil
}

// cancel cancels the call (nothing when it has returned).
func (c *cancelCall) cancel() {
	c.mu.Lock()
	c.sent = true
	c.mu.Unlock()
	if c.call != nil {
		c.call.Cancel()
	}
}

// cancelled reports whether cancel was called.
func (c *cancelCall) cancelled() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sent
}

// Heal resumes every stopped node.
func (c *cancelCall) Heal(ctx context.Context) (string, error) {
	c.mu.Lock()
	paused := slices.Clone(c.paused)
	c.paused = nil
	c.mu.Unlock()
	var ev []string
	var errs []error
	for _, p := range paused {
		e, err := p.Heal(ctx)
		errs = append(errs, err)
		if e != "" {
			ev = append(ev, p.node.Name()+" "+e)
		}
	}
	return strings.Join(ev, "; "), errors.Join(errs...)
}

// afterResume returns, per node, the key's events since the nodes were
// stopped: a stopped node emits none, so they all came after its resume.
func (c *cancelCall) afterResume() [][]string {
	c.mu.Lock()
	at, watches := c.stopped, slices.Clone(c.watches)
	c.mu.Unlock()
	out := make([][]string, len(watches))
	for i, w := range watches {
		out[i] = w.since(at)
	}
	return out
}

// close stops watching the key.
func (c *cancelCall) close() {
	c.mu.Lock()
	watches := c.watches
	c.watches = nil
	c.mu.Unlock()
	closeWatches(watches)
}

// keyEvents collects the keyspace notifications of one key on one Redis
// node (notify-keyspace-events "KA" while it watches): each event's name
// ("set", "hincrby", "expire", "del", "expired") and when it came.
type keyEvents struct {
	c  *redis.Client
	ps *redis.PubSub

	mu   sync.Mutex
	evs  []keyEvent
	done chan struct{}
}

// keyEvent is one keyspace notification.
type keyEvent struct {
	at   time.Time
	name string
}

// watchTimeout bounds the set-up of a watch (a dial on a loaded machine
// takes hundreds of ms at times).
const watchTimeout = 2 * time.Second

// errWatch marks an Inject that could not watch the key: nothing was
// stopped, and the strike is missed rather than the run failed.
var errWatch = errors.New("cannot watch the key")

// watchKeyEvents turns keyspace notifications on at addr and subscribes
// to key's, through a client of its own; it returns once the
// subscription is confirmed.
func watchKeyEvents(ctx context.Context, node, addr, key string) (*keyEvents, error) {
	ctx, cancel := context.WithTimeout(ctx, watchTimeout)
	defer cancel()
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, PoolSize: 2, Protocol: 2, DisableIdentity: true,
		DialTimeout: watchTimeout, ReadTimeout: watchTimeout, WriteTimeout: watchTimeout})
	if err := c.ConfigSet(ctx, "notify-keyspace-events", "KA").Err(); err != nil {
		c.Close()
		return nil, fmt.Errorf("watch %s on %s: CONFIG SET notify-keyspace-events: %w", key, node, err)
	}
	ps := c.Subscribe(ctx, "__keyspace@0__:"+key)
	if _, err := ps.Receive(ctx); err != nil {
		ps.Close()
		c.Close()
		return nil, fmt.Errorf("watch %s on %s: SUBSCRIBE: %w", key, node, err)
	}
	w := &keyEvents{c: c, ps: ps, done: make(chan struct{})}
	ch := ps.Channel(redis.WithChannelHealthCheckInterval(time.Hour))
	go func() {
		defer close(w.done)
		for m := range ch {
			w.mu.Lock()
			w.evs = append(w.evs, keyEvent{at: time.Now(), name: m.Payload})
			w.mu.Unlock()
		}
	}()
	return w, nil
}

// since returns the names of the events that came at or after t.
func (w *keyEvents) since(t time.Time) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for _, e := range w.evs {
		if !e.at.Before(t) {
			out = append(out, e.name)
		}
	}
	return out
}

// close unsubscribes, turns keyspace notifications off and closes the
// client.
func (w *keyEvents) close() {
	_ = w.ps.Close()
	<-w.done
	ctx, cancel := context.WithTimeout(context.Background(), watchTimeout)
	defer cancel()
	_ = w.c.ConfigSet(ctx, "notify-keyspace-events", "").Err()
	_ = w.c.Close()
}

func closeWatches(ws []*keyEvents) {
	for _, w := range ws {
		w.close()
	}
}

// takesKey reports whether a keyspace event sets a lock key: "set" (SET,
// SETNX, a script's SET), "hincrby" or "hset" (a hash lock's owner
// field).
func takesKey(event string) bool {
	switch event {
	case "set", "hincrby", "hset", "hsetnx":
		return true
	}
	return false
}
