package checker

import (
	"strings"
	"testing"

	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/history/measure"
)

// A small vocabulary for synthetic histories of the contract checks; times
// are in ms since run start (float), converted to ns.

func msNs(t float64) int64 { return int64(t * 1e6) }

// lockOp is a client's whole-lock operation.
func lockOp(kind history.Kind, client int, key, token string, res history.Result, inv, comp float64) history.Operation {
	return history.Operation{Client: client, Stream: client, Kind: kind, Key: key, Token: token, Result: res, Invoke: msNs(inv), Complete: msNs(comp)}
}

func acq(client int, key, token string, res history.Result, inv, comp float64) history.Operation {
	return lockOp(history.Acquire, client, key, token, res, inv, comp)
}

// held is an ok acquire with a hold id.
func held(client int, hold int64, key, token string, inv, comp float64) history.Operation {
	op := acq(client, key, token, history.OK, inv, comp)
	op.Hold = hold
	return op
}

func rel(client int, hold int64, key, token string, res history.Result, inv, comp float64) history.Operation {
	op := lockOp(history.Release, client, key, token, res, inv, comp)
	op.Hold = hold
	return op
}

// obs is one node's answered read (token "" = absent, pttl -2 then).
func obs(node, key, token string, pttl int64, inv, comp float64) history.Operation {
	if token == "" {
		pttl = -2
	}
	return history.Operation{Client: -1, Stream: -1, Kind: history.Observe, Node: node, Key: key, Token: token, Value: pttl,
		Result: history.OK, Invoke: msNs(inv), Complete: msNs(comp)}
}

// obsInfo is a read a node did not answer.
func obsInfo(node, key string, inv, comp float64) history.Operation {
	return history.Operation{Client: -1, Stream: -1, Kind: history.Observe, Node: node, Key: key, Result: history.Info, Error: "timeout",
		Invoke: msNs(inv), Complete: msNs(comp)}
}

// nodeOp is a per-node call of a quorum lock.
func nodeOp(kind history.Kind, client int, node, key, token string, res history.Result, inv, comp float64) history.Operation {
	op := lockOp(kind, client, key, token, res, inv, comp)
	op.Node, op.Stream = node, -1
	return op
}

// replicaRead marks a read as made on a replica.
func replicaRead(op history.Operation) history.Operation {
	op.Note = history.ObservedOnReplica
	return op
}

func nemesis(note string, inv, comp float64) history.Operation {
	return history.Operation{Client: -1, Stream: -1, Kind: history.Nemesis, Note: note, Result: history.OK, Invoke: msNs(inv), Complete: msNs(comp)}
}

var hdr = history.Header{SchemaVersion: history.SchemaVersion, Strategy: "synthetic", Scenario: "test", Clients: 3, Keys: 1, TTLMs: 100, Fencing: "off"}

// contractCase is one synthetic history and what a check must say of it.
type contractCase struct {
	name   string
	ops    []history.Operation
	status Status
	// violations is the violation count; msg a substring of the message
	// ("" no constraint).
	violations int
	msg        string
}

func (c contractCase) check(t *testing.T, r Result) {
	t.Helper()
	if r.Status != c.status || r.Violations != c.violations {
		t.Errorf("%s: %s with %d violations (%s; %v), want %s with %d", c.name, r.Status, r.Violations, r.Message, r.Details, c.status, c.violations)
	}
	if c.msg != "" && !strings.Contains(r.Message, c.msg) {
		t.Errorf("%s: message %q lacks %q", c.name, r.Message, c.msg)
	}
	if r.Status == Violated && len(r.Details) == 0 {
		t.Errorf("%s: violated without details", c.name)
	}
}

