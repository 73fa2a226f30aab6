package measure

import (
	"testing"

	"github.com/lockbench/lockbench/history"
)

// TestHoldRoundTrips: HoldCalls's rounds: a hold's count is its granting acquire's round
// trips plus its release's; failed attempts, per-node operations and
// holds not counted are left out.
func TestHoldRoundTrips(t *testing.T) {
	ops := []history.Operation{
		{Client: 1, Kind: history.Acquire, Key: "k", Depth: 1, Result: history.Fail, RoundTrips: 1, Invoke: 0, Complete: 1},
		{Client: 1, Kind: history.Acquire, Key: "k", Depth: 1, Hold: 1, Result: history.OK, RoundTrips: 1, Invoke: 2, Complete: 3},
		{Client: 1, Kind: history.Acquire, Key: "k", Node: "n1", Depth: 1, Hold: 1, Result: history.OK, RoundTrips: 9, Invoke: 2, Complete: 3},
		{Client: 1, Kind: history.Release, Key: "k", Depth: 1, Hold: 1, Result: history.OK, RoundTrips: 2, Invoke: 4, Complete: 5},
		{Client: 2, Kind: history.Acquire, Key: "k", Depth: 1, Hold: 2, Result: history.OK, Invoke: 6, Complete: 7},
		{Client: 2, Kind: history.Release, Key: "k", Depth: 1, Hold: 2, Result: history.OK, Invoke: 8, Complete: 9},
	}
	_, got := HoldCalls(ops)
	if len(got) != 1 || got[0].Ms != 3 || got[0].AtNs != 5 {
		t.Errorf("HoldCalls rounds = %+v, want one hold of 3 round trips at 5 ns", got)
	}
}
