package chaos

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/cluster"
	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/strategies"
	"github.com/lockbench/lockbench/internal/proc"
	"github.com/lockbench/lockbench/workload"
)

// startCluster starts a real topology and stops it when the test ends.
func startCluster(t *testing.T, topo cluster.Topology, p cluster.Persistence) *cluster.Cluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := cluster.Start(ctx, topo, cluster.Options{Persistence: p})
	if err != nil {
		t.Fatalf("start %s: %v", topo, err)
	}
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Errorf("stop: %v", err)
		}
	})
	return c
}

// testEnv is a nemesis Env for one strategy on c, with a run of duration d
// (short: the first trigger is due at once).
func testEnv(t *testing.T, strategy string, c *cluster.Cluster, ttl time.Duration) (Env, *recorder) {
	t.Helper()
	st, err := strategies.Lookup(strategy)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	return Env{Strategy: strategy, TTL: ttl, Duration: time.Millisecond, Clock: history.NewClock(), History: rec,
		Seed: 1, Info: st.Info(), Clients: 2, Cluster: c}, rec
}

// lockOn sets key to token with the TTL on n directly and returns a lease
// for it, as a client's grant would.
func lockOn(t *testing.T, n *cluster.Node, key, token string, ttl time.Duration) *impl.Lease {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: n.Addr(), MaxRetries: -1})
	defer c.Close()
	start := time.Now()
	if err := c.Set(context.Background(), key, token, ttl).Err(); err != nil {
		t.Fatal(err)
	}
	return &impl.Lease{Key: key, Token: token, Start: start, End: time.Now()}
}

// TestNodeRestartKillsForReal drives the restart nemesis at a grant on a
// real redis-server: the old process must be gone (no /proc entry), a new
// one must run on the same port, the lock key must be lost without
// persistence and kept with AOF, a delayed restart must keep the node down
// past the TTL, and the window's note must carry the evidence.
func TestNodeRestartKillsForReal(t *testing.T) {
	if testing.Short() {
		t.Skip("starts redis-server")
	}
	// A TTL of 1 s: the hold (TTL/2) must outlast a busy machine's
	// scheduling delays for another client's grant to fall inside it.
	const ttl = time.Second
	tests := []struct {
		name     string
		scenario Scenario
		p        cluster.Persistence
		wantKey  string // in the note: "absent" or "kept"
		delayed  bool
		other    bool // another client is granted the key during the hold: the strike lands
	}{
		{"immediate", nodeRestartScenario(), cluster.PersistenceNone, "absent", false, false},
		{"immediate, another grant", nodeRestartScenario(), cluster.PersistenceNone, "absent", false, true},
		{"aof", nodeRestartAOFScenario(), cluster.PersistenceAOF, "kept (PTTL", false, false},
		{"delayed", nodeRestartDelayedScenario(), cluster.PersistenceNone, "absent", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := startCluster(t, cluster.Topology{Kind: cluster.Single}, tt.p)
			env, rec := testEnv(t, "token-lua", c, ttl)
			n := c.Nodes()[0]
			oldPID := n.PID()
			// The key outlives any restart (30 s): without persistence it
			// is lost by the restart alone, and with AOF it is kept
			// however long a busy machine takes to restart the node (a
			// key of the scenario's 100 ms TTL expired during a 141 ms
			// restart, and the test read machine speed, not AOF).
			lease := lockOn(t, n, "lb:k0", "A", 30*time.Second)
			nem := tt.scenario.New(env)
			time.Sleep(time.Millisecond) // past the first trigger (20% of 1 ms)
			lease.Start = time.Now()     // the hold is TTL/2 from here
			ctx := context.Background()
			begin := time.Now()
			if tt.other {
				go func() {
					time.Sleep(ttl / 10)
					nem.At(ctx, workload.Event{Client: 1, Point: workload.PointAcquired, Key: "lb:k0", Hold: 2})
				}()
			}
			if err := nem.At(ctx, workload.Event{Client: 0, Point: workload.PointAcquired, Key: "lb:k0", Hold: 1, Lease: lease}); err != nil {
				t.Fatal(err)
			}
			// At returned after keeping the holder for at most half its
			// lease; the kill runs in the background, and on a busy machine
			// it may come after At returned: wait for it (the delayed
			// restart's time down is read from its window below).
			for deadline := time.Now().Add(10 * time.Second); proc.Alive(oldPID); time.Sleep(5 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("pid %d still present %v after the strike", oldPID, time.Since(begin))
				}
			}
			if err := nem.Heal(ctx); err != nil {
				t.Fatal(err)
			}
			if pid := n.PID(); pid == 0 || pid == oldPID {
				t.Errorf("after Heal pid %d, want a new running process (old %d)", pid, oldPID)
			}
			ws := rec.windows()
			if len(ws) != 1 {
				t.Fatalf("got %d fault windows, want 1: %+v", len(ws), ws)
			}
			want, hold := history.Missed, "no other grant during the hold"
			if tt.other {
				want, hold = history.Landed, "client 1 granted the key during the hold"
			}
			if ws[0].Landing != want {
				t.Errorf("landing %q, want %q", ws[0].Landing, want)
			}
			note := ws[0].Note
			for _, want := range []string{"pid " + strconv.Itoa(oldPID) + " SIGKILLed", "gone: no live pid " + strconv.Itoa(oldPID) + " in /proc", tt.wantKey, hold} {
				if !strings.Contains(note, want) {
					t.Errorf("note %q lacks %q", note, want)
				}
			}
			if d := time.Duration(ws[0].Complete - ws[0].Invoke); tt.delayed && d < restartDelay(ttl) {
				t.Errorf("delayed restart window %v, want at least %v", d, restartDelay(ttl))
			}
		})
	}
}

