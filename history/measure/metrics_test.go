package measure

import (
	"math"
	"reflect"
	"testing"

	"github.com/lockbench/lockbench/history"
)

// TestAcquireLatenciesAndGrantCalls: from one client's failed attempts and
// grant, AcquireLatencies measures first attempt to grant (the wait for the
// lock included) and GrantCalls the granting call alone; nested acquires,
// per-node calls and probes are left out of both.
func TestAcquireLatenciesAndGrantCalls(t *testing.T) {
	ms := int64(1e6)
	acq := func(client int, inv, done int64, r history.Result) history.Operation {
		return history.Operation{Client: client, Kind: history.Acquire, Key: "k", Depth: 1, Invoke: inv * ms, Complete: done * ms, Result: r}
	}
	nested := acq(0, 13, 14, history.OK)
	nested.Depth = 2
	node := acq(0, 10, 11, history.OK)
	node.Node = "n1"
	ops := []history.Operation{
		acq(0, 0, 1, history.Fail), acq(1, 0, 2, history.OK), acq(0, 5, 6, history.Info), node,
		acq(0, 10, 12, history.OK), nested, acq(-1, 20, 30, history.OK),
	}
	if got, want := AcquireLatencies(ops), []float64{2, 12}; !reflect.DeepEqual(got, want) {
		t.Errorf("AcquireLatencies = %v, want %v", got, want)
	}
	if got, want := GrantCalls(ops), []float64{2, 2}; !reflect.DeepEqual(got, want) {
		t.Errorf("GrantCalls = %v, want %v", got, want)
	}
}

// TestOutcomes counts each outcome on a small hand-written history with one
// hold of each kind, per-node calls and harness operations that must not count.
func TestOutcomes(t *testing.T) {
	const ms = 1_000_000
	acq := func(client int, hold int64, res history.Result, validUntil int64) history.Operation {
		return history.Operation{Client: client, Kind: history.Acquire, Depth: 1, Hold: hold, Result: res, ValidUntil: validUntil, Invoke: hold * 10 * ms, Complete: hold*10*ms + ms}
	}
	rel := func(client int, hold int64, depth int, res history.Result, at int64) history.Operation {
		return history.Operation{Client: client, Kind: history.Release, Depth: depth, Hold: hold, Result: res, Invoke: at, Complete: at + ms}
	}
	ops := []history.Operation{
		acq(0, 1, history.OK, 0), rel(0, 1, 1, history.OK, 15*ms), // clean hold
		{Client: 1, Kind: history.Acquire, Depth: 1, Result: history.Fail}, // not acquired ×2
		{Client: 1, Kind: history.Acquire, Depth: 1, Result: history.Fail},
		{Client: 1, Kind: history.Acquire, Depth: 1, Result: history.Info}, // info
		acq(0, 2, history.OK, 0), rel(0, 2, 1, history.Fail, 25*ms), // expired on release
		acq(0, 3, history.OK, 0), // lost: signal and failed renewal, counted once
		{Client: 0, Stream: -1, Kind: history.Extend, Hold: 3, Result: history.Fail},
		{Client: 0, Stream: -1, Kind: history.Lost, Hold: 3, Result: history.OK},
		rel(0, 3, 1, history.OK, 35*ms),
		acq(1, 4, history.OK, 42*ms), rel(1, 4, 1, history.OK, 45*ms), // validity passed before release: lost
		acq(1, 5, history.OK, 60*ms), rel(1, 5, 1, history.Info, 55*ms), // within validity; release info
		{Client: 0, Kind: history.Acquire, Depth: 2, Hold: 3, Result: history.Fail},      // nested: not an attempt
		{Client: 0, Stream: -1, Kind: history.Extend, Hold: 0, Result: history.Fail},     // raced the end of a hold
		{Client: 2, Stream: -1, Kind: history.Acquire, Node: "n1", Result: history.Fail}, // per-node call
		{Client: 2, Stream: -1, Kind: history.Release, Node: "n2", Result: history.Info}, // per-node call
		{Client: -1, Kind: history.Probe, Result: history.Info},                          // harness
	}
	want := ClientOutcomes{GrantsPerClient: []float64{3, 2, 0, 0}, NotAcquired: 2, Lost: 2, ExpiredOnRelease: 1, Info: 2}
	if got := Outcomes(ops, 4); !reflect.DeepEqual(got, want) {
		t.Errorf("Outcomes = %+v, want %+v", got, want)
	}
	if got, want := Outcomes(nil, 3), (ClientOutcomes{GrantsPerClient: []float64{0, 0, 0}}); !reflect.DeepEqual(got, want) {
		t.Errorf("empty history: %+v, want %+v", got, want)
	}
	if got := Outcomes([]history.Operation{acq(5, 1, history.OK, 0)}, 2); len(got.GrantsPerClient) != 6 || got.GrantsPerClient[5] != 1 {
		t.Errorf("client 5 of 2: GrantsPerClient %v, want 6 entries, the last 1", got.GrantsPerClient)
	}
}

