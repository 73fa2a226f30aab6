package crosshost

import (
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/checker"
	"github.com/lockbench/lockbench/history"
)

// holdOps is one client's hold of key k in its host's own times (ms since
// its run started): an acquire granted at from, a write that completes at
// to, a release invoked at to.
func holdOps(client int, hold int64, from, to float64) []history.Operation {
	ns := func(ms float64) int64 { return int64(ms * float64(time.Millisecond)) }
	return []history.Operation{
		{Client: client, Stream: client, Kind: history.Acquire, Key: "k", Hold: hold, Depth: 1, Invoke: ns(from) - 100, Complete: ns(from), Result: history.OK},
		{Client: client, Stream: client, Kind: history.Write, Key: "k", Hold: hold, Invoke: ns(to) - 100, Complete: ns(to), Result: history.OK, Value: 1},
		{Client: client, Stream: client, Kind: history.Release, Key: "k", Hold: hold, Depth: 1, Invoke: ns(to) + 10, Complete: ns(to) + 100, Result: history.OK},
	}
}

// host builds a host's history: holds as (from, to) ms pairs in its own
// times, its clock offset before the run and, when after ≥ 0, after it
// (ms), half round trips of halfRTT ms.
func host(name string, offMs, afterMs, halfRTT float64, holds ...[2]float64) History {
	ns := func(ms float64) int64 { return int64(ms * float64(time.Millisecond)) }
	h := history.Header{Strategy: "token-lua", Scenario: "gc-pause", TTLMs: 100,
		Clock: &history.ClockSync{Server: "redis test TIME", OffsetNs: ns(offMs), HalfRTTNs: ns(halfRTT)}}
	if afterMs >= 0 {
		h.ClockAfter = &history.ClockSync{Server: "redis test TIME", OffsetNs: ns(afterMs), HalfRTTNs: ns(halfRTT)}
	}
	var ops []history.Operation
	for i, hd := range holds {
		ops = append(ops, holdOps(i%3, int64(i+1), hd[0], hd[1])...)
	}
	return History{Name: name, Header: h, Ops: ops}
}

// handoffs are n holds of 8 ms, one every 10 ms from start (ms).
func handoffs(start float64, n int) [][2]float64 {
	var out [][2]float64
	for i := range n {
		out = append(out, [2]float64{start + float64(i)*20, start + float64(i)*20 + 8})
	}
	return out
}

// TestCrossHost: holds of two hosts are put on the server's timeline by
// each host's measured offset, whatever the hosts' own clocks say; an
// overlap is reported only when the clocks prove it (certain intervals
// shrunk by the uncertainty), a closer call is undecided, and too wide an
// uncertainty or too few cross-host handoffs is inconclusive.
func TestCrossHost(t *testing.T) {
	// Host B started its run 30 ms before host A (offset 970 against
	// 1000), and its wall clock may be off by any amount: neither
	// matters, the offsets are measured against the server.
	a := handoffs(0, 12)  // A: 0-8, 20-28, ... on the server at 1000 + t
	b := handoffs(40, 12) // B: on the server at 970 + t: 1010-1018, 1030-1038 ...: between A's holds
	for _, tt := range []struct {
		name       string
		hosts      []History
		want       checker.Status
		undecided  bool
		wantInText string
	}{
		{"clean handoffs", []History{host("A", 1000, 1000, 0.2, a...), host("B", 970, 970, 0.2, b...)}, checker.OK, false, "no overlap across hosts"},
		{"planted overlap", []History{host("A", 1000, 1000, 0.2, append(a, [2]float64{300, 360})...), host("B", 970, 970, 0.2, append(b, [2]float64{330, 370})...)}, checker.Violated, false, "1 overlaps across hosts proven"},
		{"overlap within the uncertainty is undecided", []History{host("A", 1000, 1000, 0.5, append(a, [2]float64{300, 330.5})...), host("B", 970, 970, 0.5, append(b, [2]float64{360, 400})...)}, checker.OK, true, "pairs undecided"},
		{"drift widens the uncertainty", []History{host("A", 1000, 1003, 0.2, append(a, [2]float64{300, 332})...), host("B", 970, 970, 0.2, append(b, [2]float64{360, 400})...)}, checker.OK, true, "±3.201ms"},
		{"naive offset invents an overlap", []History{host("A", 1000, 1000, 0.2, a...), host("B", 975, 975, 0.2, b...)}, checker.Violated, false, "proven"},
		{"uncertainty too wide for the TTL", []History{host("A", 1000, 1000, 30, a...), host("B", 970, 970, 0.2, b...)}, checker.Inconclusive, true, "too wide against the TTL"},
		{"too few handoffs", []History{host("A", 1000, 1000, 0.2, a[:2]...), host("B", 970, 970, 0.2, b[:2]...)}, checker.Inconclusive, false, "need ≥ 10"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Check(tt.hosts)
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != tt.want || !strings.Contains(res.Message, tt.wantInText) || (res.Undecided > 0) != tt.undecided {
				t.Errorf("status %s, %d undecided, message %q; want %s, undecided %v, %q", res.Status, res.Undecided, res.Message, tt.want, tt.undecided, tt.wantInText)
			}
		})
	}
}