func TestOrphans(t *testing.T) {
	granted := []history.Operation{held(0, 1, "k", "a", 0, 1), obs("n1", "k", "a", 99, 1.5, 1.6)}
	with := func(ops ...history.Operation) []history.Operation {
		return append(append([]history.Operation{}, granted...), ops...)
	}
	oneNode := hdr
	oneNode.Nodes = 1
	for _, c := range []contractCase{
		{name: "no observations", ops: []history.Operation{held(0, 1, "k", "a", 0, 1), acq(1, "k", "b", history.Fail, 1, 2)}, status: Skipped},
		{name: "clean: the failed acquire left nothing", ops: with(acq(1, "k", "b", history.Fail, 2, 3), obs("n1", "k", "a", 97, 4, 4.1)), status: OK},
		{name: "failed acquire's token kept", ops: with(acq(1, "k", "b", history.Fail, 2, 3), obs("n1", "k", "b", 98, 4, 4.1), obs("n1", "k", "", 0, 120, 121)),
			status: Violated, violations: 1},
		{name: "unknown acquire's token kept: a figure", ops: with(acq(1, "k", "b", history.Info, 2, 3), obs("n1", "k", "b", 98, 4, 4.1)),
			status: OK, msg: "1 orphans of acquires with an unknown outcome"},
		{name: "read while the failed acquire was in flight", ops: with(acq(1, "k", "b", history.Fail, 2, 5), obs("n1", "k", "b", 98, 3, 3.1), obs("n1", "k", "", 0, 6, 6.1)),
			status: OK},
		{name: "unattributed after a failed acquire", ops: with(acq(1, "k", "", history.Fail, 2, 3), obs("n1", "k", "zz", 98, 4, 4.1)), status: Violated, violations: 1},
		{name: "unattributed after an unknown acquire: a figure", ops: with(acq(2, "k", "", history.Info, 1.8, 1.9), acq(1, "k", "", history.Fail, 2, 3), obs("n1", "k", "zz", 98, 4, 4.1)),
			status: OK, msg: "1 orphans of acquires"},
		{name: "uncalibrated: no read matches a known token", ops: []history.Operation{held(0, 1, "k", "a", 0, 1), acq(1, "k", "", history.Fail, 2, 3), obs("n1", "k", "zz", 98, 4, 4.1)},
			status: OK, msg: "not attributed"},
		{name: "quorum lock: partial leftover, the lock's own call to that node unknown", ops: with(
			acq(1, "k", "b", history.Fail, 2, 3), nodeOp(history.Acquire, 1, "n2", "k", "b", history.Info, 2, 2.9),
			obs("n1", "k", "", 0, 4, 4.1), obs("n2", "k", "b", 98, 4, 4.1), obs("n3", "k", "", 0, 4, 4.1)),
			status: OK, msg: "excused partial ones"},
		{name: "quorum lock: partial leftover not undone", ops: with(
			acq(1, "k", "b", history.Fail, 2, 3), nodeOp(history.Acquire, 1, "n2", "k", "b", history.OK, 2, 2.9),
			obs("n1", "k", "", 0, 4, 4.1), obs("n2", "k", "b", 98, 4, 4.1), obs("n3", "k", "", 0, 4, 4.1)),
			status: Violated, violations: 1},
		{name: "quorum lock: partial leftover on a promoted node, the lock's call to the node it replaced unknown", ops: with(
			replicaRead(obs("n4", "k", "", 0, 1.7, 1.8)),
			acq(1, "k", "b", history.Fail, 2, 3), nodeOp(history.Acquire, 1, "n1", "k", "b", history.Info, 2, 2.9),
			obs("n1", "k", "", 0, 4, 4.1), obs("n2", "k", "", 0, 4, 4.1), obs("n3", "k", "", 0, 4, 4.1), obs("n4", "k", "b", 98, 4, 4.1)),
			status: OK, msg: "excused partial ones"},
		{name: "quorum lock: partial leftover on a promoted node, no call of the lock unknown", ops: with(
			replicaRead(obs("n4", "k", "", 0, 1.7, 1.8)),
			acq(1, "k", "b", history.Fail, 2, 3), nodeOp(history.Acquire, 1, "n1", "k", "b", history.OK, 2, 2.9),
			obs("n1", "k", "", 0, 4, 4.1), obs("n2", "k", "", 0, 4, 4.1), obs("n3", "k", "", 0, 4, 4.1), obs("n4", "k", "b", 98, 4, 4.1)),
			status: Violated, violations: 1},
		{name: "quorum lock: partial leftover during a fault", ops: with(
			acq(1, "k", "b", history.Fail, 2, 3), nemesis("partition: c1 cut from n2", 1, 50),
			obs("n1", "k", "", 0, 4, 4.1), obs("n2", "k", "b", 98, 4, 4.1), obs("n3", "k", "", 0, 4, 4.1)),
			status: OK},
		{name: "a replica's copy is no lock of its own", ops: with(acq(1, "k", "b", history.Info, 2, 3), obs("n1", "k", "", 0, 4, 4.1),
			replicaRead(obs("n2", "k", "b", 98, 4, 4.1)), acq(2, "k", "c", history.Fail, 5, 6), obs("n1", "k", "", 0, 7, 7.1)),
			status: OK},
		{name: "a promoted replica holds the lock", ops: with(acq(1, "k", "b", history.Fail, 2, 3), obsInfo("n1", "k", 4, 14), obs("n2", "k", "b", 98, 4, 4.1)),
			status: Violated, violations: 1},
		{name: "quorum lock: a majority kept it (the lock held)", ops: with(
			acq(1, "k", "b", history.Fail, 2, 3), nemesis("partition", 1, 50),
			obs("n1", "k", "b", 98, 4, 4.1), obs("n2", "k", "b", 98, 4, 4.1), obsInfo("n3", "k", 4, 14)),
			status: Violated, violations: 1},
	} {
		h := hdr
		if strings.Contains(c.name, "replica") {
			h = oneNode
		}
		r, _ := Orphans(h, c.ops)
		c.check(t, r)
	}
}