// TestFaultWindowsAndGrantsDuringFaults: nemesis operations become windows
// ordered by start, named by their note's head; a grant counts as during a
// fault only when it is invoked and completed inside a window of at least
// 1 ms, and only for the clients' outermost whole-lock acquires.
func TestFaultWindowsAndGrantsDuringFaults(t *testing.T) {
	const ms = 1_000_000
	nem := func(inv, done int64, note string) history.Operation {
		return history.Operation{Client: -1, Kind: history.Nemesis, Invoke: inv, Complete: done, Result: history.OK, Note: note}
	}
	acq := func(client int, inv, done int64) history.Operation {
		return history.Operation{Client: client, Kind: history.Acquire, Depth: 1, Invoke: inv, Complete: done, Result: history.OK}
	}
	nested := acq(0, 11*ms, 12*ms)
	nested.Depth = 2
	node := acq(0, 11*ms, 12*ms)
	node.Node = "n1"
	ops := []history.Operation{
		nem(50*ms, 50*ms+ms/2, "blip: too short to count"),
		nem(10*ms, 20*ms, "gc-pause: client 0 stopped"),
		acq(0, 11*ms, 12*ms),  // inside
		acq(1, 19*ms, 21*ms),  // ends after the window
		acq(-1, 12*ms, 13*ms), // probe
		nested, node,
		acq(2, 50*ms+ms/8, 50*ms+ms/4), // inside the short window only
	}
	want := []FaultWindow{{Name: "gc-pause", Start: 10 * ms, End: 20 * ms, Note: "gc-pause: client 0 stopped"},
		{Name: "blip", Start: 50 * ms, End: 50*ms + ms/2, Note: "blip: too short to count"}}
	if got := FaultWindows(ops); !reflect.DeepEqual(got, want) {
		t.Errorf("FaultWindows = %+v, want %+v", got, want)
	}
	if got := GrantsDuringFaults(ops); got != 1 {
		t.Errorf("GrantsDuringFaults = %d, want 1", got)
	}
}

// TestHoldCallsAndHandoffs checks the overhead per hold (granting call +
// release call) and the handoff (release → next grant while a client
// waited) on small histories; times in ms.
func TestHoldCallsAndHandoffs(t *testing.T) {
	tests := []struct {
		name         string
		ops          []history.Operation
		holds, hands []Timed
	}{
		{"one client, nobody waits", []history.Operation{
			held(0, 1, "k", "a", 0, 1), rel(0, 1, "k", "a", history.OK, 6, 6.5),
			held(0, 2, "k", "b", 7, 7.5), rel(0, 2, "k", "b", history.OK, 12, 13),
		}, []Timed{{msNs(6.5), 1.5}, {msNs(13), 1.5}}, nil},
		{"a waiter polls after the release", []history.Operation{
			held(0, 1, "k", "a", 0, 1),
			acq(1, "k", "", history.Fail, 2, 2.5), // waiting from 2
			rel(0, 1, "k", "a", history.OK, 6, 6.5),
			held(1, 2, "k", "b", 9, 10), // its next try, after backoff
			rel(1, 2, "k", "b", history.OK, 15, 16),
		}, []Timed{{msNs(6.5), 1.5}, {msNs(16), 2}}, []Timed{{msNs(10), 3.5}}},
		{"release unknown or crossed", []history.Operation{
			held(0, 1, "k", "a", 0, 1),
			acq(1, "k", "", history.Fail, 2, 2.5),
			rel(0, 1, "k", "a", history.Info, 6, 60), // timed out: no figure
			held(1, 2, "k", "b", 9, 10),
		}, nil, nil},
		{"keys apart", []history.Operation{
			held(0, 1, "k1", "a", 0, 1), rel(0, 1, "k1", "a", history.OK, 6, 7),
			acq(1, "k2", "", history.Fail, 2, 2.5), // waits for k2, not k1
			held(0, 2, "k1", "b", 8, 9),
		}, []Timed{{msNs(7), 2}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, _ := HoldCalls(tt.ops); !timedEqual(got, tt.holds) {
				t.Errorf("HoldCalls = %v, want %v", got, tt.holds)
			}
			if got := Handoffs(tt.ops); !timedEqual(got, tt.hands) {
				t.Errorf("Handoffs = %v, want %v", got, tt.hands)
			}
		})
	}
}

// timedEqual compares figures to the ns (ms given as floats).
func timedEqual(a, b []Timed) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].AtNs != b[i].AtNs || math.Abs(a[i].Ms-b[i].Ms) > 1e-6 {
			return false
		}
	}
	return true
}
