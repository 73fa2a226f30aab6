package chaos

import (
	"context"
	"github.com/lockbench/lockbench/internal/clustertest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/chaos/fault/link"
	"github.com/lockbench/lockbench/cluster"
	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/workload"
)

func TestCycles(t *testing.T) {
	acq := func(c int, key string) workload.Event {
		return workload.Event{Client: c, Point: workload.PointAcquired, Key: key}
	}
	rel := func(c int, key string) workload.Event {
		return workload.Event{Client: c, Point: workload.PointReleased, Key: key}
	}
	cases := []struct {
		name     string
		before   []workload.Event // seen before mark
		after    []workload.Event // seen after mark
		released bool
		want     bool
	}{
		{"other granted", []workload.Event{acq(0, "k")}, []workload.Event{acq(1, "k")}, false, true},
		{"other granted, not released", []workload.Event{acq(0, "k")}, []workload.Event{acq(1, "k")}, true, false},
		{"other granted and released", []workload.Event{acq(0, "k")}, []workload.Event{acq(1, "k"), rel(1, "k")}, true, true},
		{"grant before mark released after", []workload.Event{acq(1, "k")}, []workload.Event{rel(1, "k")}, true, false},
		{"self only", nil, []workload.Event{acq(0, "k"), rel(0, "k")}, true, false},
		{"other key", nil, []workload.Event{acq(1, "j"), rel(1, "j")}, false, false},
		{"other points ignored", nil, []workload.Event{{Client: 1, Point: workload.PointInCS, Key: "k"}}, false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newCycles()
			for _, ev := range tc.before {
				c.see(ev)
			}
			since := c.mark()
			go func() {
				for _, ev := range tc.after {
					c.see(ev)
				}
			}()
			got := c.wait(context.Background(), 0, "k", since, tc.released, 200*time.Millisecond)
			if got != tc.want {
				t.Errorf("wait = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestRandomMixHeals drives the random mix on a real 5-node cluster for a
// short while, cancels it mid-run and heals: every fault is recorded with
// evidence, and afterwards every node runs unpaused and every link works.
func TestRandomMixHeals(t *testing.T) {
	c := clustertest.Start(t, cluster.Topology{Kind: cluster.Independent, Nodes: 5}, cluster.Options{ClockShim: clustertest.Shim(t)})
	ctx := clustertest.Context(t)
	l, err := link.NewLinks(ctx, 2, c.Nodes())
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	rec := &recorder{}
	in := impl.Info{Nodes: 5, Claims: impl.Claims{Quorum: true}}
	env := Env{Strategy: "redlock", TTL: 20 * time.Millisecond, Duration: time.Second, Clock: history.NewClock(),
		History: rec, Seed: 3, Info: in, Clients: 2, Cluster: c, Links: l}
	nem := randomScenario().New(env)
	runCtx, stop := context.WithTimeout(ctx, 700*time.Millisecond)
	defer stop()
	if err := nem.Run(runCtx); err != nil {
		t.Fatalf("run: %v", err)
	}
	if err := nem.Heal(ctx); err != nil {
		t.Fatalf("heal: %v", err)
	}
	notes := rec.notes()
	if len(notes) < 5 {
		t.Fatalf("only %d faults in 700 ms: %q", len(notes), notes)
	}
	kinds := map[string]bool{}
	for _, n := range notes {
		kind, _, _ := strings.Cut(n, ":")
		kinds[kind] = true
		switch kind {
		case "random/kill":
			if !strings.Contains(n, "SIGKILLed (gone") {
				t.Errorf("kill without evidence that the process was gone: %q", n)
			}
		case "random/pause":
			if !strings.Contains(n, "state T") {
				t.Errorf("pause without state T: %q", n)
			}
		case "random/partition":
			if !strings.Contains(n, "connect refused") {
				t.Errorf("cut link still accepts connects: %q", n)
			}
		case "random/clock-jump":
			if !strings.Contains(n, "moved +") {
				t.Errorf("jump without TIME evidence: %q", n)
			}
		}
	}
	if len(kinds) < 3 {
		t.Errorf("only kinds %v in %q", kinds, notes)
	}
	for i, n := range c.Nodes() {
		if s, err := n.ProcState(); err != nil || s == "T" {
			t.Errorf("%s after heal: state %q, err %v", n.Name(), s, err)
		}
		for cl := -1; cl < 2; cl++ {
			if _, err := link.PingRTT(ctx, l.Link(cl, i).Addr()); err != nil {
				t.Errorf("link c%d-%s after heal: %v", cl, n.Name(), err)
			}
		}
	}
}

func TestNetworkScenarioSetup(t *testing.T) {
	single := impl.Info{Nodes: 1}
	quorum := impl.Info{Nodes: 5, Claims: impl.Claims{Quorum: true}}
	cases := []struct {
		scenario string
		in       impl.Info
		applies  bool
		want     Setup
	}{
		{"partition-holder", single, true, Setup{Proxies: true}},
		{"latency", quorum, true, Setup{Proxies: true, ProxyNode: 1, TTL: LatencyTTL, TTLWhy: latencyWhy, MinDuration: latencyMinDuration}},
		{"clock-jump", single, true, Setup{ClockShim: true}},
		{"redlock-clock-jump", single, false, Setup{Proxies: true, Clients: 2, ClockShim: true, ThinkTTL: 0.25}},
		{"redlock-clock-jump", quorum, true, Setup{Proxies: true, Clients: 2, ClockShim: true, ThinkTTL: 0.25}},
		{"partition-holder", quorum, true, Setup{Proxies: true, TTL: QuorumProxiedTTL, TTLWhy: quorumProxiedWhy, MinDuration: partitionMinDuration, Clients: quorumProxiedClients}},
		{"random", single, true, Setup{Proxies: true, ClockShim: true, MinDuration: randomMinDuration}},
		{"random", quorum, true, Setup{Proxies: true, ClockShim: true, TTL: QuorumProxiedTTL, TTLWhy: quorumProxiedWhy, MinDuration: randomQuorumMinDuration, Clients: quorumProxiedClients}},
	}
	for _, tc := range cases {
		t.Run(tc.scenario, func(t *testing.T) {
			s, err := Lookup(tc.scenario)
			if err != nil {
				t.Fatal(err)
			}
			if s.Kind == None || s.Kind == Client || s.Summary == "" {
				t.Errorf("kind %q summary %q", s.Kind, s.Summary)
			}
			ok, why := s.AppliesTo(tc.in)
			if ok != tc.applies || (!ok && why == "") {
				t.Errorf("applies = %v (%q), want %v", ok, why, tc.applies)
			}
			if got := s.SetupFor(tc.in); got != tc.want {
				t.Errorf("setup %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestClockShimScenariosNeedClock: a scenario whose Setup asks for the
// clock shim (its nemesis may jump a clock) declares FeatureClock, so a
// backend without the shim refuses it before the run instead of failing
// when the seed picks a jump (random on docker did).
func TestClockShimScenariosNeedClock(t *testing.T) {
	infos := []impl.Info{{Nodes: 1}, {Nodes: 5, Claims: impl.Claims{Quorum: true}}}
	for _, s := range All() {
		for _, in := range infos {
			if ok, _ := s.AppliesTo(in); !ok || !s.SetupFor(in).ClockShim {
				continue
			}
			if !slices.Contains(s.Requires(in), cluster.FeatureClock) {
				t.Errorf("%s (nodes %d): setup uses the clock shim but Requires is %v", s.Name, in.Nodes, s.Requires(in))
			}
		}
	}
}
