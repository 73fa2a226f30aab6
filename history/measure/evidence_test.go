package measure

import (
	"fmt"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/history"
)

func TestEvidenceOfRecordedHistories(t *testing.T) {
	tests := []struct {
		file    string
		want    Evidence
		unknown float64 // UnknownShare
	}{
		// c1's failed attempt was in flight while c0 held: one chance.
		{"clean-sequential.jsonl", Evidence{Holds: 2, Keys: 1, Clients: 2, ChancesToOverlap: 1,
			Acquires: OutcomeCounts{OK: 2, Fail: 1}, Releases: OutcomeCounts{OK: 2},
			ResourceReads: 2, ResourceWrites: 2, Faults: 1, Probes: 1}, 0},
		// c0's acquire with unknown outcome spans c1's hold.
		{"info-acquire.jsonl", Evidence{Holds: 1, Keys: 1, Clients: 1, ChancesToOverlap: 1,
			Acquires: OutcomeCounts{OK: 1, Fail: 1, Info: 1}, Releases: OutcomeCounts{OK: 1},
			ResourceReads: 1, ResourceWrites: 1, AcquireTimeouts: 1}, 1.0 / 3},
		// c1's acquire met c0's paused hold; c0's own acquire came before c1's hold.
		{"overlap.jsonl", Evidence{Holds: 2, Keys: 1, Clients: 2, ChancesToOverlap: 1,
			Acquires: OutcomeCounts{OK: 2}, Releases: OutcomeCounts{OK: 2},
			ResourceReads: 2, ResourceWrites: 2, Faults: 1}, 0},
		// c2's slow acquire spans c1's hold; c1's acquire on the new primary
		// met c0's hold: two chances of five holds. The failover landed.
		{"slow-acquire-before-fault.jsonl", Evidence{Holds: 5, Keys: 1, Clients: 3, ChancesToOverlap: 2,
			Acquires: OutcomeCounts{OK: 5}, Releases: OutcomeCounts{OK: 4, Fail: 1},
			ResourceReads: 5, ResourceWrites: 5, Faults: 1, FaultsLanded: 1}, 0},
		{"fenced-stale-write-rejected.jsonl", Evidence{Holds: 2, Keys: 1, Clients: 2, ChancesToOverlap: 1,
			Acquires: OutcomeCounts{OK: 2}, Releases: OutcomeCounts{OK: 1, Fail: 1},
			ResourceReads: 2, ResourceWrites: 2, ResourceRejected: 1, Faults: 1}, 0},
		// No hold at all: a deadlock.
		{"deadlock-probe.jsonl", Evidence{Acquires: OutcomeCounts{Fail: 2, Info: 1}, Probes: 2}, 1.0 / 3},
		// Recorded: redsync at TTL 50 ms (0.05×TTL = 2.5 ms for the whole
		// call) under gc-pause, seed 100: one grant in 2 s, 714 of 719
		// attempts with an unknown outcome. Exclusion is ok on one hold:
		// evidence for nothing.
		{"redsync-gc-pause-ttl50ms-one-grant.jsonl", Evidence{Holds: 1, Keys: 1, Clients: 1, ChancesToOverlap: 1,
			Acquires: OutcomeCounts{OK: 1, Fail: 4, Info: 714}, Releases: OutcomeCounts{Info: 1},
			ResourceReads: 1, ResourceWrites: 1, Faults: 1, Probes: 1, AcquireTimeouts: 714}, 714.0 / 719},
		// Recorded: redlock with 256 clients on 16 keys (zipf): no grant,
		// every attempt timed out (info), and so did every per-node call
		// the recording kept.
		{"redlock-256-clients-no-grant.jsonl", Evidence{Acquires: OutcomeCounts{Info: 188}, Probes: 16, AcquireTimeouts: 188,
			NodeAcquires: OutcomeCounts{Info: 940}, NodeTimeouts: 940, Nodes: 5}, 1},
		// Nested acquires and releases are not counted; nobody tried while held.
		{"reentrancy-count-wrong.jsonl", Evidence{Holds: 2, Keys: 1, Clients: 2,
			Acquires: OutcomeCounts{OK: 2}, Releases: OutcomeCounts{OK: 2}}, 0},
	}
	for _, tt := range tests {
		t.Run(strings.TrimSuffix(tt.file, ".jsonl"), func(t *testing.T) {
			_, ops := load(t, tt.file)
			got := EvidenceOf(ops, nil)
			if got != tt.want {
				t.Errorf("evidence\n got %+v\nwant %+v", got, tt.want)
			}
			if u := got.UnknownShare(); u != tt.unknown {
				t.Errorf("UnknownShare = %v, want %v", u, tt.unknown)
			}
			if got.FaultsUnknown() != got.Faults-got.FaultsLanded-got.FaultsMissed {
				t.Errorf("FaultsUnknown = %d", got.FaultsUnknown())
			}
		})
	}
}

