package bench

import (
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
