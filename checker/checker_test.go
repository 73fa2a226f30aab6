package checker

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/history/measure"
)

func load(t *testing.T, name string) (history.Header, []history.Operation) {
	t.Helper()
	h, ops, err := history.Load(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return h, ops
}

// want is the expected status and violation count of one check.
type want struct {
	status     Status
	violations int
}

func (w want) check(t *testing.T, name string, got Result) {
	t.Helper()
	if got.Status != w.status || got.Violations != w.violations {
		t.Errorf("%s: got %s with %d violations, want %s with %d\n  message: %s\n  details: %s",
			name, got.Status, got.Violations, w.status, w.violations, got.Message, strings.Join(got.Details, "\n    "))
	}
	if strings.Contains(got.Message, "\n") {
		t.Errorf("%s: message has more than one line: %q", name, got.Message)
	}
	if len(got.Details) > maxDetails {
		t.Errorf("%s: %d details, want at most %d", name, len(got.Details), maxDetails)
	}
	if got.Status == Violated && len(got.Details) == 0 {
		t.Errorf("%s: violated without details", name)
	}
}

func TestCheckRecordedHistories(t *testing.T) {
	ok, skip := want{status: OK}, want{status: Skipped}
	tests := []struct {
		file                                 string
		exclusion, resource, fencing, reentr want
		liveness                             want
	}{
		{"clean-sequential.jsonl", ok, ok, skip, skip, ok},
		// c0 is paused inside its CS, its lease expires, c1 takes the lock,
		// both write from value 0: one overlapping pair, one lost update.
		{"overlap.jsonl", want{Violated, 1}, want{Violated, 1}, skip, skip, skip},
		// A hold ends (end of use) at the very instant the next is granted.
		{"back-to-back.jsonl", ok, ok, skip, skip, skip},
		// c0's acquire timed out (info) while c1 held the lock: not a hold.
		{"info-acquire.jsonl", ok, ok, skip, skip, skip},
		// c0's release has an unknown outcome; its use ended before c1's grant.
		{"info-release.jsonl", ok, ok, skip, skip, skip},
		// c0 crashes inside its CS; c1 acquires after the TTL.
		{"crash-in-cs.jsonl", ok, ok, skip, skip, skip},
		// Fencing on writes: the paused holder's late write is rejected, so
		// the resource stays safe although exclusion broke.
		{"fenced-stale-write-rejected.jsonl", want{Violated, 1}, ok, ok, skip, skip},
		// Fencing on writes only: the stale holder writes before the new
		// holder, is accepted, and the new holder's write loses it.
		{"fenced-writes-lost-update.jsonl", want{Violated, 1}, want{Violated, 1}, ok, skip, skip},
		// Fencing on every operation: the new holder's read raises the
		// highest token, so the stale write is rejected.
		{"fenced-all-stale-write-rejected.jsonl", want{Violated, 1}, ok, ok, skip, skip},
		// k0: 5, 5, 4, 9 in sequence (two violations); k1: 3 and 2 on
		// overlapping acquires (either may be first: no violation).
		{"fence-not-increasing.jsonl", ok, skip, want{Violated, 2}, skip, skip},
		{"reentrancy-count-wrong.jsonl", ok, skip, skip, want{Violated, 1}, skip},
		// c0's nested acquire has an unknown outcome (the node applied it and
		// died): its next counts are one off and not judged, until a release
		// reports 0. c1's unknown release allows one off, not two: a violation.
		{"reentrancy-after-info.jsonl", ok, skip, skip, want{Violated, 1}, skip},
		{"deadlock-probe.jsonl", skip, skip, skip, skip, want{Violated, 1}},
		// A slow acquire took effect after another client's whole hold (no
		// pair); the failover loses the lock and the fencing counter.
		{"slow-acquire-before-fault.jsonl", want{Violated, 1}, want{Violated, 1}, want{Violated, 1}, skip, skip},
		// Fencing on writes, yet the resource accepted a stale write.
		{"fenced-stale-write-accepted.jsonl", want{Violated, 1}, want{Violated, 1}, ok, skip, skip},
		// A read returns an overwritten value.
		{"stale-read.jsonl", ok, want{Violated, 1}, skip, skip, skip},
		// Recorded runs with almost no evidence: one grant; none.
		{"redsync-gc-pause-ttl50ms-one-grant.jsonl", ok, ok, skip, skip, ok},
		{"redlock-256-clients-no-grant.jsonl", skip, skip, skip, skip, ok},
	}
	for _, tt := range tests {
		t.Run(strings.TrimSuffix(tt.file, ".jsonl"), func(t *testing.T) {
			h, ops := load(t, tt.file)
			r := Check(h, ops, Options{})
			tt.exclusion.check(t, "exclusion", r.Exclusion)
			tt.resource.check(t, "resource", r.Resource)
			tt.fencing.check(t, "fencing", r.Fencing)
			tt.reentr.check(t, "reentrancy", r.Reentrancy)
			tt.liveness.check(t, "liveness", r.Liveness)
			if r.Visualization != "" {
				t.Errorf("visualization %q written without a VisualizationPath", r.Visualization)
			}
			// The entry points agree with Check.
			if got := Exclusion(h, ops, Options{}); got.Status != r.Exclusion.Status {
				t.Errorf("Exclusion: %s, Check: %s", got.Status, r.Exclusion.Status)
			}
			if got := Resource(h, ops, Options{}); got.Status != r.Resource.Status {
				t.Errorf("Resource: %s, Check: %s", got.Status, r.Resource.Status)
			}
		})
	}
}

func TestResourceUnknownFencingMode(t *testing.T) {
	h, ops := load(t, "clean-sequential.jsonl")
	h.Fencing = "sometimes"
	if r := Resource(h, ops, Options{}); r.Status != Inconclusive {
		t.Errorf("fencing %q: %s (%s), want inconclusive", h.Fencing, r.Status, r.Message)
	}
}

func TestLivenessFigures(t *testing.T) {
	tests := []struct {
		file string
		want LivenessFigures
	}{
		// Grants at 1 and 4.5 ms in a run from 0 to 6.5 ms; the nemesis
		// window ends at 3 ms, the next grant is at 4.5 ms.
		{"clean-sequential.jsonl", LivenessFigures{LongestUnavailableMs: 3.5, UnavailableMsByKey: map[string]float64{"k0": 3.5}, RecoveryMs: 1.5, FailedShare: 1.0 / 3}},
		// Grants at 1 and 4 ms in a run to 12 ms; no grant after the pause ends at 8 ms.
		{"overlap.jsonl", LivenessFigures{LongestUnavailableMs: 8, UnavailableMsByKey: map[string]float64{"k0": 8}, RecoveryMs: -1}},
		// k0 was never granted: the whole run (0..5 ms) is unavailable.
		{"deadlock-probe.jsonl", LivenessFigures{LongestUnavailableMs: 5, UnavailableMsByKey: map[string]float64{"k0": 5}, FailedShare: 2.0 / 3, InfoShare: 1.0 / 3, Deadlocked: []string{"k0"}}},
	}
	for _, tt := range tests {
		t.Run(strings.TrimSuffix(tt.file, ".jsonl"), func(t *testing.T) {
			h, ops := load(t, tt.file)
			_, got := Liveness(h, ops)
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestVisualization(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "viz", "overlap.html")
	h, ops := load(t, "overlap.jsonl")
	r := Check(h, ops, Options{VisualizationPath: path})
	if r.Visualization != path {
		t.Fatalf("Visualization = %q, want %q", r.Visualization, path)
	}
	for file, texts := range map[string][]string{
		path: {"c0 h1 enter k0", "c1 h2 exit k0", "pause c0", "h1 ∩ h2"},
		filepath.Join(dir, "viz", "overlap-resource.html"): {"c0 h1 write k0 0→1", "pause c0", "lost-update c0 h1"},
	} {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range texts {
			if !strings.Contains(string(b), s) {
				t.Errorf("%s does not mention %q", filepath.Base(file), s)
			}
		}
	}

	// Streams are renumbered so the viewer draws no empty rows.
	far := make([]history.Operation, len(ops))
	for i, op := range ops {
		op.Stream += 1000
		far[i] = op
	}
	farPath := filepath.Join(dir, "far.html")
	if r := Check(h, far, Options{VisualizationPath: farPath}); r.Visualization != farPath {
		t.Fatalf("far streams: Visualization = %q", r.Visualization)
	}
	if b, err := os.ReadFile(farPath); err != nil || strings.Contains(string(b), `"ClientId":100`) || !strings.Contains(string(b), `"ClientId":1,`) {
		t.Errorf("far streams: rows not renumbered to 0..1 (err %v)", err)
	}

	// An unwritable path is reported, not fatal.
	blocked := filepath.Join(dir, "viz", "overlap.html", "x.html")
	r = Check(h, ops, Options{VisualizationPath: blocked})
	if r.Visualization != "" || r.Exclusion.Status != Violated || !strings.Contains(r.Exclusion.Message, "visualization not written") {
		t.Errorf("unwritable path: Visualization %q, exclusion %s: %s", r.Visualization, r.Exclusion.Status, r.Exclusion.Message)
	}

	// No violation, no file.
	h, ops = load(t, "clean-sequential.jsonl")
	clean := filepath.Join(dir, "clean.html")
	if r := Check(h, ops, Options{VisualizationPath: clean}); r.Visualization != "" {
		t.Errorf("clean history: Visualization = %q", r.Visualization)
	}
	if _, err := os.Stat(clean); !os.IsNotExist(err) {
		t.Errorf("clean history: %s written (%v)", clean, err)
	}
}

// sequentialHolds generates n back-to-back holds on one key, each with a
// read and a write of the protected resource.
func sequentialHolds(n int) []history.Operation {
	var ops []history.Operation
	for i := range n {
		t0 := int64(i) * 10
		hold := int64(i + 1)
		c := i % 4
		ops = append(ops,
			history.Operation{Client: c, Stream: c, Kind: history.Acquire, Key: "k0", Hold: hold, Invoke: t0, Complete: t0 + 2, Result: history.OK},
			history.Operation{Client: c, Stream: c, Kind: history.Read, Key: "k0", Hold: hold, Invoke: t0 + 2, Complete: t0 + 3, Result: history.OK, Value: int64(i)},
			history.Operation{Client: c, Stream: c, Kind: history.Write, Key: "k0", Hold: hold, Invoke: t0 + 4, Complete: t0 + 5, Result: history.OK, Prev: int64(i), Value: int64(i + 1)},
			history.Operation{Client: c, Stream: c, Kind: history.Release, Key: "k0", Hold: hold, Invoke: t0 + 6, Complete: t0 + 8, Result: history.OK},
		)
	}
	return ops
}

func TestPorcupineTimeoutIsInconclusive(t *testing.T) {
	h := history.Header{SchemaVersion: history.SchemaVersion, Fencing: "off"}
	ops := sequentialHolds(5000)
	o := Options{Timeout: time.Nanosecond}
	for range 3 {
		r := Check(h, ops, o)
		for name, res := range map[string]Result{"exclusion": r.Exclusion, "resource": r.Resource} {
			if res.Status != Inconclusive {
				t.Errorf("%s with a 1 ns timeout: %s (%s), want inconclusive", name, res.Status, res.Message)
			}
			if !strings.Contains(res.Message, "timed out") {
				t.Errorf("%s: message %q does not say it timed out", name, res.Message)
			}
			if !res.TimedOut {
				t.Errorf("%s: TimedOut false on a porcupine timeout", name)
			}
		}
	}
	// The same history passes with the default timeout.
	small := sequentialHolds(200)
	if r := Check(h, small, Options{}); r.Exclusion.Status != OK || r.Resource.Status != OK {
		t.Errorf("200 sequential holds: exclusion %s, resource %s, want ok", r.Exclusion.Status, r.Resource.Status)
	}
}

// randomHistory generates a history of holds on a few keys with times on a
// coarse grid (so equal timestamps are common): acquires, resource reads,
// releases (ok, fail, info), crashes, failed and info acquires. Holds of a
// key mostly follow each other, sometimes overlap.
func randomHistory(rng *rand.Rand) []history.Operation {
	var ops []history.Operation
	hold := int64(0)
	stream := 0
	for k := range 1 + rng.IntN(3) {
		key := fmt.Sprintf("k%d", k)
		t := int64(rng.IntN(3))
		for range 2 + rng.IntN(10) {
			c := rng.IntN(4)
			stream++
			s := stream
			ai := t + int64(rng.IntN(3)) - 1
			ac := ai + int64(rng.IntN(3))
			ai = max(ai, 0)
			ac = max(ac, ai)
			switch rng.IntN(8) {
			case 0:
				ops = append(ops, history.Operation{Client: c, Stream: s, Kind: history.Acquire, Key: key, Invoke: ai, Complete: ac, Result: history.Fail})
				continue
			case 1:
				hold++
				ops = append(ops, history.Operation{Client: c, Stream: s, Kind: history.Acquire, Key: key, Hold: hold, Invoke: ai, Complete: ac, Result: history.Info})
				continue
			}
			hold++
			ops = append(ops, history.Operation{Client: c, Stream: s, Kind: history.Acquire, Key: key, Hold: hold, Invoke: ai, Complete: ac, Result: history.OK})
			end := ac
			for range rng.IntN(3) {
				ri := end + int64(rng.IntN(2))
				rc := ri + int64(rng.IntN(3))
				ops = append(ops, history.Operation{Client: c, Stream: s, Kind: history.Read, Key: key, Hold: hold, Invoke: ri, Complete: rc, Result: history.OK})
				end = rc
			}
			rel := end + int64(rng.IntN(2))
			switch rng.IntN(6) {
			case 0:
				ops = append(ops, history.Operation{Client: c, Stream: s, Kind: history.Crash, Key: key, Hold: hold, Invoke: rel, Complete: rel, Result: history.Info})
			case 1:
				ops = append(ops, history.Operation{Client: c, Stream: s, Kind: history.Release, Key: key, Hold: hold, Invoke: rel, Complete: rel + 5, Result: history.Info})
			default:
				res := history.OK
				if rng.IntN(4) == 0 {
					res = history.Fail
				}
				ops = append(ops, history.Operation{Client: c, Stream: s, Kind: history.Release, Key: key, Hold: hold, Invoke: rel, Complete: rel + int64(rng.IntN(3)), Result: res})
			}
			// The next grant comes a little after this end of use, or a little before.
			t = end + int64(rng.IntN(4)) - 1
		}
	}
	return ops
}

// TestPorcupineAgreesWithSweep checks, on random histories, that porcupine
// finds a violation exactly when the sweep-line finds an overlapping pair,
// on whole keys and on keys cut into pieces as small as possible.
func TestPorcupineAgreesWithSweep(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	h := history.Header{SchemaVersion: history.SchemaVersion, Fencing: "off"}
	model := exclusionModel()
	var ok, violated, cut int
	for i := range 2000 {
		ops := randomHistory(rng)
		hs := measure.Holds(ops)
		n, _, _ := sweepOverlaps(hs)
		for _, size := range []int{len(hs) + 1, 1} {
			pieces := excPieces(hs, size)
			if len(pieces) > countKeys(hs) {
				cut++
			}
			porc := porcupine.CheckOperationsTimeout(model, flatten(exclusionOps(hs, pieces)), 10*time.Second)
			if porc == porcupine.Unknown {
				t.Fatalf("history %d: porcupine timed out", i)
			}
			if (porc == porcupine.Illegal) != (n > 0) {
				t.Fatalf("history %d, pieces of %d holds: porcupine %s, sweep-line %d pairs; holds:\n%s", i, size, porc, n, describeHolds(hs))
			}
		}
		r := Exclusion(h, ops, Options{pieceHolds: 1})
		switch {
		case len(hs) == 0:
			continue
		case n > 0:
			violated++
			if r.Status != Violated || r.Violations != n {
				t.Fatalf("history %d: Exclusion %s with %d violations, sweep-line %d pairs", i, r.Status, r.Violations, n)
			}
		default:
			ok++
			if r.Status != OK {
				t.Fatalf("history %d: Exclusion %s (%s), want ok", i, r.Status, r.Message)
			}
		}
	}
	t.Logf("random histories: %d ok, %d violated, %d cut", ok, violated, cut)
	// Both outcomes, and cuts, must be well represented for the test to mean anything.
	if ok < 300 || violated < 300 || cut < 300 {
		t.Errorf("random histories: %d ok, %d violated, %d cut; want at least 300 of each", ok, violated, cut)
	}
}

// randomResourceHistory simulates the protected resource under random
// concurrent operations on two keys: each operation takes effect at a
// random point of its interval, a few are corrupted (a wrong read, a write
// from a stale value, a wrong fencing decision) or left with an unknown
// outcome.
func randomResourceHistory(rng *rand.Rand, mode string) []history.Operation {
	type timed struct {
		op    history.Operation
		point int64
	}
	var ops []history.Operation
	for k := range 2 {
		key := fmt.Sprintf("k%d", k)
		var ts []timed
		t := int64(0)
		for range 5 + rng.IntN(30) {
			inv := t + int64(rng.IntN(3))
			comp := inv + int64(rng.IntN(4))
			kind := history.Read
			if rng.IntN(2) == 0 {
				kind = history.Write
			}
			c := rng.IntN(3)
			ts = append(ts, timed{history.Operation{Client: c, Stream: c, Kind: kind, Key: key, Fence: int64(rng.IntN(6)), Invoke: inv, Complete: comp}, inv + rng.Int64N(comp-inv+1)})
			t = inv + int64(rng.IntN(3))
		}
		sort.SliceStable(ts, func(i, j int) bool { return ts[i].point < ts[j].point })
		m := resModel{mode: mode}
		var s resState
		for _, x := range ts {
			op := x.op
			if op.Kind == history.Write {
				op.Prev = s.value
				op.Value = s.value + 1 + int64(rng.IntN(2))
				if rng.IntN(60) == 0 {
					op.Prev-- // a write from a stale value
				}
			}
			if m.fenced(op) && op.Fence < s.highest {
				op.Result = history.Fail
			} else {
				op.Result = history.OK
				if op.Kind == history.Read {
					op.Value = s.value
				} else {
					s.value = op.Value
				}
				if m.fenced(op) {
					s.highest = max(s.highest, op.Fence)
				}
			}
			switch rng.IntN(80) {
			case 0:
				op.Value++ // a wrong read, or a wrong new value
			case 1:
				op.Result = history.Info
			case 2:
				if m.fenced(op) && op.Result == history.OK {
					op.Result = history.Fail // a wrong fencing decision
				}
			}
			ops = append(ops, op)
		}
	}
	return ops
}

// TestResourcePiecesAreExact checks, on random resource histories, that
// cutting keys into pieces never changes porcupine's verdict.
func TestResourcePiecesAreExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var ok, illegal, cut int
	for i := range 1500 {
		mode := []string{fencingOff, fencingWrites, fencingAll}[i%3]
		ops := randomResourceHistory(rng, mode)
		m := resModel{mode: mode}
		model := m.porcupine()
		whole := porcupine.CheckOperationsTimeout(model, flatten(m.resourcePieces(ops, len(ops)+1)), 10*time.Second)
		pieces := m.resourcePieces(ops, 1)
		if len(pieces) > 2 {
			cut++
		}
		inPieces := porcupine.CheckOperationsTimeout(model, flatten(pieces), 10*time.Second)
		if whole == porcupine.Unknown || whole != inPieces {
			t.Fatalf("history %d (fencing %s): whole keys %s, %d pieces %s", i, mode, whole, len(pieces), inPieces)
		}
		if whole == porcupine.Ok {
			ok++
		} else {
			illegal++
		}
	}
	t.Logf("random resource histories: %d ok, %d illegal, %d cut", ok, illegal, cut)
	if ok < 200 || illegal < 200 || cut < 200 {
		t.Errorf("random resource histories: %d ok, %d illegal, %d cut; want at least 200 of each", ok, illegal, cut)
	}
}

func describeHolds(hs []measure.Hold) string {
	var b strings.Builder
	for _, h := range hs {
		fmt.Fprintf(&b, "  %s h%d enter [%d, %d] exit [%d, %d]\n", h.Key, h.Hold, h.AcquireInvoke, h.AcquireComplete, h.EndOfUse, h.ReleaseComplete)
	}
	return b.String()
}

func TestSweepOverlaps(t *testing.T) {
	hold := func(key string, ac, eou int64) measure.Hold {
		return measure.Hold{Key: key, AcquireInvoke: ac, AcquireComplete: ac, EndOfUse: eou, ReleaseComplete: measure.Inf}
	}
	tests := []struct {
		name string
		hs   []measure.Hold
		want int
	}{
		{"disjoint", []measure.Hold{hold("k", 0, 5), hold("k", 6, 9)}, 0},
		{"touching", []measure.Hold{hold("k", 0, 5), hold("k", 5, 9)}, 0},
		{"overlapping", []measure.Hold{hold("k", 0, 5), hold("k", 4, 9)}, 1},
		{"nested", []measure.Hold{hold("k", 0, 10), hold("k", 2, 3), hold("k", 4, 5)}, 2},
		{"point inside", []measure.Hold{hold("k", 0, 10), hold("k", 5, 5)}, 1},
		{"point at grant", []measure.Hold{hold("k", 5, 10), hold("k", 5, 5)}, 0},
		{"three at once", []measure.Hold{hold("k", 0, 9), hold("k", 1, 9), hold("k", 2, 9)}, 3},
		{"other keys", []measure.Hold{hold("a", 0, 9), hold("b", 1, 9)}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if n, _, _ := sweepOverlaps(tt.hs); n != tt.want {
				t.Errorf("got %d pairs, want %d", n, tt.want)
			}
		})
	}
}

// TestLivenessMessageCounts: the liveness message counts probed keys in
// the right number ("1 probed key", not "1 probed keys"); a probe none of
// whose attempts was answered makes the check inconclusive unless another
// key is deadlocked.
func TestLivenessMessageCounts(t *testing.T) {
	probe := func(key string, ok bool) history.Operation {
		op := history.Operation{Kind: history.Probe, Client: -1, Key: key, Invoke: 1, Complete: 2, Result: history.OK, Value: -2}
		if !ok {
			op.Result = history.Fail
		}
		return op
	}
	unanswered := func(key string) history.Operation { // no attempt answered
		return history.Operation{Kind: history.Probe, Client: -1, Key: key, Invoke: 1, Complete: 2, Result: history.Info, Value: -2}
	}
	tests := []struct {
		ops  []history.Operation
		want string
	}{
		{[]history.Operation{probe("k0", true)}, "1 probed key acquirable after the run"},
		{[]history.Operation{probe("k0", true), probe("k1", true)}, "2 probed keys acquirable after the run"},
		{[]history.Operation{probe("k0", false)}, "1 of 1 probed key is deadlocked"},
		{[]history.Operation{probe("k0", false), probe("k1", true)}, "1 of 2 probed keys is deadlocked"},
		{[]history.Operation{probe("k0", false), probe("k1", false)}, "2 of 2 probed keys are deadlocked"},
		{[]history.Operation{unanswered("k0"), probe("k1", true)}, "1 of 2 probed keys could not be probed"},
		{[]history.Operation{unanswered("k0"), probe("k1", false)}, "1 of 2 probed keys is deadlocked"},
	}
	for _, tt := range tests {
		r, _ := Liveness(history.Header{TTLMs: 100}, tt.ops)
		if !strings.HasPrefix(r.Message, tt.want) {
			t.Errorf("message %q, want it to start with %q", r.Message, tt.want)
		}
	}
}

// TestLivenessNoServerTTL: the probe's result decides a key's liveness,
// not its PTTL. A lock that keeps its expiry in the key's value (no server
// TTL; GETSET-style) leaves keys at PTTL -1 that the probe acquires: not a
// deadlock. A key at PTTL -1 the probe could not acquire is one, with its
// witness; one whose probe got no answer says nothing (inconclusive).
func TestLivenessNoServerTTL(t *testing.T) {
	probe := func(key string, pttl int64, res history.Result) history.Operation {
		return history.Operation{Kind: history.Probe, Client: -1, Key: key, Invoke: 1, Complete: 2, Result: res, Value: pttl}
	}
	grant := []history.Operation{
		{Kind: history.Acquire, Client: 0, Key: "k0", Token: "c0-1", Invoke: 0, Complete: 1, Result: history.OK},
		{Kind: history.Release, Client: 0, Key: "k0", Token: "c0-1", Invoke: 5, Complete: 6, Result: history.OK},
	}
	for _, tt := range []struct {
		name       string
		probe      history.Operation
		status     Status
		deadlocked []string
		message    string
		witness    string
	}{
		{"no TTL, acquired", probe("k0", -1, history.OK), OK, nil,
			"1 probed key acquirable after the run; 1 without a server TTL (PTTL -1) but acquired by the probe: the lock keeps its expiry elsewhere, not a deadlock", ""},
		{"no TTL, refused", probe("k0", -1, history.Fail), Violated, []string{"k0"},
			"1 of 1 probed key is deadlocked", "k0: left without a TTL after the run (PTTL -1) and not acquirable within TTL+1s (1100 ms): deadlock"},
		{"no TTL, unanswered", probe("k0", -1, history.Info), Inconclusive, nil, "1 of 1 probed key could not be probed", ""},
		{"TTL, refused", probe("k0", 50, history.Fail), Violated, []string{"k0"}, "1 of 1 probed key is deadlocked", "k0: not acquirable within TTL+1s (1100 ms)"},
		{"no key, acquired", probe("k0", -2, history.OK), OK, nil, "1 probed key acquirable after the run, none without TTL", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, f := Liveness(history.Header{TTLMs: 100}, append(slices.Clone(grant), tt.probe))
			if r.Status != tt.status || !strings.HasPrefix(r.Message, tt.message) || fmt.Sprint(f.Deadlocked) != fmt.Sprint(tt.deadlocked) {
				t.Errorf("status %s, message %q, deadlocked %v; want %s, %q, %v", r.Status, r.Message, f.Deadlocked, tt.status, tt.message, tt.deadlocked)
			}
			if (len(r.Details) > 0) != (tt.witness != "") || tt.witness != "" && !strings.HasPrefix(r.Details[0], tt.witness) {
				t.Errorf("details %q, want a witness starting %q", r.Details, tt.witness)
			}
			if tt.witness != "" && (len(r.Witnesses.Liveness) != 1 || r.Witnesses.Liveness[0].NoTTL != (tt.probe.Value == -1)) {
				t.Errorf("witnesses %+v", r.Witnesses.Liveness)
			}
		})
	}
}
