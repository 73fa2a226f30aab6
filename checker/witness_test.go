package checker

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/checker/witness"
	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/history/measure"
)

// nsOf converts ms to ns since run start, for the tables below.
func nsOf(ms float64) int64 { return int64(math.Round(ms * 1e6)) }

// overlapWant is the expected part of an Overlap: keys, clients, holds and
// the interval both held (ms).
type overlapWant struct {
	key          string
	a, b         [2]int64 // client, hold
	from, to     float64
	releaseKnown bool // A's release completion is bounded
}

// resourceWant is the expected part of a ResourceWitness.
type resourceWant struct {
	kind      witness.ResourceWitnessKind
	writer    [2]int64 // client, hold of Write (0, 0 for none)
	readAtMs  float64  // completion of Read (-1: none)
	overwrote int64    // hold of Overwrote (-1: none)
	current   int64
	fencedBy  int64 // hold of FencedBy (-1: none)
	from, to  float64
}

func TestWitnessesOfRecordedHistories(t *testing.T) {
	tests := []struct {
		file       string
		exclusion  []overlapWant
		resource   []resourceWant
		fencing    [][2]int64 // grant hold, earlier hold
		reentrancy []int64    // hold of each wrong count
		liveness   []string   // keys
	}{
		{file: "clean-sequential.jsonl"},
		{file: "back-to-back.jsonl"},
		{file: "overlap.jsonl",
			exclusion: []overlapWant{{"k0", [2]int64{0, 1}, [2]int64{1, 2}, 4, 7, true}},
			resource:  []resourceWant{{witness.LostUpdate, [2]int64{0, 1}, 1.2, 2, 1, -1, 9, 10}}},
		{file: "fenced-stale-write-rejected.jsonl",
			exclusion: []overlapWant{{"k0", [2]int64{0, 1}, [2]int64{1, 2}, 13, 15, true}}},
		{file: "fenced-writes-lost-update.jsonl",
			exclusion: []overlapWant{{"k0", [2]int64{0, 1}, [2]int64{1, 2}, 13, 21, true}},
			resource:  []resourceWant{{witness.LostUpdate, [2]int64{1, 2}, 14, 1, 1, -1, 25, 26}}},
		{file: "fenced-stale-write-accepted.jsonl",
			exclusion: []overlapWant{{"k0", [2]int64{0, 1}, [2]int64{1, 2}, 13, 15, true}},
			resource:  []resourceWant{{witness.StaleWrite, [2]int64{0, 1}, 31, -1, 0, 2, 31, 32}}},
		{file: "stale-read.jsonl",
			resource: []resourceWant{{witness.NotLinearizable, [2]int64{}, -1, -1, 0, -1, 1, 9}}},
		// The slow acquire of c2 took effect after c1's whole hold: no
		// pair there; the failover's lost lock is one pair and one lost
		// update, and the lost fencing counter gives c1 fence 4 again.
		{file: "slow-acquire-before-fault.jsonl",
			exclusion: []overlapWant{{"lb:k0", [2]int64{0, 4}, [2]int64{1, 5}, 508, 513.5, true}},
			resource:  []resourceWant{{witness.LostUpdate, [2]int64{1, 5}, 508.5, 4, 4, -1, 513.6, 513.8}},
			fencing:   [][2]int64{{5, 4}}},
		{file: "fence-not-increasing.jsonl", fencing: [][2]int64{{2, 1}, {3, 1}}},
		{file: "reentrancy-count-wrong.jsonl", reentrancy: []int64{1}},
		{file: "deadlock-probe.jsonl", liveness: []string{"k0"}},
	}
	for _, tt := range tests {
		t.Run(strings.TrimSuffix(tt.file, ".jsonl"), func(t *testing.T) {
			h, ops := load(t, tt.file)
			r := Check(h, ops, Options{})
			w := r.Witnesses()

			if len(w.Exclusion) != len(tt.exclusion) || w.Total.Exclusion != len(tt.exclusion) {
				t.Fatalf("exclusion witnesses %+v (total %d), want %d", w.Exclusion, w.Total.Exclusion, len(tt.exclusion))
			}
			for i, want := range tt.exclusion {
				g := w.Exclusion[i]
				if g.Key != want.key || [2]int64{int64(g.A.Client), g.A.Hold} != want.a || [2]int64{int64(g.B.Client), g.B.Hold} != want.b ||
					g.BothFromNs != nsOf(want.from) || g.BothToNs != nsOf(want.to) || (g.A.ReleaseCompleteNs >= 0) != want.releaseKnown {
					t.Errorf("exclusion witness %d: %+v, want %+v", i, g, want)
				}
				// The interval both held is inside both holds.
				for _, hr := range []witness.HoldRef{g.A, g.B} {
					if g.BothFromNs < hr.AcquireCompleteNs || g.BothToNs > hr.EndOfUseNs || g.BothFromNs > g.BothToNs {
						t.Errorf("exclusion witness %d: both held [%d, %d] not inside hold %+v", i, g.BothFromNs, g.BothToNs, hr)
					}
				}
			}

			if len(w.Resource) != len(tt.resource) || w.Total.Resource != len(tt.resource) || r.Resource.Violations != len(tt.resource) {
				t.Fatalf("resource witnesses %s (total %d, violations %d), want %d", fmtResource(w.Resource), w.Total.Resource, r.Resource.Violations, len(tt.resource))
			}
			for i, want := range tt.resource {
				g := w.Resource[i]
				bad := g.Kind != want.kind || g.FromNs != nsOf(want.from) || g.ToNs != nsOf(want.to) || g.Current != want.current
				if want.writer != [2]int64{} {
					bad = bad || g.Write == nil || [2]int64{int64(g.Write.Client), g.Write.Hold} != want.writer
				}
				bad = bad || (g.Read == nil) != (want.readAtMs < 0) || g.Read != nil && g.Read.Complete != nsOf(want.readAtMs)
				bad = bad || (g.Overwrote == nil) != (want.overwrote < 0) || g.Overwrote != nil && g.Overwrote.Hold != want.overwrote
				bad = bad || (g.FencedBy == nil) != (want.fencedBy < 0) || g.FencedBy != nil && g.FencedBy.Hold != want.fencedBy
				if bad {
					t.Errorf("resource witness %d: %s, want %+v", i, fmtResource(w.Resource[i:i+1]), want)
				}
			}

			if len(w.Fencing) != len(tt.fencing) || w.Total.Fencing != len(tt.fencing) {
				t.Fatalf("fencing witnesses %+v, want %v", w.Fencing, tt.fencing)
			}
			for i, want := range tt.fencing {
				if g := w.Fencing[i]; [2]int64{g.Grant.Hold, g.Earlier.Hold} != want {
					t.Errorf("fencing witness %d: %+v, want grant h%d over h%d", i, g, want[0], want[1])
				}
			}
			if len(w.Reentrancy) != len(tt.reentrancy) {
				t.Fatalf("reentrancy witnesses %+v, want holds %v", w.Reentrancy, tt.reentrancy)
			}
			for i, want := range tt.reentrancy {
				if g := w.Reentrancy[i]; g.Op.Hold != want || g.Op.Count == g.Want {
					t.Errorf("reentrancy witness %d: %+v, want hold %d with a wrong count", i, g, want)
				}
			}
			var keys []string
			for _, lw := range w.Liveness {
				keys = append(keys, lw.Key)
			}
			if fmt.Sprint(keys) != fmt.Sprint(tt.liveness) && len(keys)+len(tt.liveness) > 0 {
				t.Errorf("liveness witnesses on %v, want %v", keys, tt.liveness)
			}

			// Details are the witnesses' lines, and each check's witness
			// count is its violation count.
			for name, res := range map[string]Result{"exclusion": r.Exclusion, "resource": r.Resource, "fencing": r.Fencing, "reentrancy": r.Reentrancy, "liveness": r.Liveness} {
				lines := witnessLines(res.Witnesses)
				if res.Status != Violated {
					if len(lines) > 0 {
						t.Errorf("%s is %s but carries witnesses %q", name, res.Status, lines)
					}
					continue
				}
				if fmt.Sprint(lines) != fmt.Sprint(res.Details) {
					t.Errorf("%s details %q, want the witnesses' lines %q", name, res.Details, lines)
				}
			}
		})
	}
}

