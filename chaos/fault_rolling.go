package chaos

import (
	"context"
	"fmt"
	"strings"

	"github.com/lockbench/lockbench/cluster"
	"github.com/lockbench/lockbench/impl"
)

// rollingRestart restarts nodes one after another, as an operator's
// rolling restart does (an upgrade, a configuration change): each node is
// SIGKILLed and started again at once on its address (nodeRestart), empty
// without persistence, with its AOF under cluster.PersistenceAOF; a
// replica comes back as a replica of its primary and copies it again.
// Between two restarts, and after the last, Inject calls between (the
// nemesis's wait: the holder's next renewal), so a renewed hold lives
// through every step. After each restart the held key is read on the
// restarted node (keyState): the evidence that the restart took the lock
// from it, or not. Evidence: "n1 pid 42 SIGKILLed ...; restarted empty
// ... as pid 57, down 21ms; lb:k0 on n1 after restart: absent; then the
// holder's renewal 140ms later | n2 ...". Heal restarts a node a failed
// restart left down.
type rollingRestart struct {
	nodes []*cluster.Node
	// persistence is the nodes' persistence, for the evidence.
	persistence cluster.Persistence
	// key and lease are the held key and its lease, read back after each
	// restart (nil lease: presence only).
	key   string
	lease *impl.Lease
	// between waits after the restart of nodes[i] (the nemesis's
	// placement: the holder's next renewal) and returns its note; nil:
	// no wait.
	between func(ctx context.Context, i int) string
}

func (*rollingRestart) Name() string             { return "rolling-restart" }
func (*rollingRestart) Needs() []cluster.Feature { return []cluster.Feature{cluster.FeatureKill} }

// Inject restarts the nodes in order, reading the key back on each and
// waiting (between) after each; it stops at the first restart that fails
// and returns the evidence so far.
func (r *rollingRestart) Inject(ctx context.Context) (string, error) {
	if len(r.nodes) == 0 {
		return "", fmt.Errorf("no node to restart")
	}
	var ev []string
	for i, n := range r.nodes {
		restarted, err := (&nodeRestart{node: n, persistence: r.persistence}).Inject(ctx)
		if err != nil {
			return strings.Join(append(ev, restarted), " | "), err
		}
		step := restarted
		if r.key != "" {
			step += "; " + keyState(ctx, n, r.key, r.lease)
		}
		if r.between != nil {
			if note := r.between(ctx, i); note != "" {
				step += "; then " + note
			}
		}
		ev = append(ev, step)
	}
	return strings.Join(ev, " | "), nil
}

// Heal restarts every node still down (a restart that failed).
func (r *rollingRestart) Heal(ctx context.Context) (string, error) {
	var ev []string
	for _, n := range r.nodes {
		e, err := (&nodeKill{node: n}).Heal(ctx)
		if err != nil {
			return strings.Join(ev, "; "), err
		}
		if e != "" {
			ev = append(ev, e)
		}
	}
	return strings.Join(ev, "; "), nil
}