// TestCrossHostRefuses: a history without a clock measurement, or of
// another run, is an error naming it.
func TestCrossHostRefuses(t *testing.T) {
	noClock := host("B", 0, -1, 0, handoffs(0, 2)...)
	noClock.Header.Clock = nil
	failed := host("D", 0, -1, 0, handoffs(0, 2)...)
	failed.Header.Clock, failed.Header.ClockError = nil, "cluster: 127.0.0.1:6379: TIME (...): NOPERM"
	other := host("C", 0, -1, 0, handoffs(0, 2)...)
	other.Header.Scenario = "baseline"
	for _, tt := range []struct {
		hosts []History
		want  string
	}{
		{[]History{host("A", 0, -1, 0)}, "at least two hosts"},
		{[]History{host("A", 0, -1, 0), noClock}, "B has no clock measurement"},
		{[]History{host("A", 0, -1, 0), other}, "C is token-lua/baseline"},
		{[]History{host("A", 0, -1, 0), failed}, "D has no clock measurement: the run could not measure it (cluster: 127.0.0.1:6379: TIME (...): NOPERM)"},
	} {
		if _, err := Check(tt.hosts); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("error %v, want %q", err, tt.want)
		}
	}
}

// TestCrossHostWallClock: each host's wall clock against the server's is
// its Started minus the server's time at its history's zero (the offset):
// a host whose history was skewed by --clock-skew 50ms, or whose wall
// clock runs 50 ms ahead, shows 50 ms; the injected skew is carried; a
// Started that is no RFC 3339 time leaves it unknown. The verdict does not
// depend on it.
func TestCrossHostWallClock(t *testing.T) {
	start := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name     string
		started  string
		offset   time.Time // the server's time at history time 0
		injected time.Duration
		want     time.Duration
		known    bool
	}{
		{"same clock", start.Format(time.RFC3339Nano), start, 0, 0, true},
		{"history skewed 50 ms", start.Format(time.RFC3339Nano), start.Add(-50 * time.Millisecond), 50 * time.Millisecond, 50 * time.Millisecond, true},
		{"wall clock 50 ms ahead", start.Add(50 * time.Millisecond).Format(time.RFC3339Nano), start, 0, 50 * time.Millisecond, true},
		{"wall clock 20 ms behind", start.Add(-20 * time.Millisecond).Format(time.RFC3339Nano), start, 0, -20 * time.Millisecond, true},
		{"no started", "", start, 0, 0, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := host("A", 1000, 1000, 0.2, handoffs(0, 12)...)
			b := host("B", 970, 970, 0.2, handoffs(40, 12)...)
			b.Header.Started, b.Header.ClockSkewNs = tt.started, int64(tt.injected)
			b.Header.Clock.OffsetNs, b.Header.ClockAfter.OffsetNs = tt.offset.UnixNano(), tt.offset.UnixNano()
			// A on the same server timeline as before: B's offset moved by
			// d, so A's moves too.
			d := tt.offset.UnixNano() - int64(970*time.Millisecond)
			a.Header.Clock.OffsetNs += d
			a.Header.ClockAfter.OffsetNs += d
			res, err := Check([]History{a, b})
			if err != nil {
				t.Fatal(err)
			}
			c := res.Hosts[1]
			if c.WallKnown != tt.known || (tt.known && c.WallAheadNs != int64(tt.want)) || c.InjectedSkewNs != int64(tt.injected) {
				t.Errorf("wall ahead %v (known %v), injected %v; want %v (known %v), %v", time.Duration(c.WallAheadNs), c.WallKnown, time.Duration(c.InjectedSkewNs), tt.want, tt.known, tt.injected)
			}
			if res.Status != checker.OK {
				t.Errorf("status %s (%s); the wall clock must not change the verdict", res.Status, res.Message)
			}
		})
	}
}

// TestCrossHostStalled: a host whose harness stalled a client inside a
// hold by more than TTL/2 (its end line's max_stall_ns) is named in
// Stalled, the longest such; the status is left as found.
func TestCrossHostStalled(t *testing.T) {
	for _, tt := range []struct {
		name   string
		stalls [2]time.Duration // A's, B's; TTL 100 ms
		want   string
	}{
		{"no stall", [2]time.Duration{0, 0}, ""},
		{"stall within TTL/2", [2]time.Duration{50 * time.Millisecond, 10 * time.Millisecond}, ""},
		{"B stalled past TTL/2", [2]time.Duration{10 * time.Millisecond, 88 * time.Millisecond}, "on B a client stalled 88ms (TTL 100ms)"},
		{"both: the longer named", [2]time.Duration{135 * time.Millisecond, 88 * time.Millisecond}, "on A a client stalled 135ms"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := host("A", 1000, 1000, 0.2, append(handoffs(0, 12), [2]float64{300, 360})...)
			b := host("B", 970, 970, 0.2, append(handoffs(40, 12), [2]float64{330, 370})...)
			a.Header.MaxStallNs, b.Header.MaxStallNs = int64(tt.stalls[0]), int64(tt.stalls[1])
			res, err := Check([]History{a, b})
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != checker.Violated || (tt.want == "") != (res.Stalled == "") || !strings.Contains(res.Stalled, tt.want) {
				t.Errorf("status %s, stalled %q; want violated and %q", res.Status, res.Stalled, tt.want)
			}
		})
	}
}