// TestOrphanWitness checks the witness's fields and its line.
func TestOrphanWitness(t *testing.T) {
	ops := []history.Operation{held(0, 1, "k", "a", 0, 1), obs("n1", "k", "a", 99, 1.5, 1.6),
		acq(1, "k", "b", history.Fail, 2, 3), obs("n1", "k", "b", 98, 4, 4.1), obs("n1", "k", "b", 50, 50, 50.1), obs("n1", "k", "", 0, 120, 121)}
	r, fig := Orphans(hdr, ops)
	if r.Status != Violated || len(r.Witnesses.Orphans) != 1 || r.Witnesses.Total.Orphans != 1 || fig.Orphans != 0 {
		t.Fatalf("%+v %+v", r, fig)
	}
	w := r.Witnesses.Orphans[0]
	if w.Acquire == nil || w.Acquire.Client != 1 || w.FirstSeenNs != msNs(4) || w.LastSeenNs != msNs(50) || w.GoneNs != msNs(121) ||
		w.PTTLMs != 50 || w.FromNs != msNs(2) || w.ToNs != msNs(121) || strings.Join(w.Nodes, ",") != "n1" || !w.Quorum {
		t.Errorf("witness %+v", w)
	}
	if s := w.String(); !strings.Contains(s, `token "b" of c1's acquire at [2.000, 3.000] ms, which said fail, held on n1 (the lock held)`) || !strings.Contains(s, "read gone at 121.000 ms") {
		t.Errorf("line %q", s)
	}
}

func TestObservedEvidence(t *testing.T) {
	ops := []history.Operation{held(0, 1, "k", "a", 0, 1),
		acq(1, "k", "b", history.Fail, 2, 3), obs("n1", "k", "a", 97, 4, 4.1), // observed
		acq(2, "k", "c", history.Fail, 5, 6), obs("n1", "k", "zz", 97, 80, 80.1), // read too late (> TTL/2)
		obsInfo("n1", "k", 90, 91)}
	e := measure.EvidenceOf(ops, nil)
	observedEvidence(&e, hdr, ops)
	if e.Observations.OK != 2 || e.Observations.Info != 1 || e.FailedAcquiresObserved != 1 || e.ObservedTokens != 2 || e.ObservedKnownTokens != 1 {
		t.Errorf("%+v", e)
	}
}

func ext(client int, key, token string, res history.Result, inv, comp float64) history.Operation {
	op := lockOp(history.Extend, client, key, token, res, inv, comp)
	op.Stream = -1
	return op
}

func lost(client int, hold int64, key, token string, at float64) history.Operation {
	op := lockOp(history.Lost, client, key, token, history.OK, at, at)
	op.Stream, op.Hold = -1, hold
	return op
}

