package checker

import (
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/history/measure"
)

// TestChancesToOverlapBruteForce compares the sweep with the definition
// checked pair by pair on random histories.
func TestChancesToOverlapBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for i := range 1000 {
		ops := randomHistory(rng)
		want := 0
		for _, h := range measure.Holds(ops) {
			for _, op := range ops {
				if op.Kind == history.Acquire && isClientLockCall(op) && op.Key == h.Key && op.Client != h.Client &&
					op.Invoke <= h.EndOfUse && op.Complete >= h.AcquireComplete {
					want++
					break
				}
			}
		}
		if got := measure.EvidenceOf(ops, nil).ChancesToOverlap; got != want {
			t.Fatalf("history %d: ChancesToOverlap = %d, brute force %d\n%s", i, got, want, describeHolds(measure.Holds(ops)))
		}
	}
}

// TestCheckEvidence: on the recorded histories (none with observer reads),
// Check's evidence is measure.EvidenceOf's, which the observer's and the
// reasons check's counts only add to.
func TestCheckEvidence(t *testing.T) {
	files, err := filepath.Glob("testdata/*.jsonl")
	if err != nil || len(files) == 0 {
		t.Fatalf("no recorded histories: %v", err)
	}
	for _, f := range files {
		h, ops := load(t, filepath.Base(f))
		if got, want := Check(h, ops, Options{}).Evidence, measure.EvidenceOf(ops, nil); got != want {
			t.Errorf("%s: Check's evidence\n got %+v\nwant %+v", f, got, want)
		}
	}
}
