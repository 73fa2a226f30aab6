package fault

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/lockbench/lockbench/chaos/keystate"
	"github.com/lockbench/lockbench/cluster"
	"github.com/lockbench/lockbench/cluster/security"
	"github.com/lockbench/lockbench/impl"
)

// CancelCall cancels one lock call in flight while its commands wait in
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
type CancelCall struct {
	Nodes []*cluster.Node
	Key   string
	Call  impl.Canceller

	mu       sync.Mutex
	watches  []*keystate.KeyEvents // per node, in nodes order
	stopped  time.Time             // when the first node was stopped: every later event came after the resume
	paused   []*NodePause
	sent     bool // cancel was called
	External bool // the external backend: its servers cannot be stopped on cue
	// Security is the AUTH and TLS of the watches' connections (the
	// cluster's Security).
	Security security.Security
}

// Name is the primitive's name, "cancel" (Fault.Name).
func (*CancelCall) Name() string { return "cancel" }

// Needs lists the backend features Inject and Heal use (Fault.Needs).
func (*CancelCall) Needs() []cluster.Feature { return []cluster.Feature{cluster.FeaturePause} }

// Inject watches the key on every node, then stops every node; on an
// error it undoes what it did.
func (c *CancelCall) Inject(ctx context.Context) (string, error) {
	if len(c.Nodes) == 0 || c.Key == "" {
		return "", errors.New("needs nodes and a key")
	}
	if c.External {
		return "", errors.New("needs SIGSTOP (process or docker backend): the external backend's DEBUG SLEEP cannot be ended on cue")
	}
	var ev []string
	var watches []*keystate.KeyEvents
	for _, n := range c.Nodes {
		w, err := keystate.WatchKeyEvents(ctx, n.Name(), n.Addr(), c.Key, c.Security)
		if err != nil {
			keystate.CloseWatches(watches)
			return "", fmt.Errorf("%w: %w", keystate.ErrWatch, err)
		}
		watches = append(watches, w)
	}
	c.mu.Lock()
	c.watches = watches
	c.mu.Unlock()
	var paused []*NodePause
	c.mu.Lock()
	c.stopped = time.Now()
	c.mu.Unlock()
	for _, n := range c.Nodes {
		p := &NodePause{Node: n}
		e, err := p.Inject(ctx)
		if err != nil {
			for _, q := range paused {
				_, _ = q.Heal(ctx)
			}
			keystate.CloseWatches(watches)
			return strings.Join(append(ev, e), "; "), err
		}
		paused = append(paused, p)
		ev = append(ev, e)
	}
	c.mu.Lock()
	c.paused = paused
	c.mu.Unlock()
	return fmt.Sprintf("%s (events of %s watched)", strings.Join(ev, "; "), c.Key), nil
}

// cancel cancels the call (nothing when it has returned).
func (c *CancelCall) Cancel() {
	c.mu.Lock()
	c.sent = true
	c.mu.Unlock()
	if c.Call != nil {
		c.Call.Cancel()
	}
}

// cancelled reports whether cancel was called.
func (c *CancelCall) Cancelled() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sent
}

// Heal resumes every stopped node.
func (c *CancelCall) Heal(ctx context.Context) (string, error) {
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
			ev = append(ev, p.Node.Name()+" "+e)
		}
	}
	return strings.Join(ev, "; "), errors.Join(errs...)
}

// afterResume returns, per node, the key's events since the nodes were
// stopped: a stopped node emits none, so they all came after its resume.
func (c *CancelCall) AfterResume() [][]string {
	c.mu.Lock()
	at, watches := c.stopped, slices.Clone(c.watches)
	c.mu.Unlock()
	out := make([][]string, len(watches))
	for i, w := range watches {
		out[i] = w.Since(at)
	}
	return out
}

// close stops watching the key.
func (c *CancelCall) Close() {
	c.mu.Lock()
	watches := c.watches
	c.watches = nil
	c.mu.Unlock()
	keystate.CloseWatches(watches)
}