func TestExtends(t *testing.T) {
	hold := []history.Operation{held(0, 1, "k", "a", 0, 1)}
	with := func(ops ...history.Operation) []history.Operation {
		return append(append([]history.Operation{}, hold...), ops...)
	}
	for _, c := range []contractCase{
		{name: "no extends", ops: with(rel(0, 1, "k", "a", history.OK, 10, 11)), status: Skipped},
		{name: "extends while held", ops: with(ext(0, "k", "a", history.OK, 3, 4), ext(0, "k", "a", history.OK, 6, 7), rel(0, 1, "k", "a", history.OK, 10, 11)), status: OK},
		{name: "an extend in flight at the release", ops: with(ext(0, "k", "a", history.OK, 9, 12), rel(0, 1, "k", "a", history.OK, 10, 11)), status: OK},
		{name: "extend after the release", ops: with(rel(0, 1, "k", "a", history.OK, 10, 11), ext(0, "k", "a", history.Fail, 12, 13)), status: Violated, violations: 1},
		{name: "after a failed release: not released", ops: with(rel(0, 1, "k", "a", history.Fail, 10, 11), ext(0, "k", "a", history.Fail, 12, 13)), status: OK},
		{name: "owner token, acquired again", ops: with(rel(0, 1, "k", "a", history.OK, 10, 11), held(0, 2, "k", "a", 12, 13), ext(0, "k", "a", history.OK, 14, 15)), status: OK},
		{name: "another client's token", ops: with(rel(0, 1, "k", "a", history.OK, 10, 11), held(1, 2, "k", "b", 12, 13), ext(1, "k", "b", history.OK, 14, 15)), status: OK},
	} {
		c.check(t, Extends(hdr, c.ops))
	}
	r := Extends(hdr, with(rel(0, 1, "k", "a", history.OK, 10, 11), ext(0, "k", "a", history.Fail, 12, 13)))
	if len(r.Witnesses.Extends) != 1 || !strings.Contains(r.Details[0], `c0 extended token "a" at [12.000, 13.000] ms (fail), after its release completed ok at 11.000 ms`) {
		t.Errorf("%+v", r)
	}
}

func TestLost(t *testing.T) {
	renewing := hdr
	renewing.Renewal = true
	plain := hdr
	// TTL 100 ms: the bound is 150 ms.
	hold := []history.Operation{held(0, 1, "k", "a", 0, 1), obs("n1", "k", "a", 99, 2, 2.1)}
	with := func(ops ...history.Operation) []history.Operation {
		return append(append([]history.Operation{}, hold...), ops...)
	}
	renewed := func(until float64) []history.Operation { // a renewal every 30 ms
		var ops []history.Operation
		for t := 30.0; t <= until; t += 30 {
			ops = append(ops, ext(0, "k", "a", history.OK, t, t+1))
		}
		return ops
	}
	for _, c := range []struct {
		contractCase
		h history.Header
	}{
		{contractCase{name: "no renewal claimed, no lost", ops: with(rel(0, 1, "k", "a", history.OK, 10, 11)), status: Skipped}, plain},
		{contractCase{name: "lost after release, no renewal claimed", ops: with(rel(0, 1, "k", "a", history.OK, 10, 11), lost(0, 1, "k", "a", 20)), status: Violated, violations: 1}, plain},
		{contractCase{name: "lost before release", ops: with(lost(0, 1, "k", "a", 9), rel(0, 1, "k", "a", history.Fail, 10, 11)), status: OK}, plain},
		{contractCase{name: "lost of a new hold with the owner's token", ops: with(rel(0, 1, "k", "a", history.OK, 10, 11), held(0, 2, "k", "a", 12, 13), lost(0, 2, "k", "a", 20)), status: OK}, plain},
		{contractCase{name: "renewed all along", ops: append(with(renewed(300)...), rel(0, 1, "k", "a", history.OK, 320, 321)), status: OK, msg: "0 of 1 renewed hold"}, renewing},
		{contractCase{name: "renewals stop, lost in time", ops: append(with(renewed(60)...), lost(0, 1, "k", "a", 200), rel(0, 1, "k", "a", history.Fail, 400, 401)), status: OK, msg: "1 of 1 renewed hold"}, renewing},
		{contractCase{name: "renewals stop, lost late", ops: append(with(renewed(60)...), lost(0, 1, "k", "a", 350), rel(0, 1, "k", "a", history.Fail, 400, 401)), status: Violated, violations: 1}, renewing},
		{contractCase{name: "renewals stop, never lost", ops: append(with(renewed(60)...), rel(0, 1, "k", "a", history.Fail, 400, 401)), status: Violated, violations: 1}, renewing},
		{contractCase{name: "renewals stop, released in time", ops: append(with(renewed(60)...), rel(0, 1, "k", "a", history.Fail, 250, 251)), status: OK}, renewing},
		{contractCase{name: "a fault in force moves the deadline", ops: append(with(renewed(60)...), nemesis("gc-pause: c0", 100, 300), lost(0, 1, "k", "a", 350), rel(0, 1, "k", "a", history.Fail, 400, 401)), status: OK}, renewing},
		{contractCase{name: "key read gone while renewed invisibly, never lost", ops: with(obs("n1", "k", "", 0, 50, 50.5), rel(0, 1, "k", "a", history.Fail, 400, 401)), status: Violated, violations: 1}, renewing},
		{contractCase{name: "key read taken, lost in time", ops: with(obs("n1", "k", "b", 90, 50, 50.5), lost(0, 1, "k", "a", 120), rel(0, 1, "k", "a", history.Fail, 400, 401)), status: OK}, renewing},
		{contractCase{name: "key read gone, then the holder's again", ops: with(obs("n1", "k", "", 0, 50, 50.5), obs("n1", "k", "a", 90, 80, 80.5), rel(0, 1, "k", "a", history.OK, 400, 401)), status: OK}, renewing},
		{contractCase{name: "renewal claimed, nothing to time by", ops: []history.Operation{held(0, 1, "k", "a", 0, 1), rel(0, 1, "k", "a", history.OK, 400, 401)}, status: OK, msg: "timeliness not judged"}, renewing},
	} {
		c.check(t, Lost(c.h, c.ops))
	}
}

