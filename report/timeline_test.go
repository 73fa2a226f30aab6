package report

import (
	"fmt"
	"testing"

	"github.com/lockbench/lockbench/checker/witness"
	"github.com/lockbench/lockbench/results"
)

// TestTimelineRuns: a pair's timeline shows its first run with a witness,
// else its first faulted run; errored runs and fault-free runs without a
// witness get none.
func TestTimelineRuns(t *testing.T) {
	witness := witness.Witnesses{Exclusion: []witness.Overlap{{Key: "k"}}}
	fault := []results.Fault{{Name: "f"}}
	runs := []results.Run{
		{Strategy: "a", Scenario: "baseline", Seed: 1},
		{Strategy: "a", Scenario: "gc-pause", Seed: 1, Faults: fault},
		{Strategy: "a", Scenario: "gc-pause", Seed: 2, Faults: fault, Witnesses: witness},
		{Strategy: "b", Scenario: "baseline", Seed: 1, Error: "port in use", Witnesses: witness},
		{Strategy: "b", Scenario: "baseline", Seed: 2, Witnesses: witness},
		{Strategy: "b", Scenario: "gc-pause", Seed: 1, Faults: fault},
	}
	var got []string
	for _, r := range timelineRuns(runs) {
		got = append(got, fmt.Sprintf("%s/%s/%d", r.Strategy, r.Scenario, r.Seed))
	}
	if want := "[a/gc-pause/2 b/baseline/2 b/gc-pause/1]"; fmt.Sprint(got) != want {
		t.Errorf("timeline runs %v, want %s", got, want)
	}
}
