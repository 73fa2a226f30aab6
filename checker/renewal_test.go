package checker

import (
	"slices"
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
// scenario keeps leases; a built-in's renewal lockbench ran late, or
// whose calls timed out unanswered for a TTL, makes it inconclusive; the
// observer finding the key gone counts too.
func TestRenewal(t *testing.T) {
	ms := int64(time.Millisecond)
	h := history.Header{TTLMs: 100}
	lost := history.Operation{Client: 0, Stream: -1, Kind: history.Lost, Key: "k", Hold: 1, Token: "t1", Invoke: 200 * ms, Complete: 200 * ms, Result: history.OK}
	fault := history.Operation{Client: -1, Stream: -1, Kind: history.Nemesis, Invoke: 50 * ms, Complete: 150 * ms, Result: history.OK, Note: "x: y"}
	renewal := func(at int64) history.Operation {
		return history.Operation{Client: 0, Stream: -1, Kind: history.Extend, Key: "k", Hold: 1, Token: "t1", Invoke: at * ms, Complete: at*ms + ms, Result: history.OK}
	}
	unanswered := func(at int64) history.Operation {
		op := renewal(at)
		op.Complete, op.Result, op.Error = at*ms+30*ms, history.Info, "i/o timeout"
		return op
	}
	slowFail := func(at, done int64) history.Operation {
		op := renewal(at)
		op.Complete, op.Result = done*ms, history.Fail
		return op
	}
	ownError := func(at int64) history.Operation {
		op := renewal(at)
		op.Result, op.Error = history.Info, "ERR Error running script: attempt to compare nil with number"
		return op
	}
	failed := func(at int64) history.Operation {
		op := renewal(at)
		op.Result = history.Fail
		return op
	}
	// slowGrant is the hold granted by a call of 61 ms (TTL 100 ms),
	// halfGrant by one of 50 ms; lostAt is its loss seen at once.
	slowGrant := func() []history.Operation {
		ops := renewalHistory()
		ops[0].Invoke, ops[0].Complete = 10*ms, 71*ms
		return ops
	}
	halfGrant := func() []history.Operation {
		ops := renewalHistory()
		ops[0].Invoke, ops[0].Complete = 21*ms, 71*ms
		return ops
	}
	lostAt := func(at int64) history.Operation {
		op := lost
		op.Invoke, op.Complete = at*ms, at*ms
		return op
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
		{"a built-in's renewals timed out unanswered", renewalHistory(renewal(40), unanswered(70), unanswered(105), failed(145)), RenewalOptions{HarnessRenews: true}, Inconclusive},
		{"a built-in's renewal timed out, the next failed past the lease", renewalHistory(renewal(40), unanswered(70), slowFail(130, 150)), RenewalOptions{HarnessRenews: true}, Inconclusive},
		{"a built-in's renewal failed while the lease lived", renewalHistory(renewal(40), failed(70), unanswered(105), failed(145)), RenewalOptions{HarnessRenews: true}, Violated},
		{"a built-in's renewal failed on time", renewalHistory(renewal(40), renewal(70), failed(100)), RenewalOptions{HarnessRenews: true}, Violated},
		{"a built-in's grant call took more than half the TTL, lost at once", append(slowGrant(), lostAt(72)), RenewalOptions{HarnessRenews: true}, Inconclusive},
		{"an adapter's grant call took more than half the TTL: the lock's", append(slowGrant(), lostAt(72)), RenewalOptions{}, Violated},
		{"a built-in's grant call took half the TTL, lost at once", append(halfGrant(), lostAt(72)), RenewalOptions{HarnessRenews: true}, Violated},
		{"a built-in's renewals failed with its own error", renewalHistory(renewal(40), ownError(70), ownError(105), failed(145)), RenewalOptions{HarnessRenews: true}, Violated},
		{"an adapter's renewals timed out: the lock's", renewalHistory(renewal(40), unanswered(70), unanswered(105), failed(145)), RenewalOptions{}, Violated},
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

// TestRenewalFaultBetweenHeldAndGone: a fault that struck between the
// hold's last evidence that its key was its own (the grant, a renewal
// that said ok, an observe round that found its token) and the operation
// that saw the loss explains the loss, even when that operation began
// before the fault's window opened or came after its reach; a fault
// before the last evidence (past its reach) or after the loss explains
// nothing. The planted hold runs beside a synthetic history of a correct
// lock (synth), whose holds lose nothing.
func TestRenewalFaultBetweenHeldAndGone(t *testing.T) {
	h, base, _ := synthHistory(synthSpec{ops: 400, keys: 2, clients: 4, seed: 1})
	var b int64
	for _, op := range base {
		b = max(b, op.Complete)
	}
	ms := int64(time.Millisecond)
	at := func(t int64) int64 { return b + t*ms }
	const c, hold, key, token = 99, int64(1 << 40), "lb:w", "w1"
	planted := []history.Operation{
		{Client: c, Stream: c, Kind: history.Acquire, Key: key, Hold: hold, Token: token, Invoke: at(10), Complete: at(11), Result: history.OK},
		{Client: c, Stream: c, Kind: history.Release, Key: key, Hold: hold, Token: token, Invoke: at(200), Complete: at(201), Result: history.OK},
	}
	read := func(from, to int64, tok string) history.Operation {
		v := int64(50)
		if tok == "" {
			v = -2
		}
		return history.Operation{Client: -1, Stream: -1, Kind: history.Observe, Node: "n1", Key: key, Token: tok, Value: v, Invoke: at(from), Complete: at(to), Result: history.OK}
	}
	renewal := func(from int64, r history.Result) history.Operation {
		return history.Operation{Client: c, Stream: -1, Kind: history.Extend, Key: key, Hold: hold, Token: token, Invoke: at(from), Complete: at(from + 1), Result: r}
	}
	fault := func(from, to int64) history.Operation {
		return history.Operation{Client: -1, Stream: -1, Kind: history.Nemesis, Invoke: at(from), Complete: at(to), Result: history.OK, Note: "node-restart: n1"}
	}
	lost := history.Operation{Client: c, Stream: -1, Kind: history.Lost, Key: key, Hold: hold, Token: token, Invoke: at(90), Complete: at(90), Result: history.OK}
	held := []history.Operation{read(20, 21, token), read(40, 41, token), read(60, 61, token), renewal(40, history.OK), renewal(70, history.OK)}
	o := RenewalOptions{Reach: 10 * time.Millisecond}
	for _, tt := range []struct {
		name  string
		extra []history.Operation
		want  Status
	}{
		{"none lost", nil, OK},
		{"gone read invoked before the fault's window, answered after it", []history.Operation{read(80, 120, ""), fault(90, 100)}, OK},
		{"fault between the last held read and the gone read, past its reach", []history.Operation{fault(65, 66), read(80, 81, "")}, OK},
		{"gone read with no fault", []history.Operation{read(80, 81, "")}, Violated},
		{"fault after the gone read", []history.Operation{read(80, 81, ""), fault(150, 160)}, Violated},
		{"fault before the last held evidence, past its reach", []history.Operation{fault(20, 25), read(80, 81, "")}, Violated},
		{"lost after a fault between its last good renewal and the lost", []history.Operation{fault(72, 73), lost}, OK},
		{"lost with no fault", []history.Operation{lost}, Violated},
		{"lost after a fault before its last good renewal", []history.Operation{fault(50, 55), lost}, Violated},
		{"renewal failed after a fault between it and the last good one", []history.Operation{fault(75, 76), renewal(100, history.Fail)}, OK},
		{"renewal failed with no fault", []history.Operation{renewal(100, history.Fail)}, Violated},
	} {
		ops := slices.Concat(base, planted, held, tt.extra)
		r := Renewal(h, ops, o)
		if r.Status != tt.want {
			t.Errorf("%s: %s (%s), want %s", tt.name, r.Status, r.Message, tt.want)
			continue
		}
		if r.Status == Violated && (len(r.Witnesses.Renewal) != 1 || r.Witnesses.Renewal[0].Hold != hold) {
			t.Errorf("%s: witnesses %+v, want one of the planted hold", tt.name, r.Witnesses.Renewal)
		}
	}
}
