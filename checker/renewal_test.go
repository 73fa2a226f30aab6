package checker

import (
	"testing"
	"time"

	"github.com/lockbench/lockbench/history"
)

// renewalHistory is one hold of client 0 on k from 10 ms to its release at
// 500 ms, with extra operations.
func renewalHistory(extra ...history.Operation) []history.Operation {
	ms := int64(time.Millisecond)
	ops := []history.Operation{
		{Client: 0, Kind: history.Acquire, Key: "k", Hold: 1, Token: "t1", Invoke: 5 * ms, Complete: 10 * ms, Result: history.OK},
		{Client: 0, Kind: history.Release, Key: "k", Hold: 1, Token: "t1", Invoke: 500 * ms, Complete: 501 * ms, Result: history.OK},
	}
	return append(ops, extra...)
}

// TestRenewal: a lost lease while the holder runs is a violation with its
// witness, unless a fault window (and one TTL after it) explains it, or the
// scenario keeps leases; a built-in's renewal lockbench ran late makes it
// inconclusive; the observer finding the key gone counts too.
func TestRenewal(t *testing.T) {
	ms := int64(time.Millisecond)
	h := history.Header{TTLMs: 100}
	lost := history.Operation{Client: 0, Stream: -1, Kind: history.Lost, Key: "k", Hold: 1, Token: "t1", Invoke: 200 * ms, Complete: 200 * ms, Result: history.OK}
	fault := history.Operation{Client: -1, Stream: -1, Kind: history.Nemesis, Invoke: 50 * ms, Complete: 150 * ms, Result: history.OK, Note: "x: y"}
	renewal := func(at int64) history.Operation {
		return history.Operation{Client: 0, Stream: -1, Kind: history.Extend, Key: "k", Hold: 1, Token: "t1", Invoke: at * ms, Complete: at*ms + ms, Result: history.OK}
	}
	gone := history.Operation{Client: -1, Stream: -1, Kind: history.Observe, Node: "n1", Key: "k", Value: -2, Invoke: 300 * ms, Complete: 301 * ms, Result: history.OK}
	for _, tt := range []struct {
		name string
		ops  []history.Operation
		o    RenewalOptions
		want Status
	}{
		{"no loss", renewalHistory(renewal(40), renewal(70)), RenewalOptions{}, OK},
		{"lost with no fault", renewalHistory(renewal(40), renewal(70), renewal(100), renewal(130), renewal(160), lost), RenewalOptions{}, Violated},
		{"lost within the fault's reach", renewalHistory(fault, lost), RenewalOptions{}, OK},
		{"lost in a fault that keeps leases", renewalHistory(fault, renewal(40), renewal(70), renewal(100), renewal(130), renewal(160), lost), RenewalOptions{KeepsLeases: true}, Violated},
		{"a built-in renewal lockbench ran late", renewalHistory(renewal(40), lost), RenewalOptions{HarnessRenews: true}, Inconclusive},
		{"an adapter's late renewal is the lock's", renewalHistory(renewal(40), lost), RenewalOptions{}, Violated},
		{"the observer found the key gone", renewalHistory(gone), RenewalOptions{}, Violated},
		{"lost after the release", renewalHistory(history.Operation{Client: 0, Stream: -1, Kind: history.Lost, Key: "k", Hold: 1, Invoke: 600 * ms, Complete: 600 * ms, Result: history.OK}), RenewalOptions{}, OK},
	} {
		r := Renewal(h, tt.ops, tt.o)
		if r.Status != tt.want {
			t.Errorf("%s: %s (%s), want %s", tt.name, r.Status, r.Message, tt.want)
		}
		if r.Status == Violated && (len(r.Witnesses.Renewal) != 1 || r.Witnesses.Total.Renewal != 1) {
			t.Errorf("%s: witnesses %+v, want one", tt.name, r.Witnesses.Renewal)
		}
	}
}
