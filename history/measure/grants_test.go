package measure

import (
	"reflect"
	"testing"

	"github.com/lockbench/lockbench/history"
)

// TestGrants: grants come in completion order with their client, time
// and latency (first attempt after the previous grant to this one),
// whatever the order of the history's lines (clients hand theirs over in
// chunks); an unknown outcome is not a grant and does not end a wait.
func TestGrants(t *testing.T) {
	ms := int64(1e6)
	acq := func(client int, inv, done int64, r history.Result) history.Operation {
		return history.Operation{Client: client, Kind: history.Acquire, Key: "k", Depth: 1, Invoke: inv * ms, Complete: done * ms, Result: r}
	}
	// Client 1's chunk comes first in the file, then client 0's.
	ops := []history.Operation{
		acq(1, 3, 4, history.Fail), acq(1, 6, 9, history.OK), acq(1, 10, 11, history.OK),
		acq(0, 0, 1, history.Info), acq(0, 2, 5, history.OK), acq(0, 7, 8, history.Fail),
	}
	want := []Grant{{Client: 0, AtNs: 5 * ms, LatencyMs: 5}, {Client: 1, AtNs: 9 * ms, LatencyMs: 6}, {Client: 1, AtNs: 11 * ms, LatencyMs: 1}}
	if got := Grants(ops); !reflect.DeepEqual(got, want) {
		t.Errorf("Grants = %+v, want %+v", got, want)
	}
	if got := AcquireLatencies(ops); !reflect.DeepEqual(got, []float64{5, 6, 1}) {
		t.Errorf("AcquireLatencies = %v, want the grants' latencies", got)
	}
}
