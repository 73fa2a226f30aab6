package bench

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/shard"
)

// shardUnit is a group of a bench's planned runs that one shard runs
// whole: every repeat of one cell (strategy, scenario and, in a sweep
// of time scales, scale), the whole client sweep, all the cost runs, or
// the profile's hunt (no positions).
type shardUnit struct {
	positions []int // indexes into the plan (cells, then sweep, then cost runs)
	cost      time.Duration
	hunt      bool
}

// shardPlan splits a bench's plan (specs, then sweep, then costs, as
// Bench runs them) and, when hunt > 0, the profile's hunt of that budget
// into count parts: every repeat of a cell in one part, the client sweep
// in one part and the cost runs in one part (their figures are compared
// with each other, so they run on one host), balanced by expected
// duration (expectedDuration) with the longest-first rule: units by
// decreasing duration, ties by plan order, each to the least loaded part,
// ties to the lowest index. It returns, for each part (0-based), its plan
// positions in plan order, and the part that runs the hunt (-1: none).
// The split depends on its arguments only, so every runner of one bench
// computes the same split.
func shardPlan(specs, sweep, costs []Spec, hunt time.Duration, count int) (parts [][]int, huntPart int) {
	var units []shardUnit
	byKey := map[string]int{}
	for i, s := range specs {
		key := fmt.Sprintf("%s\x00%s\x00%s", s.Strategy, s.Scenario, s.HistoryTag)
		k, ok := byKey[key]
		if !ok {
			k = len(units)
			byKey[key] = k
			units = append(units, shardUnit{})
		}
		units[k].positions = append(units[k].positions, i)
		units[k].cost += expectedDuration(s)
	}
	base := len(specs)
	for _, group := range [][]Spec{sweep, costs} {
		if len(group) > 0 {
			u := shardUnit{}
			for j, s := range group {
				u.positions = append(u.positions, base+j)
				u.cost += expectedDuration(s)
			}
			units = append(units, u)
		}
		base += len(group)
	}
	if hunt > 0 {
		units = append(units, shardUnit{cost: hunt, hunt: true})
	}
	order := make([]int, len(units))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(units[b].cost, units[a].cost) })
	parts = make([][]int, count)
	load := make([]time.Duration, count)
	huntPart = -1
	for _, u := range order {
		p := 0
		for j := 1; j < count; j++ {
			if load[j] < load[p] {
				p = j
			}
		}
		load[p] += units[u].cost
		parts[p] = append(parts[p], units[u].positions...)
		if units[u].hunt {
			huntPart = p
		}
	}
	for _, p := range parts {
		slices.Sort(p)
	}
	return parts, huntPart
}

// expectedDuration is what a planned run is expected to take on an idle
// machine: its resolved workload's duration (a scenario may fix its own)
// plus the start and stop of its servers and the checks, which grow with
// the number of servers, proxies and Sentinels and are longest for the
// consensus locks (etcd and ZooKeeper sessions). It only balances shards
// (shardPlan); a wrong guess makes shards finish apart, never changes a
// verdict.
func expectedDuration(s Spec) time.Duration {
	st, _, setup, w, err := s.Resolved()
	if err != nil {
		return time.Second
	}
	d := w.Duration + 400*time.Millisecond
	if st.Info().Server != impl.ServerRedis {
		d += time.Second
	}
	if setup.Sentinel {
		d += 3 * time.Second
	}
	if setup.Proxies {
		d += 200 * time.Millisecond
	}
	return d
}

// shardInfo describes part sh of a bench whose plan is specs, sweep and
// costs for results.json (File.Shard): its plan positions split by kind
// and whether it runs the hunt.
func shardInfo(sh shard.Shard, positions []int, nSpecs, nSweep, nCost int, hunt bool) *results.ShardInfo {
	info := &results.ShardInfo{Index: sh.Index, Count: sh.Count, Planned: nSpecs + nSweep + nCost, Hunt: hunt}
	for _, p := range positions {
		switch {
		case p < nSpecs:
			info.Runs = append(info.Runs, p)
		case p < nSpecs+nSweep:
			info.Sweep = append(info.Sweep, p)
		default:
			info.Cost = append(info.Cost, p)
		}
	}
	return info
}

// pick returns the specs of all at positions, offset by base (positions
// index the whole plan; all starts at base).
func pick(all []Spec, positions []int, base int) []Spec {
	out := []Spec{}
	for _, p := range positions {
		if p >= base && p < base+len(all) {
			out = append(out, all[p-base])
		}
	}
	return out
}
