package fault

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/lockbench/lockbench/cluster"
	"github.com/lockbench/lockbench/impl"
	"github.com/redis/go-redis/v9"
)

// RollingRestart restarts nodes one after another, as an operator's
// rolling restart does (an upgrade, a configuration change): each node is
// SIGKILLed and started again at once on its address (NodeRestart), empty
// without persistence, with its AOF under cluster.PersistenceAOF; a
// replica comes back as a replica of its primary and copies it again.
// Between two restarts, and after the last, Inject calls between (the
// nemesis's wait: the holder's next renewal), so a renewed hold lives
// through every step. After each restart the held key is read on the
// restarted node (KeyState): the evidence that the restart took the lock
// from it, or not. Evidence: "n1 pid 42 SIGKILLed ...; restarted empty
// ... as pid 57, down 21ms; lb:k0 on n1 after restart: absent; then the
// holder's renewal 140ms later | n2 ...". Heal restarts a node a failed
// restart left down.
type RollingRestart struct {
	Nodes []*cluster.Node
	// persistence is the nodes' persistence, for the evidence.
	Persistence cluster.Persistence
	// key and lease are the held key and its lease, read back after each
	// restart (nil lease: presence only).
	Key   string
	Lease *impl.Lease
	// TTL is the lock's TTL: the struck lease's end when it reports no
	// validity of its own (KeyState).
	TTL time.Duration
	// between waits after the restart of nodes[i] (the nemesis's
	// placement: the holder's next renewal) and returns its note; nil:
	// no wait.
	Between func(ctx context.Context, i int) string
}

// Name is the primitive's name, "rolling-restart" (Fault.Name).
func (*RollingRestart) Name() string { return "rolling-restart" }

// Needs lists the backend features Inject and Heal use (Fault.Needs).
func (*RollingRestart) Needs() []cluster.Feature { return []cluster.Feature{cluster.FeatureKill} }

// Inject restarts the nodes in order, reading the key back on each and
// waiting (between) after each; it stops at the first restart that fails
// and returns the evidence so far.
func (r *RollingRestart) Inject(ctx context.Context) (string, error) {
	if len(r.Nodes) == 0 {
		return "", fmt.Errorf("no node to restart")
	}
	var ev []string
	for i, n := range r.Nodes {
		restarted, err := (&NodeRestart{Node: n, Persistence: r.Persistence}).Inject(ctx)
		if err != nil {
			return strings.Join(append(ev, restarted), " | "), err
		}
		step := restarted
		if r.Key != "" {
			step += "; " + KeyState(ctx, n, r.Key, r.Lease, r.TTL)
		}
		if r.Between != nil {
			if note := r.Between(ctx, i); note != "" {
				step += "; then " + note
			}
		}
		ev = append(ev, step)
	}
	return strings.Join(ev, " | "), nil
}

// Heal restarts every node still down (a restart that failed).
func (r *RollingRestart) Heal(ctx context.Context) (string, error) {
	var ev []string
	for _, n := range r.Nodes {
		e, err := (&NodeKill{Node: n}).Heal(ctx)
		if err != nil {
			return strings.Join(ev, "; "), err
		}
		if e != "" {
			ev = append(ev, e)
		}
	}
	return strings.Join(ev, "; "), nil
}

// KeyState reads key on n through a direct connection right after a
// restart and says whether the struck owner's lock survived, for a nemesis
// note: "lb:k0 on n1 after restart: absent", "... lost (another owner's
// lock, PTTL 196ms)" (a client was faster than this read), "... kept
// (PTTL 31ms, the struck owner's token)", or why it could not tell; an
// absent or lost key read after the struck lease ended (its validity, or
// Start + ttl when it reports none) says it had expired.
func KeyState(ctx context.Context, n *cluster.Node, key string, l *impl.Lease, ttl time.Duration) string {
	c := redis.NewClient(n.Security().Apply(&redis.Options{Addr: n.Addr(), MaxRetries: -1, DialTimeout: 100 * time.Millisecond,
		ReadTimeout: 100 * time.Millisecond, WriteTimeout: 100 * time.Millisecond, PoolSize: 1}))
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	prefix := fmt.Sprintf("%s on %s after restart: ", key, n.Name())
	typ, err := c.Type(ctx, key).Result()
	if err != nil {
		return prefix + fmt.Sprintf("unreadable (%v)", err)
	}
	// expired says the struck lease had ended by this read (a restart a
	// busy machine stretched past the TTL): the key would be gone or
	// another's with no fault at all.
	expired := ""
	if l != nil {
		v := l.ValidUntil()
		if v.IsZero() && ttl > 0 {
			v = l.Start.Add(ttl)
		}
		if !v.IsZero() && time.Now().After(v) {
			expired = fmt.Sprintf(" (read %v after the struck lease ended: it had expired)", time.Since(v).Round(time.Millisecond))
		}
	}
	if typ == "none" {
		return prefix + "absent" + expired
	}
	pttl, _ := c.PTTL(ctx, key).Result()
	if l == nil {
		return prefix + fmt.Sprintf("present (PTTL %v)", pttl.Round(time.Millisecond))
	}
	var mine bool
	switch typ {
	case "string": // SET k token
		v, err := c.Get(ctx, key).Result()
		mine = err == nil && v == l.Token
	case "hash": // reentrant: one field per owner token
		mine, _ = c.HExists(ctx, key, l.Token).Result()
	}
	if mine {
		return prefix + fmt.Sprintf("kept (PTTL %v, the struck owner's token)", pttl.Round(time.Millisecond))
	}
	return prefix + fmt.Sprintf("lost (another owner's lock, PTTL %v)", pttl.Round(time.Millisecond)) + expired
}