// TestReasons: a failed release's stated reason held against the
// observer's last read before it and what the history allows meanwhile.
func TestReasons(t *testing.T) {
	// TTL 100 ms. c0 holds k with token a from 0 ms; reads at 50 ms.
	hold := []history.Operation{held(0, 1, "k", "a", 0, 1)}
	said := func(reason string, inv float64) history.Operation {
		op := rel(0, 1, "k", "a", history.Fail, inv, inv+1)
		op.Reason = reason
		return op
	}
	with := func(ops ...history.Operation) []history.Operation {
		return append(append([]history.Operation{}, hold...), ops...)
	}
	for _, c := range []contractCase{
		{name: "no reason stated", ops: with(obs("n1", "k", "", 0, 50, 50.5), rel(0, 1, "k", "a", history.Fail, 150, 151)), status: Skipped},
		{name: "taken, the key read gone, nobody acquired", ops: with(obs("n1", "k", "", 0, 110, 110.5), said("taken", 150)), status: Violated, violations: 1},
		{name: "taken, own token read, expired before the call", ops: with(obs("n1", "k", "a", 40, 50, 50.5), said("taken", 150)), status: Violated, violations: 1},
		{name: "taken, own token read, may still hold", ops: with(obs("n1", "k", "a", 40, 50, 50.5), said("taken", 80)), status: Violated, violations: 1},
		{name: "expired, own token read, expired before the call", ops: with(obs("n1", "k", "a", 40, 50, 50.5), said("expired", 150)), status: OK, msg: "1 of 1 failed"},
		{name: "expired, own token read with time to live", ops: with(obs("n1", "k", "a", 90, 50, 50.5), said("expired", 80)), status: Violated, violations: 1},
		{name: "taken, another owner granted meanwhile", ops: with(obs("n1", "k", "", 0, 110, 110.5), acq(1, "k", "b", history.OK, 120, 121), said("taken", 150)), status: OK},
		{name: "taken, another owner's unknown acquire a TTL before", ops: with(obs("n1", "k", "", 0, 110, 110.5), acq(1, "k", "b", history.Info, 60, 70), said("taken", 150)), status: OK},
		{name: "taken, another owner granted and released before the call", ops: with(obs("n1", "k", "", 0, 110, 110.5), acq(1, "k", "b", history.OK, 120, 121), rel(1, 0, "k", "b", history.OK, 130, 131), said("taken", 150)), status: Violated, violations: 1},
		{name: "taken, another owner released during the call", ops: with(obs("n1", "k", "", 0, 110, 110.5), acq(1, "k", "b", history.OK, 120, 121), rel(1, 0, "k", "b", history.OK, 150, 151), said("taken", 150)), status: OK},
		{name: "taken, another owner's token read, released before the call", ops: with(obs("n1", "k", "b", 90, 110, 110.5), rel(1, 0, "k", "b", history.OK, 120, 121), said("taken", 150)), status: Violated, violations: 1},
		{name: "taken, only refused acquires meanwhile", ops: with(obs("n1", "k", "", 0, 110, 110.5), acq(1, "k", "", history.Fail, 120, 121), said("taken", 150)), status: Violated, violations: 1},
		{name: "taken, another owner's token read", ops: with(obs("n1", "k", "b", 90, 110, 110.5), said("taken", 150)), status: OK},
		{name: "taken, a server fault in between", ops: with(obs("n1", "k", "", 0, 110, 110.5), nemesis("node-restart: n1", 120, 130), said("taken", 150)), status: OK, msg: "0 of 1"},
		{name: "taken, a client fault in between", ops: with(obs("n1", "k", "", 0, 110, 110.5), nemesis("long-cs: c0", 20, 140), said("taken", 150)), status: Violated, violations: 1},
		{name: "taken, no read before the call", ops: with(said("taken", 150), obs("n1", "k", "", 0, 160, 160.5)), status: OK, msg: "0 of 1"},
	} {
		r, _ := Reasons(hdr, c.ops)
		c.check(t, r)
	}
}