// TestChancesToOverlap checks the definition on small cases: an attempt in
// flight at any instant of [acquire complete, end of use] (closed) by
// another client counts; the holder's own attempts and attempts on other
// keys do not; a hold counts once however many attempts met it.
func TestChancesToOverlap(t *testing.T) {
	acq := func(client int, key string, hold int64, inv, comp int64, res history.Result) history.Operation {
		return history.Operation{Client: client, Stream: client, Kind: history.Acquire, Key: key, Hold: hold, Invoke: inv, Complete: comp, Result: res}
	}
	rel := func(client int, key string, hold int64, inv, comp int64) history.Operation {
		return history.Operation{Client: client, Stream: client, Kind: history.Release, Key: key, Hold: hold, Invoke: inv, Complete: comp, Result: history.OK}
	}
	// c0 holds k0 over [10, 20]: granted at 10, its write completes at 20.
	hold := []history.Operation{acq(0, "k0", 1, 5, 10, history.OK),
		{Client: 0, Stream: 0, Kind: history.Write, Key: "k0", Hold: 1, Invoke: 18, Complete: 20, Result: history.OK, Value: 1},
		rel(0, "k0", 1, 21, 22)}
	tests := []struct {
		name  string
		other []history.Operation
		want  int
	}{
		{"nobody else", nil, 0},
		{"attempt inside", []history.Operation{acq(1, "k0", 0, 12, 13, history.Fail)}, 1},
		{"attempt ends at the grant", []history.Operation{acq(1, "k0", 0, 8, 10, history.Fail)}, 1},
		{"attempt starts at the end of use", []history.Operation{acq(1, "k0", 0, 20, 22, history.Fail)}, 1},
		{"attempt ends before the grant", []history.Operation{acq(1, "k0", 0, 7, 9, history.Fail)}, 0},
		{"attempt starts after the end of use", []history.Operation{acq(1, "k0", 0, 21, 22, history.Fail)}, 0},
		{"blocking attempt spans the hold", []history.Operation{acq(1, "k0", 0, 1, 30, history.Info)}, 1},
		{"own attempt", []history.Operation{acq(0, "k0", 0, 12, 13, history.Fail)}, 0},
		{"other key", []history.Operation{acq(1, "k1", 0, 12, 13, history.Fail)}, 0},
		{"per-node call", []history.Operation{{Client: 1, Kind: history.Acquire, Key: "k0", Node: "n1", Invoke: 12, Complete: 13, Result: history.Fail}}, 0},
		{"two attempts, one hold", []history.Operation{acq(1, "k0", 0, 12, 13, history.Fail), acq(2, "k0", 0, 14, 15, history.Fail)}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ops := append(append([]history.Operation(nil), hold...), tt.other...)
			if got := EvidenceOf(ops, nil).ChancesToOverlap; got != tt.want {
				t.Errorf("ChancesToOverlap = %d, want %d", got, tt.want)
			}
		})
	}
}

// TestSplitVotes checks the per-call grouping of per-node acquires: a call
// that did not grant counts as a split vote when at least one and fewer
// than a quorum (Nodes/2+1) of its per-node acquires succeeded.
func TestSplitVotes(t *testing.T) {
	whole := func(client int, inv, comp int64, res history.Result) history.Operation {
		return history.Operation{Client: client, Stream: client, Kind: history.Acquire, Key: "k0", Depth: 1, Invoke: inv, Complete: comp, Result: res}
	}
	node := func(client int, n string, inv int64, res history.Result) history.Operation {
		return history.Operation{Client: client, Stream: -1, Kind: history.Acquire, Key: "k0", Node: n, Invoke: inv, Complete: inv + 1, Result: res}
	}
	votes := func(client int, inv int64, oks int) []history.Operation {
		var ops []history.Operation
		for i := range 5 {
			res := history.Fail
			if i < oks {
				res = history.OK
			}
			ops = append(ops, node(client, fmt.Sprintf("n%d", i+1), inv+1, res))
		}
		return ops
	}
	tests := []struct {
		name string
		ops  []history.Operation
		want int
	}{
		{"two of five, refused", append([]history.Operation{whole(0, 10, 20, history.Fail)}, votes(0, 10, 2)...), 1},
		{"two of five, unknown", append([]history.Operation{whole(0, 10, 20, history.Info)}, votes(0, 10, 2)...), 1},
		{"none of five: contention, not a split", append([]history.Operation{whole(0, 10, 20, history.Fail)}, votes(0, 10, 0)...), 0},
		{"three of five: granted", append([]history.Operation{whole(0, 10, 20, history.OK)}, votes(0, 10, 3)...), 0},
		{"votes of another call", append([]history.Operation{whole(0, 10, 20, history.Fail), whole(0, 30, 40, history.OK)}, votes(0, 30, 3)...), 0},
		{"votes of another client", append([]history.Operation{whole(0, 10, 20, history.Fail)}, votes(1, 10, 2)...), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := EvidenceOf(tt.ops, nil)
			if e.SplitVotes != tt.want {
				t.Errorf("SplitVotes = %d, want %d", e.SplitVotes, tt.want)
			}
			if e.Nodes != 5 {
				t.Errorf("Nodes = %d, want 5", e.Nodes)
			}
		})
	}
}

func TestEvidenceString(t *testing.T) {
	e := Evidence{Holds: 1, Keys: 1, Clients: 1, ChancesToOverlap: 1, Acquires: OutcomeCounts{OK: 1, Info: 3}, Faults: 2, FaultsLanded: 1}
	want := "1 hold by 1 client on 1 key, 1 with a chance to overlap; acquires 1 ok, 0 fail, 3 unknown (75.0%); 0 reads, 0 writes (0 rejected, 0 unknown); 2 faults (1 landed, 0 missed, 1 cannot tell)"
	if got := e.String(); got != want {
		t.Errorf("String() = %q\nwant %q", got, want)
	}
	e.AcquireTimeouts, e.Nodes, e.NodeAcquires, e.NodeTimeouts, e.SplitVotes = 3, 5, OutcomeCounts{OK: 4, Fail: 1, Info: 10}, 9, 1
	want += "; 3 acquires timed out; per-node acquires on 5 nodes: 4 ok, 1 fail, 10 unknown (9 timed out), 1 split vote"
	if got := e.String(); got != want {
		t.Errorf("String() = %q\nwant %q", got, want)
	}
}