// witnessLines are the String of every witness in w, in order.
func witnessLines(w witness.Witnesses) []string {
	var out []string
	for _, x := range w.Exclusion {
		out = append(out, x.String())
	}
	for _, x := range w.Resource {
		out = append(out, x.String())
	}
	for _, x := range w.Fencing {
		out = append(out, x.String())
	}
	for _, x := range w.Reentrancy {
		out = append(out, x.String())
	}
	for _, x := range w.Liveness {
		out = append(out, x.String())
	}
	return out
}

func fmtResource(ws []witness.ResourceWitness) string {
	var b strings.Builder
	for _, w := range ws {
		fmt.Fprintf(&b, "[%s] ", w.String())
	}
	return b.String()
}

// TestWitnessesBounded: a history with more overlapping pairs than
// MaxWitnesses keeps the first MaxWitnesses, counts all, and its Details
// stop at maxDetails lines saying how many were left out.
func TestWitnessesBounded(t *testing.T) {
	h, ops, planted := synthHistory(synthSpec{ops: 40000, keys: 1, clients: 16, plants: 150, seed: 9})
	r := Check(h, ops, Options{})
	w := r.Witnesses()
	if w.Total.Exclusion != planted || r.Exclusion.Violations != planted || len(w.Exclusion) != witness.MaxWitnesses {
		t.Errorf("exclusion: total %d, violations %d, kept %d; want %d, %d, %d", w.Total.Exclusion, r.Exclusion.Violations, len(w.Exclusion), planted, planted, witness.MaxWitnesses)
	}
	if w.Total.Resource != planted || len(w.Resource) != witness.MaxWitnesses {
		t.Errorf("resource: total %d, kept %d; want %d, %d", w.Total.Resource, len(w.Resource), planted, witness.MaxWitnesses)
	}
	last := r.Exclusion.Details[len(r.Exclusion.Details)-1]
	if len(r.Exclusion.Details) != maxDetails || last != fmt.Sprintf("... and %d more", planted-maxDetails+1) {
		t.Errorf("details: %d lines ending %q", len(r.Exclusion.Details), last)
	}
}

