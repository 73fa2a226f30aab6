package chaos

import (
	"context"
	"fmt"

	"github.com/lockbench/lockbench/chaos/fault"
	"github.com/lockbench/lockbench/chaos/fault/link"
	"github.com/lockbench/lockbench/chaos/keystate"
	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/workload"
)

// slowExtend plays a slow-reply step at a renewal or an extend (a step at
// an acquire is played by slow-node's nemesis, slowNodeOf): node n1 (the
// first of the lock's nodes; one of a quorum's) answers the struck client
// Size TTLs late, for that long. The key is read on n1 at the event,
// before the call goes up; the delay goes on the client's link to n1;
// halfway through the delay the key is read again (the call has run on
// n1 by then, its reply held back) and at the end the delay is removed (a
// reply held back goes on at once). The step lands when the halfway read
// shows the struck lease's token with more time to live than the first
// read: the extend took effect on n1 while the client waited for its
// answer, the indeterminate outcome the fault is for. Evidence: both
// reads, and whether another client was granted the key meanwhile.
func (m *scheduled) slowExtend(ctx context.Context, r *stepRun, ev workload.Event) {
	env := m.env
	start := env.Clock.Now()
	if env.Links == nil || ev.Key == "" {
		recordWindow(env, start, start, history.Missed, fmt.Sprintf("%s: %s: not injected: needs per-link proxies and a key", r.name(), r.st))
		return
	}
	node := env.Cluster.Nodes()[0]
	d := m.ttls(r.st.Size)
	undo := context.WithoutCancel(ctx)
	before := keystate.Key(undo, node.Name(), node.Addr(), ev.Key, node.Security())
	since := m.seen.mark()
	f := &link.SlowReply{Links: env.Links, Client: ev.Client, Node: 0, NodeName: node.Name(), D: d}
	evidence, err := fault.Inject(undo, f)
	if err != nil {
		recordWindow(env, start, env.Clock.Now(), history.Missed, fmt.Sprintf("%s: %s: not injected: %v", r.name(), r.st, err))
		return
	}
	token := before.Value
	if ev.Lease != nil {
		token = ev.Lease.Token
	}
	m.log.bg.Add(1)
	go func() {
		defer m.log.bg.Done()
		sleepCtx(ctx, d/2)
		during := keystate.Key(undo, node.Name(), node.Addr(), ev.Key, node.Security())
		sleepCtx(ctx, d-d/2)
		_, err := fault.Heal(undo, f)
		m.log.fail(err)
		extended := during.Holds(token) && before.Holds(token) && during.PTTL > before.PTTL
		other := m.seen.has(ev.Client, ev.Key, since, false)
		ran := "the struck call had not extended the key on " + node.Name() + " halfway"
		if extended {
			ran = "the struck call extended the key on " + node.Name() + " while its reply was held back"
		}
		note := fmt.Sprintf("%s: %s: %s; struck client %d (hold %d on %s) at %s: %s at the event, %s halfway through the delay (%s); %s",
			r.name(), r.st, evidence, ev.Client, ev.Hold, ev.Key, ev.Point, before, during, ran, grantedNote(other, "delay"))
		recordWindow(env, start, env.Clock.Now(), landing(extended), note)
	}()
}
