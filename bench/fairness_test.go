package bench

import (
	"math"
	"testing"

	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/results"
)

// TestFairnessAndErrors counts each outcome on a small hand-written history with one
// hold of each kind, per-node calls and harness operations that must not count.
func TestFairnessAndErrors(t *testing.T) {
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
	fair, e := FairnessAndErrors(ops, 4)
	want := results.ErrorBreakdown{NotAcquired: 2, Lost: 2, ExpiredOnRelease: 1, Info: 2}
	if e != want {
		t.Errorf("errors = %+v, want %+v", e, want)
	}
	// Grants per client: 3, 2, 0, 0 → (5)²/(4·13).
	if w := 25.0 / 52; math.Abs(fair-w) > 1e-12 {
		t.Errorf("fairness = %v, want %v", fair, w)
	}
	if f, e := FairnessAndErrors(nil, 3); f != 0 || e != (results.ErrorBreakdown{}) {
		t.Errorf("empty history: fairness %v errors %+v, want 0 and none", f, e)
	}
}
