package measure

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/history"
)

// load reads a recorded history of the checker's tests
// (checker/testdata).
func load(t *testing.T, name string) (history.Header, []history.Operation) {
	t.Helper()
	h, ops, err := history.Load(filepath.Join("..", "..", "checker", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return h, ops
}

func TestHolds(t *testing.T) {
	const ms = int64(time.Millisecond)
	tests := []struct {
		file string
		want []Hold // only Hold, AcquireComplete, EndOfUse, ReleaseComplete, Crashed compared
	}{
		{"clean-sequential.jsonl", []Hold{
			{Hold: 1, AcquireComplete: 1 * ms, EndOfUse: 2100000, ReleaseComplete: 3500000},
			{Hold: 2, AcquireComplete: 4500000, EndOfUse: 5100000, ReleaseComplete: 6500000},
		}},
		{"back-to-back.jsonl", []Hold{
			{Hold: 1, AcquireComplete: 1000, EndOfUse: 3000, ReleaseComplete: 4000},
			{Hold: 2, AcquireComplete: 3000, EndOfUse: 5000, ReleaseComplete: 6000},
			{Hold: 3, AcquireComplete: 5000, EndOfUse: 5000, ReleaseComplete: 6000},
		}},
		// The info acquire of c0 is not a hold.
		{"info-acquire.jsonl", []Hold{
			{Hold: 2, AcquireComplete: 1500000, EndOfUse: 1900000, ReleaseComplete: 3 * ms},
		}},
		// Unknown release: the hold's use ends at its last write, its release never.
		{"info-release.jsonl", []Hold{
			{Hold: 1, AcquireComplete: 1 * ms, EndOfUse: 3 * ms, ReleaseComplete: Inf},
			{Hold: 2, AcquireComplete: 11 * ms, EndOfUse: 13 * ms, ReleaseComplete: 14 * ms},
		}},
		{"crash-in-cs.jsonl", []Hold{
			{Hold: 1, AcquireComplete: 1 * ms, EndOfUse: 2 * ms, ReleaseComplete: Inf, Crashed: true},
			{Hold: 2, AcquireComplete: 102 * ms, EndOfUse: 104 * ms, ReleaseComplete: 105 * ms},
		}},
		// A failed release (lock already gone) still ends the hold.
		{"fenced-stale-write-rejected.jsonl", []Hold{
			{Hold: 1, AcquireComplete: 1 * ms, EndOfUse: 31 * ms, ReleaseComplete: 33 * ms},
			{Hold: 2, AcquireComplete: 13 * ms, EndOfUse: 15 * ms, ReleaseComplete: 17 * ms},
		}},
		// Only the outermost acquire is a hold; its end of use is capped at the outermost release.
		{"reentrancy-count-wrong.jsonl", []Hold{
			{Hold: 1, AcquireComplete: 1000, EndOfUse: 1000, ReleaseComplete: 4000},
			{Hold: 2, AcquireComplete: 6000, EndOfUse: 6000, ReleaseComplete: 7000},
		}},
	}
	for _, tt := range tests {
		t.Run(strings.TrimSuffix(tt.file, ".jsonl"), func(t *testing.T) {
			_, ops := load(t, tt.file)
			got := Holds(ops)
			if len(got) != len(tt.want) {
				t.Fatalf("got %d holds %+v, want %d", len(got), got, len(tt.want))
			}
			for i, w := range tt.want {
				g := got[i]
				if g.Hold != w.Hold || g.AcquireComplete != w.AcquireComplete || g.EndOfUse != w.EndOfUse ||
					g.ReleaseComplete != w.ReleaseComplete || g.Crashed != w.Crashed {
					t.Errorf("hold %d: got %+v, want %+v", i, g, w)
				}
			}
		})
	}
}
