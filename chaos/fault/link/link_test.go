package link

import (
	"github.com/lockbench/lockbench/internal/clustertest"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/cluster"
)

// TestLinksCutAndLatency checks the primitives the partition and latency
// scenarios rely on: a cut link refuses connects and comes back on
// Restore; a latency of 50 ms each way adds about 100 ms to a PING.
func TestLinksCutAndLatency(t *testing.T) {
	c := clustertest.Start(t, cluster.Topology{Kind: cluster.Single}, cluster.Options{})
	ctx := clustertest.Context(t)
	l, err := NewLinks(ctx, 1, c.Nodes())
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	addr := l.Link(0, 0).Addr()
	steps := []struct {
		name    string
		do      func() error
		refused bool
		minRTT  time.Duration
		maxRTT  time.Duration
	}{
		{"direct", func() error { return nil }, false, 0, 50 * time.Millisecond},
		{"cut", func() error { return l.Cut(0, 0) }, true, 0, 0},
		{"restored", func() error { return l.Restore(0, 0) }, false, 0, 50 * time.Millisecond},
		{"latency", func() error { return l.SetLatency(0, latencyEachWay) }, false, 2 * latencyEachWay, 2*latencyEachWay + 80*time.Millisecond},
		{"healed", l.RestoreAll, false, 0, 50 * time.Millisecond},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if got := refused(addr) == "connect refused"; got != s.refused {
			t.Errorf("%s: refused = %v, want %v", s.name, got, s.refused)
		}
		if s.refused {
			continue
		}
		rtt, err := PingRTT(ctx, addr)
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if rtt < s.minRTT || rtt > s.maxRTT {
			t.Errorf("%s: PING %v, want %v..%v", s.name, rtt, s.minRTT, s.maxRTT)
		}
	}
}

// TestLinkBlackhole: a black-holed link accepts the connect and answers
// nothing (the fault's evidence says so); healed, a new connection gets
// its PING answered.
func TestLinkBlackhole(t *testing.T) {
	c := clustertest.Start(t, cluster.Topology{Kind: cluster.Single}, cluster.Options{})
	ctx := clustertest.Context(t)
	l, err := NewLinks(ctx, 1, c.Nodes())
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	b := &Blackhole{Links: l, Client: 0, Nodes: []int{0}}
	ev, err := b.Inject(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(ev, "PING unanswered") {
		t.Errorf("evidence %q: want PING unanswered", ev)
	}
	if _, err := b.Heal(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := PingRTT(ctx, l.Link(0, 0).Addr()); err != nil {
		t.Errorf("healed: PING through the link: %v", err)
	}
}

// latencyEachWay is the delay the test adds in each direction, as the
// latency scenario does.
const latencyEachWay = 50 * time.Millisecond