// TestNodePauseStopsForReal pauses a real redis-server at a grant: while
// paused its process must be in state T and a command sent to it must not
// complete before SIGCONT (Redis runs it after SIGCONT); after
// Heal it must run again; the window's note must say "state T".
func TestNodePauseStopsForReal(t *testing.T) {
	if testing.Short() {
		t.Skip("starts redis-server")
	}
	const ttl = 100 * time.Millisecond
	c := startCluster(t, cluster.Topology{Kind: cluster.Single}, cluster.PersistenceNone)
	env, rec := testEnv(t, "token-lua", c, ttl)
	n := c.Nodes()[0]
	lease := lockOn(t, n, "lb:k0", "A", ttl)
	nem := nodePauseScenario().New(env)
	time.Sleep(time.Millisecond)
	ctx := context.Background()

	// The struck client is held (≤ TTL/2): check the process meanwhile.
	struck := make(chan error, 1)
	go func() {
		struck <- nem.At(ctx, workload.Event{Client: 0, Point: workload.PointAcquired, Key: "lb:k0", Hold: 1, Lease: lease})
	}()
	deadline := time.Now().Add(ttl / 2)
	for {
		s, err := n.ProcState()
		if err == nil && s == "T" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("node state %q (%v) within TTL/2 of the strike, want T", s, err)
		}
		time.Sleep(time.Millisecond)
	}
	cl := redis.NewClient(&redis.Options{Addr: n.Addr(), MaxRetries: -1, ReadTimeout: 5 * time.Second})
	defer cl.Close()
	sent := time.Now()
	if err := cl.Set(ctx, "late", "1", 0).Err(); err != nil {
		t.Fatalf("SET sent during the pause: %v", err)
	}
	waited := time.Since(sent)
	if err := <-struck; err != nil {
		t.Fatal(err)
	}
	if err := nem.Heal(ctx); err != nil {
		t.Fatal(err)
	}
	if s, err := n.ProcState(); err != nil || s == "T" {
		t.Errorf("after Heal state %q (%v), want running", s, err)
	}
	ws := rec.windows()
	if len(ws) != 1 {
		t.Fatalf("got %d fault windows, want 1: %+v", len(ws), ws)
	}
	w := ws[0]
	if w.Landing != history.Missed {
		t.Errorf("landing %q, want missed: no other client was granted the key during the hold", w.Landing)
	}
	if !strings.Contains(w.Note, "state T for") {
		t.Errorf("note %q lacks the paused state", w.Note)
	}
	if d := time.Duration(w.Complete - w.Invoke); d < 2*ttl {
		t.Errorf("pause window %v, want at least 2×TTL = %v", d, 2*ttl)
	}
	// The SET was sent while paused; it can only have completed after SIGCONT.
	if end := env.Clock.Start().Add(time.Duration(w.Complete)); sent.Add(waited).Before(end) {
		t.Errorf("SET sent during the pause completed %v before SIGCONT", end.Sub(sent.Add(waited)))
	}
}

