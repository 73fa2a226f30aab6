package chaos

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/lockbench/lockbench/chaos/fault"
	"github.com/lockbench/lockbench/cluster"
	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/strategies"
	"github.com/lockbench/lockbench/workload"
)

// TestFaultsListedOnce: every primitive has a unique name, every fault a
// scenario composes is one of the list, and every listed primitive is
// composed by some scenario.
func TestFaultsListedOnce(t *testing.T) {
	listed := map[string]bool{}
	for _, f := range fault.Faults() {
		if f.Name() == "" || listed[f.Name()] {
			t.Errorf("fault %T: name %q empty or listed twice", f, f.Name())
		}
		listed[f.Name()] = true
	}
	used := map[string]bool{}
	for _, s := range All() {
		if s.Kind != None && len(s.Faults) == 0 {
			t.Errorf("%s composes no fault", s.Name)
		}
		for _, f := range s.Faults {
			if !listed[f.Name()] {
				t.Errorf("%s composes %q, which Faults does not list", s.Name, f.Name())
			}
			used[f.Name()] = true
		}
	}
	for name := range listed {
		if !used[name] {
			t.Errorf("fault %q is composed by no scenario", name)
		}
	}
}

// TestScenarioRequires pins the backend features each scenario needs, as
// derived from the faults it composes and its Setup.
func TestScenarioRequires(t *testing.T) {
	const (
		kill    = cluster.FeatureKill
		pause   = cluster.FeaturePause
		clock   = cluster.FeatureClock
		proxies = cluster.FeatureProxies
		repl    = cluster.FeatureReplicationProxy
		redis   = cluster.FeatureRedisFaults
	)
	single := impl.Info{Nodes: 1}
	quorum := impl.Info{Nodes: 5, Claims: impl.Claims{Quorum: true}}
	cases := []struct {
		scenario       string
		single, quorum []cluster.Feature
	}{
		{"baseline", nil, nil},
		{"long-cs", nil, nil},
		{"gc-pause", nil, nil},
		{"crash-between", nil, nil},
		{"cancel", []cluster.Feature{pause}, []cluster.Feature{pause}},
		{"node-restart", []cluster.Feature{kill}, []cluster.Feature{kill, proxies}},
		{"node-restart-delayed", []cluster.Feature{kill}, []cluster.Feature{kill, proxies}},
		{"node-restart-aof", []cluster.Feature{kill}, []cluster.Feature{kill, proxies}},
		{"node-pause", []cluster.Feature{pause}, []cluster.Feature{pause}},
		{"redlock-minority-down", []cluster.Feature{kill}, []cluster.Feature{kill}},
		{"redlock-majority-down", []cluster.Feature{kill}, []cluster.Feature{kill}},
		{"held-key-loss", nil, nil},
		{"held-key-retaken", nil, nil},
		{"rolling-restart", []cluster.Feature{kill}, []cluster.Feature{kill}},
		{"leader-kill", []cluster.Feature{kill}, []cluster.Feature{kill}},
		{"leader-pause", []cluster.Feature{pause}, []cluster.Feature{pause}},
		{"quorum-loss", []cluster.Feature{kill}, []cluster.Feature{kill}},
		{"failover-lost-write", []cluster.Feature{kill, redis, repl, proxies}, []cluster.Feature{kill, redis, repl, proxies}},
		{"failover-bare-quorum", []cluster.Feature{kill, redis, repl, proxies}, []cluster.Feature{kill, redis, repl, proxies}},
		{"sentinel-failover", []cluster.Feature{kill, repl}, []cluster.Feature{kill, repl}},
		{"failover-other-replica", []cluster.Feature{kill, redis, repl, proxies}, []cluster.Feature{kill, redis, repl, proxies}},
		{"cluster-failover", []cluster.Feature{redis, kill}, []cluster.Feature{redis, kill}},
		{"slot-migration", []cluster.Feature{redis}, []cluster.Feature{redis}},
		{"partition-holder", []cluster.Feature{proxies}, []cluster.Feature{proxies}},
		{"partition-blackhole", []cluster.Feature{proxies}, []cluster.Feature{proxies}},
		{"latency", []cluster.Feature{proxies}, []cluster.Feature{proxies}},
		{"slow-node", []cluster.Feature{proxies}, []cluster.Feature{proxies}},
		{"renewal-cut", []cluster.Feature{proxies}, []cluster.Feature{proxies}},
		{"lost-reply", []cluster.Feature{proxies}, []cluster.Feature{proxies}},
		{"lost-reply-release", []cluster.Feature{proxies}, []cluster.Feature{proxies}},
		{"lost-reply-extend", []cluster.Feature{proxies}, []cluster.Feature{proxies}},
		{"lost-reply-reentrant", []cluster.Feature{proxies}, []cluster.Feature{proxies}},
		{"clock-jump", []cluster.Feature{clock}, []cluster.Feature{clock}},
		{"redlock-clock-jump", []cluster.Feature{clock, proxies}, []cluster.Feature{clock, proxies}},
		{"client-clock-step", nil, nil},
		{"random", []cluster.Feature{kill, pause, clock, proxies}, []cluster.Feature{kill, pause, clock, proxies}},
	}
	if len(cases) != len(All()) {
		t.Errorf("%d cases for %d scenarios", len(cases), len(All()))
	}
	for _, tc := range cases {
		s, err := Lookup(tc.scenario)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Requires(single); !slices.Equal(got, tc.single) {
			t.Errorf("%s (single node) requires %v, want %v", tc.scenario, got, tc.single)
		}
		if got := s.Requires(quorum); !slices.Equal(got, tc.quorum) {
			t.Errorf("%s (quorum) requires %v, want %v", tc.scenario, got, tc.quorum)
		}
	}
}

