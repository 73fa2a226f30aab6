package bench

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/merge"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/shard"
)

// TestShardPlan: for the ci and full profiles and 1 to 5 parts, every
// planned run is in exactly one part, every repeat of a cell is in one
// part, the client sweep and the cost runs are each in one part, the
// hunt is in one part, two plans are equal, and no part exceeds the
// lightest one by more than the longest unit (longest-first balancing).
func TestShardPlan(t *testing.T) {
	for _, name := range []string{"ci", "full"} {
		p, err := LookupProfile(name)
		if err != nil {
			t.Fatal(err)
		}
		specs, sweep, err := cells(p, 1, p.Seeds)
		if err != nil {
			t.Fatal(err)
		}
		costs, err := costCells(p, 1)
		if err != nil {
			t.Fatal(err)
		}
		hunt := time.Duration(0)
		if p.Hunt != nil {
			hunt = p.Hunt.Budget
		}
		all := slices.Concat(specs, sweep, costs)
		for n := 1; n <= 5; n++ {
			parts, huntPart := shardPlan(specs, sweep, costs, hunt, n)
			again, _ := shardPlan(specs, sweep, costs, hunt, n)
			if !reflect.DeepEqual(parts, again) {
				t.Errorf("%s %d parts: two plans differ", name, n)
			}
			if (hunt > 0) != (huntPart >= 0 && huntPart < n) {
				t.Errorf("%s %d parts: hunt in part %d", name, n, huntPart)
			}
			owner := make([]int, len(all))
			for i := range owner {
				owner[i] = -1
			}
			load := make([]time.Duration, n)
			for k, part := range parts {
				for _, pos := range part {
					if owner[pos] >= 0 {
						t.Fatalf("%s %d parts: run %d in parts %d and %d", name, n, pos, owner[pos], k)
					}
					owner[pos] = k
					load[k] += expectedDuration(all[pos])
				}
				if k == huntPart {
					load[k] += hunt
				}
			}
			cellPart := map[string]int{}
			for pos, k := range owner {
				if k < 0 {
					t.Fatalf("%s %d parts: run %d in no part", name, n, pos)
				}
				key := fmt.Sprintf("%s/%s", all[pos].Strategy, all[pos].Scenario)
				switch {
				case pos >= len(specs)+len(sweep):
					key = "cost"
				case pos >= len(specs):
					key = "sweep"
				}
				if q, ok := cellPart[key]; ok && q != k {
					t.Errorf("%s %d parts: %s split over parts %d and %d", name, n, key, q, k)
				}
				cellPart[key] = k
			}
			unit := map[string]time.Duration{"hunt": hunt}
			for pos, s := range all {
				key := fmt.Sprintf("%s/%s", s.Strategy, s.Scenario)
				switch {
				case pos >= len(specs)+len(sweep):
					key = "cost"
				case pos >= len(specs):
					key = "sweep"
				}
				unit[key] += expectedDuration(s)
			}
			longest := time.Duration(0)
			for _, d := range unit {
				longest = max(longest, d)
			}
			if spread := slices.Max(load) - slices.Min(load); spread > longest {
				t.Errorf("%s %d parts: loads %v differ by %v, more than the longest unit", name, n, load, spread)
			}
		}
	}
}

// TestShardMergeSameVerdicts runs the tiny profile (with cost runs) whole
// and as parts 1/2 and 2/2 with the same seed against real
// redis-servers, merges the parts (results.MergeShards, merge.WriteMerged) and
// finds the same runs in the same order with the same verdicts as the
// whole bench; the merged folder loads and holds every history.
func TestShardMergeSameVerdicts(t *testing.T) {
	if testing.Short() {
		t.Skip("runs eighteen real runs")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	p := tinyProfile()
	p.CostClients, p.CostDuration = []int{2}, 150*time.Millisecond
	root := t.TempDir()
	bench := func(name string, sh shard.Shard) *results.File {
		t.Helper()
		dir := filepath.Join(root, name)
		f, err := Bench(ctx, Options{Profile: p, OutDir: dir, Seed: 5, Command: "test --out " + dir, Shard: sh})
		if errors.Is(err, ErrOverloaded) {
			t.Skipf("%s: %v: the machine is too busy for verdicts to compare", name, err)
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return f
	}
	whole := bench("whole", shard.Shard{})
	p1, p2 := bench("part1", shard.Shard{Index: 1, Count: 2}), bench("part2", shard.Shard{Index: 2, Count: 2})
	if p1.Shard == nil || p2.Shard == nil || p1.Shard.Planned != 8 || len(p1.Runs)+len(p2.Runs) != 4 || len(p1.Cost)+len(p2.Cost) != 4 {
		t.Fatalf("parts: %+v %+v: want 8 planned runs, 4 cells and 4 cost runs between them", p1.Shard, p2.Shard)
	}
	dirs := []string{filepath.Join(root, "part2"), filepath.Join(root, "part1")} // any order
	merged, err := results.MergeShards([]*results.File{p2, p1}, dirs, "test")
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(root, "merged")
	if err := merge.WriteMerged(out, dirs, merged); err != nil {
		t.Fatal(err)
	}
	back, err := results.Load(filepath.Join(out, results.FileName))
	if err != nil {
		t.Fatal(err)
	}
	type verdict struct {
		Cell       string
		Verdict    results.Verdict
		AsExpected bool
	}
	list := func(runs []results.Run) []verdict {
		var v []verdict
		for _, r := range runs {
			v = append(v, verdict{fmt.Sprintf("%s/%s/%d", r.Strategy, r.Scenario, r.Seed), r.Verdict, r.AsExpected})
		}
		return v
	}
	if a, b := list(whole.Runs), list(back.Runs); !reflect.DeepEqual(a, b) {
		t.Errorf("merged parts differ from the whole bench:\nwhole  %+v\nmerged %+v", a, b)
	}
	var wc, mc []string
	for i := range whole.Cost {
		wc = append(wc, fmt.Sprintf("%s/%d", whole.Cost[i].Strategy, whole.Cost[i].Config.Clients))
	}
	for i := range back.Cost {
		mc = append(mc, fmt.Sprintf("%s/%d", back.Cost[i].Strategy, back.Cost[i].Config.Clients))
	}
	if !slices.Equal(wc, mc) {
		t.Errorf("cost runs: whole %v, merged %v", wc, mc)
	}
	w, m := report.OutcomeOf(whole, ""), report.OutcomeOf(back, "")
	if w.Runs != m.Runs || w.Unexpected != m.Unexpected || w.Inconclusive != m.Inconclusive {
		t.Errorf("gate: whole %d runs, %d unexpected, %d inconclusive; merged %d, %d, %d", w.Runs, w.Unexpected, w.Inconclusive, m.Runs, m.Unexpected, m.Inconclusive)
	}
	if len(back.Shards) != 2 || back.Shards[0].Index != 1 || back.Shard != nil {
		t.Errorf("merged shards %+v, shard %+v: want parts 1 and 2 listed, no shard of its own", back.Shards, back.Shard)
	}
	for _, r := range slices.Concat(back.Runs, back.Cost) {
		if _, _, err := history.Load(filepath.Join(out, r.History)); err != nil {
			t.Errorf("merged folder lacks %s: %v", r.History, err)
		}
	}
}