// TestOverlapWitnessesMatchRule checks, on random histories, that every
// exclusion witness is a pair the sweep line's rule calls conflicting, with
// the interval both held inside both holds, and that every conflicting
// pair (brute force over all pairs) is a witness.
func TestOverlapWitnessesMatchRule(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	h := history.Header{SchemaVersion: history.SchemaVersion, Fencing: "off"}
	for i := range 1000 {
		ops := randomHistory(rng)
		hs := measure.Holds(ops)
		type pair struct{ a, b int64 }
		want := map[pair]bool{}
		for x := range hs {
			for y := range hs {
				a, b := hs[x], hs[y]
				if x != y && a.Key == b.Key && a.AcquireComplete < b.EndOfUse && b.AcquireComplete < a.EndOfUse && a.Hold < b.Hold {
					want[pair{a.Hold, b.Hold}] = true
				}
			}
		}
		w := Exclusion(h, ops, Options{}).Witnesses
		if len(w.Exclusion) != len(want) || w.Total.Exclusion != len(want) {
			t.Fatalf("history %d: %d witnesses (total %d), brute force finds %d pairs\n%s", i, len(w.Exclusion), w.Total.Exclusion, len(want), describeHolds(hs))
		}
		for _, o := range w.Exclusion {
			p := pair{min(o.A.Hold, o.B.Hold), max(o.A.Hold, o.B.Hold)}
			if !want[p] {
				t.Fatalf("history %d: witness h%d ∩ h%d is not a conflicting pair", i, o.A.Hold, o.B.Hold)
			}
			delete(want, p)
			if o.A.AcquireCompleteNs > o.B.AcquireCompleteNs || o.BothFromNs != max(o.A.AcquireCompleteNs, o.B.AcquireCompleteNs) ||
				o.BothToNs != min(o.A.EndOfUseNs, o.B.EndOfUseNs) || o.BothFromNs > o.BothToNs {
				t.Fatalf("history %d: witness %+v: wrong order or interval\n%s", i, o, describeHolds(hs))
			}
		}
	}
}