// TestNodesDownKillsForReal kills 2 and 3 of 5 real nodes at a grant: the
// killed processes must be gone until Heal restarts them, and the window
// must name them.
func TestNodesDownKillsForReal(t *testing.T) {
	if testing.Short() {
		t.Skip("starts redis-server")
	}
	tests := []struct {
		scenario Scenario
		down     int
	}{
		{redlockMinorityDownScenario(), 2},
		{redlockMajorityDownScenario(), 3},
	}
	for _, tt := range tests {
		t.Run(tt.scenario.Name, func(t *testing.T) {
			c := startCluster(t, cluster.Topology{Kind: cluster.Independent, Nodes: 5}, cluster.PersistenceNone)
			env, rec := testEnv(t, "redlock", c, 50*time.Millisecond)
			if ok, why := tt.scenario.AppliesTo(env.Info); !ok {
				t.Fatalf("does not apply to redlock: %s", why)
			}
			pids := map[string]int{}
			for _, n := range c.Nodes() {
				pids[n.Name()] = n.PID()
			}
			nem := tt.scenario.New(env)
			time.Sleep(time.Millisecond)
			ctx := context.Background()
			if err := nem.At(ctx, workload.Event{Client: 0, Point: workload.PointAcquired, Key: "lb:k0", Hold: 1}); err != nil {
				t.Fatal(err)
			}
			// The kills run in the background: the holder goes on at once.
			var down []string
			for deadline := time.Now().Add(5 * time.Second); ; {
				down = down[:0]
				for _, n := range c.Nodes() {
					if !n.Running() {
						down = append(down, n.Name())
					}
				}
				if len(down) >= tt.down || time.Now().After(deadline) {
					break
				}
				time.Sleep(time.Millisecond)
			}
			if len(down) != tt.down {
				t.Fatalf("%d nodes down (%v), want %d", len(down), down, tt.down)
			}
			time.Sleep(5 * time.Millisecond)
			for _, name := range down {
				if proc.Alive(pids[name]) {
					t.Errorf("%s pid %d still present", name, pids[name])
				}
			}
			if err := nem.Heal(ctx); err != nil {
				t.Fatal(err)
			}
			for _, n := range c.Nodes() {
				if !n.Running() {
					t.Errorf("%s not running after Heal", n.Name())
				}
			}
			ws := rec.windows()
			if len(ws) != 1 {
				t.Fatalf("got %d fault windows, want 1: %+v", len(ws), ws)
			}
			if ws[0].Landing != history.Landed {
				t.Errorf("landing %q, want landed: %d nodes went down", ws[0].Landing, tt.down)
			}
			for _, name := range down {
				if want := name + " pid " + strconv.Itoa(pids[name]) + " SIGKILLed (gone"; !strings.Contains(ws[0].Note, want) {
					t.Errorf("note %q lacks %q", ws[0].Note, want)
				}
			}
		})
	}
}

// TestProcessScenariosApply checks which strategies each scenario applies to
// and the setup it asks for: the Redis process scenarios are n/a, with a
// reason, for the locks on etcd and ZooKeeper, the consensus ones (leader-kill,
// leader-pause, quorum-loss) for the Redis locks, held-key-retaken for the
// locks that do not renew, and none of them for a lock that waits for
// replicas (they are not OnReplicas).
func TestProcessScenariosApply(t *testing.T) {
	for _, sc := range append(processScenarios(), consensusScenarios()...) {
		for _, name := range strategies.Names() {
			st, err := strategies.Lookup(name)
			if err != nil {
				t.Fatal(err)
			}
			in := st.Info()
			ok, why := sc.AppliesTo(in)
			if !ok && why == "" {
				t.Errorf("%s/%s: no reason given", sc.Name, name)
			}
			consensusScenario := sc.Kind == Process && slices.Contains([]string{"leader-kill", "leader-pause", "quorum-loss"}, sc.Name)
			if onConsensus(in) || consensusScenario {
				if ok != (onConsensus(in) && consensusScenario) {
					t.Errorf("%s applies to %s (server %s): %v (%s)", sc.Name, name, in.Server, ok, why)
				}
				continue
			}
			if in.Cluster {
				if ok || why != naOnCluster {
					t.Errorf("%s applies to %s, which runs on a Redis Cluster: %v (%s)", sc.Name, name, ok, why)
				}
				continue
			}
			if in.Replicas > 0 {
				if ok || why != naOnReplicas {
					t.Errorf("%s applies to %s, which waits for replicas: %v (%s)", sc.Name, name, ok, why)
				}
				continue
			}
			q := in.Claims.Quorum
			redlockOnly := strings.HasPrefix(sc.Name, "redlock-")
			renewalOnly := sc.Name == "held-key-retaken"
			if ok != ((q || !redlockOnly) && (in.Claims.Renewal || !renewalOnly)) {
				t.Errorf("%s applies to %s: %v (%s)", sc.Name, name, ok, why)
			}
			s := sc.SetupFor(in)
			restart := strings.HasPrefix(sc.Name, "node-restart")
			if want := restart && q; s.Proxies != want || (s.Clients == 2) != want {
				t.Errorf("%s/%s: setup %+v, want proxies and 2 clients: %v", sc.Name, name, s, want)
			}
			if want := sc.Name == "node-restart-aof"; (s.Persistence == cluster.PersistenceAOF) != want {
				t.Errorf("%s/%s: persistence %q", sc.Name, name, s.Persistence)
			}
		}
	}
}
