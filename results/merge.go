package results

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/lockbench/lockbench/internal/errs"
)

// MergeShards joins the parts of one sharded bench (lockbench bench
// --shard I/N), parts[i] read from folders[i], into the File one
// unsharded bench with the same profile, seed and commit would have
// written: its runs, sweep and cost runs in the whole bench's plan order
// (ShardInfo positions), Started the earliest part's, Finished the
// latest's, Host part 1's, and Shards naming each part with its own host.
// command replaces the parts' command line (the bench's, without
// --shard). Every part must be complete and of one bench: the same
// schema version, tool, commit, profile, seed, repeat, config, shard
// count and plan; every part from 1 to the count given once, and every
// planned position held by exactly one part. Otherwise the error wraps
// errs.ErrUsage and names the folder, the field and the fix, in one line.
func MergeShards(parts []*File, folders []string, command string) (*File, error) {
	if len(parts) == 0 || len(parts) != len(folders) {
		return nil, fmt.Errorf("%w: merge: give the results folders of every part of one sharded bench", errs.ErrUsage)
	}
	first, firstDir := parts[0], folders[0]
	byIndex := map[int]int{}
	for i, f := range parts {
		dir := folders[i]
		if f.Shard == nil {
			return nil, fmt.Errorf("%w: merge: %s: field shard is absent: it is not a part of a sharded bench; give the --out folders of lockbench bench --shard I/N", errs.ErrUsage, dir)
		}
		if f.Incomplete != "" {
			return nil, fmt.Errorf("%w: merge: %s: field incomplete: part %d/%d stopped (%s); rerun that part", errs.ErrUsage, dir, f.Shard.Index, f.Shard.Count, firstLine(f.Incomplete))
		}
		for _, c := range []struct {
			field    string
			a, b     any
			nameBoth bool
		}{
			{"schema_version", f.SchemaVersion, first.SchemaVersion, true},
			{"tool", f.Tool, first.Tool, true},
			{"commit", f.Commit, first.Commit, true},
			{"profile", f.Profile, first.Profile, true},
			{"seed", f.Seed, first.Seed, true},
			{"repeat", f.Repeat, first.Repeat, true},
			{"shard.count", f.Shard.Count, first.Shard.Count, true},
			{"shard.planned", f.Shard.Planned, first.Shard.Planned, true},
			{"config", f.Config, first.Config, false},
		} {
			if reflect.DeepEqual(c.a, c.b) {
				continue
			}
			val := ""
			if c.nameBoth {
				val = fmt.Sprintf(" is %v where %s has %v", c.a, firstDir, c.b)
			} else {
				val = " differs from " + firstDir + "'s (other --strategies, --scenarios or backend flags)"
			}
			return nil, fmt.Errorf("%w: merge: %s: field %s%s: give parts of one bench (same profile, --seed, --repeat, lockbench build and --shard count)", errs.ErrUsage, dir, c.field, val)
		}
		if j, dup := byIndex[f.Shard.Index]; dup {
			return nil, fmt.Errorf("%w: merge: %s and %s are both part %d/%d (field shard.index): give each part once", errs.ErrUsage, folders[j], dir, f.Shard.Index, f.Shard.Count)
		}
		byIndex[f.Shard.Index] = i
	}
	var missing []string
	for k := 1; k <= first.Shard.Count; k++ {
		if _, ok := byIndex[k]; !ok {
			missing = append(missing, fmt.Sprintf("%d/%d", k, first.Shard.Count))
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%w: merge: part %s missing (field shard.index; have %d of %d): give every part's folder, or run the missing part with lockbench bench --shard %s", errs.ErrUsage, strings.Join(missing, ", "), len(parts), first.Shard.Count, missing[0])
	}
	type slot struct {
		run  Run
		kind int // 0 runs, 1 sweep, 2 cost
		ok   bool
	}
	plan := make([]slot, first.Shard.Planned)
	place := func(dir string, kind int, positions []int, runs []Run) error {
		if len(positions) != len(runs) {
			return fmt.Errorf("%w: merge: %s: field shard lists %d positions for %d runs: the file was edited; rerun that part", errs.ErrUsage, dir, len(positions), len(runs))
		}
		for k, p := range positions {
			if p < 0 || p >= len(plan) {
				return fmt.Errorf("%w: merge: %s: field shard: position %d is outside the plan of %d runs: the file was edited; rerun that part", errs.ErrUsage, dir, p, len(plan))
			}
			if plan[p].ok {
				return fmt.Errorf("%w: merge: %s: field shard: run %d of the plan (%s/%s seed %d) is held by another part too: give parts of one bench", errs.ErrUsage, dir, p, runs[k].Strategy, runs[k].Scenario, runs[k].Seed)
			}
			plan[p] = slot{run: runs[k], kind: kind, ok: true}
		}
		return nil
	}
	out := *first
	out.Shard, out.Runs, out.Sweep, out.Cost, out.Redis = nil, nil, nil, nil, ""
	out.Command = command
	for _, i := range sortedByIndex(parts) {
		f, dir := parts[i], folders[i]
		for _, k := range []struct {
			kind      int
			positions []int
			runs      []Run
		}{{0, f.Shard.Runs, f.Runs}, {1, f.Shard.Sweep, f.Sweep}, {2, f.Shard.Cost, f.Cost}} {
			if err := place(dir, k.kind, k.positions, k.runs); err != nil {
				return nil, err
			}
		}
		if out.Redis == "" {
			out.Redis = f.Redis
		}
		if f.Started < out.Started {
			out.Started = f.Started
		}
		if f.Finished > out.Finished {
			out.Finished = f.Finished
		}
		out.Shards = append(out.Shards, ShardPart{Index: f.Shard.Index, Folder: dir, Host: f.Host, Started: f.Started, Finished: f.Finished,
			Runs: len(f.Runs) + len(f.Sweep) + len(f.Cost)})
		if f.Shard.Index == 1 {
			out.Host = f.Host
		}
	}
	for p, s := range plan {
		switch {
		case !s.ok:
			return nil, fmt.Errorf("%w: merge: run %d of the plan of %d is in no part (field shard): the parts were not written by one bench; rerun them with one lockbench build", errs.ErrUsage, p, len(plan))
		case s.kind == 0:
			out.Runs = append(out.Runs, s.run)
		case s.kind == 1:
			out.Sweep = append(out.Sweep, s.run)
		default:
			out.Cost = append(out.Cost, s.run)
		}
	}
	return &out, nil
}

// sortedByIndex returns the indexes of parts in shard order.
func sortedByIndex(parts []*File) []int {
	idx := make([]int, len(parts))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return cmp.Compare(parts[a].Shard.Index, parts[b].Shard.Index) })
	return idx
}

// HostsDiffer returns, for a merged File whose parts ran on machines of
// different kinds (CPU model, cores, CPU quota or OS), one line naming
// them, so that the report warns that figures of runs in different
// parts do not compare; "" when every part ran on one kind of machine.
func HostsDiffer(f *File) string {
	kinds := map[string][]string{}
	var order []string
	for _, p := range f.Shards {
		k := fmt.Sprintf("%d× %s, %s", p.Host.CPUs, p.Host.CPUModel, p.Host.OS)
		if p.Host.CPUQuotaCores > 0 {
			k += fmt.Sprintf(", quota %.1f cores", p.Host.CPUQuotaCores)
		}
		if _, ok := kinds[k]; !ok {
			order = append(order, k)
		}
		kinds[k] = append(kinds[k], fmt.Sprint(p.Index))
	}
	if len(order) < 2 {
		return ""
	}
	var parts []string
	for _, k := range order {
		parts = append(parts, fmt.Sprintf("part %s on %s", strings.Join(kinds[k], ", "), k))
	}
	return "the parts ran on different kinds of machine (" + strings.Join(parts, "; ") + "): throughput and latency of cells in different parts do not compare; the cost runs and the client sweep each ran in one part"
}

// firstLine returns s up to its first newline.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
