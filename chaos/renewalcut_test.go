package chaos

import (
	"context"
	"github.com/lockbench/lockbench/internal/clustertest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockbench/lockbench/chaos/fault/link"
	"github.com/lockbench/lockbench/cluster"
	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/strategies"
	"github.com/lockbench/lockbench/workload"
	"github.com/redis/go-redis/v9"
)

// TestRenewalCutLands drives renewal-cut by hand against a real
// redis-server, watchdog behind a proxy: the holder is kept in its
// critical section until its renewal, then cut off; its next renewal
// fails while the key, renewed just before the cut, still held its
// token, and Lost fires; once another client (played by the test) is
// granted the key and releases it, the window is recorded as landed with
// the key read right before the cut.
func TestRenewalCutLands(t *testing.T) {
	const ttl = 300 * time.Millisecond
	c := clustertest.Start(t, cluster.Topology{Kind: cluster.Single}, cluster.Options{})
	ctx := clustertest.Context(t)
	links, err := link.NewLinks(ctx, 1, c.Nodes())
	if err != nil {
		t.Fatal(err)
	}
	defer links.Close()
	rec := &recorder{}
	st, err := strategies.Lookup("watchdog")
	if err != nil {
		t.Fatal(err)
	}
	env := Env{TTL: ttl, Duration: time.Millisecond, Clock: history.NewClock(), History: rec, Info: st.Info(), Clients: 2, Cluster: c, Links: links}
	nem := renewalCutScenario().New(env)
	time.Sleep(2 * time.Millisecond) // past the first trigger
	rc := redis.NewClient(&redis.Options{Addr: links.Link(0, 0).Addr(), MaxRetries: -1, ContextTimeoutEnabled: true})
	defer rc.Close()
	var mu sync.Mutex
	var lease *impl.Lease
	renewals := make(chan error, 16)
	cfg := impl.Config{Nodes: []redis.UniversalClient{rc}, TTL: ttl, Owner: "c0",
		Hook: func(ctx context.Context, p impl.Point) error {
			mu.Lock()
			ev := workload.Event{Client: 0, Point: workload.Point(p), Key: "k", Hold: 1, Lease: lease}
			mu.Unlock()
			return nem.At(ctx, ev)
		},
		OnRenew: func(rn impl.Renewal) { renewals <- rn.Err },
	}
	locker, err := st.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer locker.Close()
	l, err := locker.Acquire(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	lease = l
	mu.Unlock()
	// Another client, played by the test: granted once the holder's key
	// expired (its Lost fired), then released.
	go func() {
		select {
		case <-l.Lost:
		case <-ctx.Done():
			return
		}
		other := &impl.Lease{Key: "k", Token: "other"}
		_ = nem.At(ctx, workload.Event{Client: 1, Point: workload.PointAcquired, Key: "k", Hold: 2, Lease: other})
		time.Sleep(5 * time.Millisecond)
		_ = nem.At(ctx, workload.Event{Client: 1, Point: workload.PointReleased, Key: "k", Hold: 2, Lease: other})
	}()
	// The holder's critical section: At keeps it through the strike.
	if err := nem.At(ctx, workload.Event{Client: 0, Point: workload.PointInCS, Key: "k", Hold: 1, Lease: l}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-l.Lost:
	default:
		t.Fatal("Lost did not fire: the renewals during the cut must have failed")
	}
	failed := false
	for len(renewals) > 0 {
		if err := <-renewals; err != nil {
			failed = true
		}
	}
	if !failed {
		t.Error("no renewal failed")
	}
	if err := nem.Heal(ctx); err != nil {
		t.Fatal(err)
	}
	var ws []history.Operation
	for _, op := range rec.ops() {
		if op.Kind == history.Nemesis && op.Landing != "" {
			ws = append(ws, op)
		}
	}
	if len(ws) != 1 || ws[0].Landing != history.Landed || !strings.Contains(ws[0].Note, "cut off from n1") ||
		!strings.Contains(ws[0].Note, l.Token) {
		t.Fatalf("windows %+v, want one landed window with the key held by %s before the cut", ws, l.Token)
	}
	t.Log(ws[0].Note)
}