// TestCrashPointDeclared: crash-between kills a client at its strategy's
// declared crash point (naive: after SETNX), else inside the critical
// section, for every registered strategy, and records a landed window.
func TestCrashPointDeclared(t *testing.T) {
	for _, name := range strategies.Names() {
		st, err := strategies.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		in := st.Info()
		t.Run(name, func(t *testing.T) {
			want := workload.PointInCS
			if in.CrashPoint != "" {
				want = workload.Point(in.CrashPoint)
			}
			if name == "naive" && want != workload.PointAfterSetNX {
				t.Errorf("naive crashes at %q, want %q", want, workload.PointAfterSetNX)
			}
			for _, p := range []workload.Point{workload.PointAfterSetNX, workload.PointAcquired, workload.PointInCS, workload.PointBeforeWrite} {
				rec := &recorder{}
				env := Env{Strategy: name, TTL: 10 * time.Millisecond, Duration: time.Millisecond, Clock: history.NewClock(), History: rec, Info: in, Clients: 2}
				nem := crashBetweenScenario().New(env)
				time.Sleep(time.Millisecond) // past the trigger
				err := nem.At(context.Background(), workload.Event{Client: 1, Point: p, Key: "k", Hold: 1})
				if crashed := errors.Is(err, impl.ErrCrashed); crashed != (p == want) {
					t.Errorf("at %s: crashed %v (%v), want %v", p, crashed, err, p == want)
				}
				ops := rec.ops()
				if p == want && (len(ops) != 1 || ops[0].Landing != history.Landed) {
					t.Errorf("at %s: recorded %+v, want one landed window", p, ops)
				}
			}
		})
	}
}

// TestClientFaultLanding drives gc-pause and long-cs by hand: a fault
// lands when another client is granted the struck key while it is in
// force, and misses otherwise (including a grant of another key).
func TestClientFaultLanding(t *testing.T) {
	const ttl = 20 * time.Millisecond
	cases := []struct {
		scenario Scenario
		at       workload.Point
		other    *workload.Event // sent while the fault is in force
		want     history.Landing
	}{
		{gcPauseScenario(), workload.PointBeforeWrite, &workload.Event{Client: 1, Point: workload.PointAcquired, Key: "k"}, history.Landed},
		{gcPauseScenario(), workload.PointBeforeWrite, &workload.Event{Client: 1, Point: workload.PointAcquired, Key: "other"}, history.Missed},
		{gcPauseScenario(), workload.PointBeforeWrite, nil, history.Missed},
		{longCSScenario(), workload.PointInCS, &workload.Event{Client: 1, Point: workload.PointAcquired, Key: "k"}, history.Landed},
		{longCSScenario(), workload.PointInCS, nil, history.Missed},
	}
	for _, tc := range cases {
		t.Run(tc.scenario.Name+"_"+string(tc.want), func(t *testing.T) {
			rec := &recorder{}
			env := Env{TTL: ttl, Duration: time.Millisecond, Clock: history.NewClock(), History: rec, Clients: 2}
			nem := tc.scenario.New(env)
			time.Sleep(time.Millisecond)
			ctx := context.Background()
			done := make(chan error, 1)
			start := time.Now()
			go func() { done <- nem.At(ctx, workload.Event{Client: 0, Point: tc.at, Key: "k", Hold: 1}) }()
			if tc.other != nil {
				time.Sleep(ttl / 2)
				if err := nem.At(ctx, *tc.other); err != nil {
					t.Fatal(err)
				}
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if d := time.Since(start); d < 2*ttl {
				t.Errorf("the struck client was held %v, want 2×TTL", d)
			}
			ws := rec.windows()
			if len(ws) != 1 || ws[0].Landing != tc.want {
				t.Fatalf("windows %+v, want one with landing %q", ws, tc.want)
			}
		})
	}
}

// TestGCPauseStopsRenewal: while gc-pause holds a client, that client's
// renewal (impl.PointRenew) waits until the pause ends; another client's
// renewal does not.
func TestGCPauseStopsRenewal(t *testing.T) {
	const ttl = 50 * time.Millisecond
	env := Env{TTL: ttl, Duration: time.Millisecond, Clock: history.NewClock(), History: &recorder{}, Clients: 2}
	nem := gcPauseScenario().New(env)
	time.Sleep(time.Millisecond)
	ctx := context.Background()
	go nem.At(ctx, workload.Event{Client: 0, Point: workload.PointBeforeWrite, Key: "k", Hold: 1})
	time.Sleep(ttl / 2)
	for _, tc := range []struct {
		client  int
		blocked bool
	}{{1, false}, {0, true}} {
		start := time.Now()
		if err := nem.At(ctx, workload.Event{Client: tc.client, Point: workload.PointRenew}); err != nil {
			t.Fatal(err)
		}
		if waited := time.Since(start); (waited > ttl) != tc.blocked {
			t.Errorf("client %d's renewal waited %v; want blocked until the pause ends: %v", tc.client, waited, tc.blocked)
		}
	}
}