// TestSharedKeys: with shared keys (other client hosts used the keys at
// the same time, Header.SharedKeys), a token on the server that no acquire
// of the history stated may be another host's: the orphan check does not
// attribute it, while a token a failed acquire of this history stated is
// still an orphan; the stated reasons of failed releases are not judged
// (other hosts' acquires and releases are out of sight).
func TestSharedKeys(t *testing.T) {
	shared := hdr
	shared.SharedKeys = true
	granted := []history.Operation{held(0, 1, "k", "a", 0, 1), obs("n1", "k", "a", 99, 1.5, 1.6)}
	with := func(ops ...history.Operation) []history.Operation {
		return append(append([]history.Operation{}, granted...), ops...)
	}
	taken := rel(0, 1, "k", "a", history.Fail, 150, 151)
	taken.Reason = "taken"
	for _, c := range []struct {
		contractCase
		check func(history.Header, []history.Operation) Result
	}{
		{contractCase{name: "orphans: another host's token after a failed acquire", ops: with(acq(1, "k", "", history.Fail, 2, 3), obs("n1", "k", "zz", 98, 4, 4.1)),
			status: OK, msg: "1 tokens read on the servers that no acquire of this history stated not attributed (shared keys"}, orphans},
		{contractCase{name: "orphans: this host's failed acquire's token kept", ops: with(acq(1, "k", "b", history.Fail, 2, 3), obs("n1", "k", "b", 98, 4, 4.1), obs("n1", "k", "", 0, 120, 121)),
			status: Violated, violations: 1}, orphans},
		{contractCase{name: "reasons: taken, the key read gone, nobody of this host acquired", ops: []history.Operation{held(0, 1, "k", "a", 0, 1), obs("n1", "k", "", 0, 110, 110.5), taken},
			status: Skipped, msg: "with shared keys"}, reasons},
	} {
		c.contractCase.check(t, c.check(shared, c.ops))
		if c.status != Violated {
			if r := c.check(hdr, c.ops); r.Status != Violated {
				t.Errorf("%s: without shared keys %s (%s), want violated: the case must show what shared keys change", c.name, r.Status, r.Message)
			}
		}
	}
}

func orphans(h history.Header, ops []history.Operation) Result { r, _ := Orphans(h, ops); return r }
func reasons(h history.Header, ops []history.Operation) Result { r, _ := Reasons(h, ops); return r }
