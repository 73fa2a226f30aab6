package chaos

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/chaos/fault/link"
	"github.com/lockbench/lockbench/cluster"
	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/strategies"
	"github.com/lockbench/lockbench/internal/proc"
	"github.com/lockbench/lockbench/workload"
)

// foState reads the nemesis state the test waits for.
func foState(f *failover) (ready, armed, struck bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ready, f.armed, f.struck
}

// foWait polls cond every 2 ms for at most 10 s.
func foWait(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// TestFailoverLostWriteReal drives the failover-lost-write nemesis against a
// real replicated:1 cluster behind per-client proxies, playing the clients'
// lock events by hand: a release that leaves the key on the frozen replica
// must not arm the cut (a fresh replication link follows), a clean release
// arms it; the next grant is struck: the old primary's process is gone, the
// replica reports role master, the key is absent behind the moved link, so
// a second client is granted it; the struck client goes on once the second
// has read, and the second's write waits for the struck one's read.
func TestFailoverLostWriteReal(t *testing.T) {
	if testing.Short() {
		t.Skip("starts redis-server; skipped with -short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := cluster.Start(ctx, cluster.Topology{Kind: cluster.Replicated, Replicas: 1}, cluster.Options{})
	if err != nil {
		t.Fatalf("start cluster: %v", err)
	}
	t.Cleanup(func() { c.Stop() })
	primary, replica := c.Nodes()[0], c.Nodes()[1]
	links, err := link.NewLinks(ctx, 2, c.Nodes()[:1])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { links.Close() })
	ttl := 2 * time.Second
	rec := &recorder{}
	tokenLua, err := strategies.Lookup("token-lua")
	if err != nil {
		t.Fatal(err)
	}
	env := Env{Strategy: "token-lua", TTL: ttl, Duration: time.Second, Clock: history.NewClock(), History: rec,
		Info: tokenLua.Info(), Clients: 2, Cluster: c, Links: links}
	f := newFailover(env, false, false)
	f.from = 0
	runCtx, stopRun := context.WithCancel(ctx)
	runDone := make(chan error, 1)
	go func() { runDone <- f.Run(runCtx) }()
	t.Cleanup(func() {
		stopRun()
		if err := <-runDone; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	foWait(t, "the replica in sync through the replication proxy", func() bool { r, _, _ := foState(f); return r })

	const key = "lb:k0"
	cl := make([]*redis.Client, 2)
	for i := range cl {
		cl[i] = redis.NewClient(&redis.Options{Addr: links.Addrs(i, 1)[0], MaxRetries: -1, DialTimeout: time.Second})
		defer cl[i].Close()
	}
	set := func(i int, token string) *impl.Lease {
		t.Helper()
		start := time.Now()
		ok, err := cl[i].SetNX(ctx, key, token, ttl).Result()
		if err != nil || !ok {
			t.Fatalf("client %d SET NX %s: %v, %v", i, key, ok, err)
		}
		return &impl.Lease{Key: key, Token: token, Start: start, End: time.Now()}
	}
	at := func(client int, p workload.Point, l *impl.Lease) {
		t.Helper()
		if err := f.At(ctx, workload.Event{Client: client, Point: p, Key: key, Hold: 1, Lease: l}); err != nil {
			t.Fatalf("At(%d, %s): %v", client, p, err)
		}
	}

	// A release event while the key is still on the replica (no DEL was
	// sent): the cut is dirty, a fresh link follows.
	p := set(1, "p-token")
	foWait(t, "the key on the replica", func() bool {
		s, err := f.holderOn(ctx, replica, key, "p-token")
		return err == nil && s == holderIt
	})
	at(1, workload.PointReleased, p)
	if _, armed, _ := foState(f); armed {
		t.Fatal("cut armed although the frozen replica holds a live copy of the key")
	}
	foWait(t, "a fresh replication link after the dirty cut", func() bool { r, _, _ := foState(f); return r })
	if n, err := cl[1].Del(ctx, key).Result(); err != nil || n != 1 {
		t.Fatalf("DEL: %d, %v", n, err)
	}
	at(1, workload.PointReleased, p)
	if _, armed, _ := foState(f); !armed {
		t.Fatal("a release that leaves the replica without the key did not arm the cut")
	}

	pid := primary.PID()
	a := set(0, "a-token")
	aDone := make(chan time.Time, 1)
	go func() {
		// Blocks until client 1 has read.
		if err := f.At(ctx, workload.Event{Client: 0, Point: workload.PointAcquired, Key: key, Hold: 1, Lease: a}); err != nil {
			t.Errorf("At(0, acquired): %v", err)
		}
		aDone <- time.Now()
	}()
	foWait(t, "the strike", func() bool { _, _, s := foState(f); return s })
	foWait(t, "the primary killed", func() bool { return !primary.Running() })
	if proc.Alive(pid) {
		t.Errorf("killed primary pid %d still alive", pid)
	}
	var b *impl.Lease
	foWait(t, "the key free behind the moved link", func() bool {
		start := time.Now()
		ok, err := cl[1].SetNX(ctx, key, "b-token", ttl).Result()
		if err == nil && ok {
			b = &impl.Lease{Key: key, Token: "b-token", Start: start, End: time.Now()}
		}
		return b != nil
	})
	if r, err := replica.Role(ctx); err != nil || r != "master" {
		t.Errorf("promoted replica role %q, %v; want master", r, err)
	}
	if time.Since(a.Start) > ttl {
		t.Fatalf("the second grant came %v after the struck one's, past its %v lease", time.Since(a.Start), ttl)
	}
	at(1, workload.PointAcquired, b)
	select {
	case <-aDone:
		t.Fatal("the struck client went on before the second holder read the resource")
	case <-time.After(20 * time.Millisecond):
	}
	at(1, workload.PointInCS, b)
	var released time.Time
	select {
	case released = <-aDone:
	case <-time.After(5 * time.Second):
		t.Fatal("the struck client was not released after the second holder's read")
	}
	if released.Sub(a.Start) >= time.Duration(0.9*float64(ttl)) {
		t.Errorf("struck client released %v after its acquire: at its cap, not by the second holder's read", released.Sub(a.Start))
	}
	// The second holder's write waits for the struck client's read.
	bWrote := make(chan struct{})
	go func() {
		if err := f.At(ctx, workload.Event{Client: 1, Point: workload.PointBeforeWrite, Key: key, Hold: 2, Lease: b}); err != nil {
			t.Errorf("At(1, before-write): %v", err)
		}
		close(bWrote)
	}()
	select {
	case <-bWrote:
		t.Fatal("the second holder wrote before the struck client read")
	case <-time.After(20 * time.Millisecond):
	}
	at(0, workload.PointInCS, a)
	select {
	case <-bWrote:
	case <-time.After(5 * time.Second):
		t.Fatal("the second holder's write still waits after the struck client read")
	}

	var note string
	for _, op := range rec.ops() {
		if op.Kind == history.Nemesis {
			if note != "" {
				t.Errorf("more than one nemesis window: %q and %q", note, op.Note)
			}
			note = op.Note
			if op.Landing != history.Landed {
				t.Errorf("landing %q, want landed: a second client was granted the lost lock", op.Landing)
			}
			if op.Complete < op.Invoke {
				t.Errorf("window ends before it starts: %+v", op)
			}
		}
	}
	for _, want := range []string{
		"failover-lost-write: replication link n1→n2 cut",
		"pid " + strconv.Itoa(pid) + " SIGKILLed (gone: no live pid " + strconv.Itoa(pid) + " in /proc)",
		"n2 promoted (role master)",
		key + " on new primary n2: " + holderNone,
		"client 0 held until client 1",
	} {
		if !strings.Contains(note, want) {
			t.Errorf("nemesis note lacks %q: %q", want, note)
		}
	}
	if err := f.Heal(ctx); err != nil {
		t.Errorf("Heal: %v", err)
	}
	if got, err := cl[0].Get(ctx, key).Result(); err != nil || got != "b-token" {
		t.Errorf("after Heal GET through client 0's link: %q, %v; want the second holder's token from the new primary", got, err)
	}
}

// TestRaceCaps checks that neither client of a race waits past its cap
// when the other never comes (a quorum strategy: nobody else is granted).
func TestRaceCaps(t *testing.T) {
	cases := []struct {
		name   string
		events []workload.Event // sent after start
		wantB  int
		wantOK bool
	}{
		{"nobody else granted", nil, -1, false},
		{"granted but never read", []workload.Event{{Client: 2, Point: workload.PointAcquired, Key: "k"}}, -1, false},
		{"another key does not count", []workload.Event{{Client: 2, Point: workload.PointAcquired, Key: "x"}, {Client: 2, Point: workload.PointInCS, Key: "x"}}, -1, false},
		{"granted and read", []workload.Event{{Client: 2, Point: workload.PointAcquired, Key: "k"}, {Client: 2, Point: workload.PointInCS, Key: "k"}}, 2, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newRace()
			capA := 50 * time.Millisecond
			r.start(1, "k", time.Now().Add(capA), 30*time.Millisecond)
			for _, ev := range tc.events {
				if err := r.at(context.Background(), ev); err != nil {
					t.Fatal(err)
				}
			}
			start := time.Now()
			b, ok := r.waitOther(context.Background())
			if b != tc.wantB || ok != tc.wantOK {
				t.Errorf("waitOther = %d, %v; want %d, %v", b, ok, tc.wantB, tc.wantOK)
			}
			if waited := time.Since(start); ok && waited > capA/2 || !ok && waited < capA/2 {
				t.Errorf("waited %v (cap %v, released by a read: %v)", waited, capA, ok)
			}
			// B waits for A's read at most capB.
			start = time.Now()
			if err := r.at(context.Background(), workload.Event{Client: tc.wantB, Point: workload.PointBeforeWrite, Key: "k"}); err != nil {
				t.Fatal(err)
			}
			if waited := time.Since(start); tc.wantOK && (waited < 20*time.Millisecond || waited > time.Second) {
				t.Errorf("B waited %v before its write, want its 30ms cap", waited)
			}
		})
	}
}
