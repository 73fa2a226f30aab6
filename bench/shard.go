package bench

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lockbench/lockbench/figures"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/internal/errs"
	"github.com/lockbench/lockbench/outdir"
	"github.com/lockbench/lockbench/results"
)

// Shard names one part of a bench split over several runners (lockbench
// bench --shard I/N): Index from 1 to Count. The zero Shard is the whole
// bench.
type Shard struct {
	// Index is the part this runner runs, from 1.
	Index int
	// Count is how many parts the bench is split into.
	Count int
}

// MaxShards is the largest --shard count: more parts than the ci
// profile has cells leave shards empty.
const MaxShards = 64

// Whole reports whether s is the whole bench (no --shard, or 1/1).
func (s Shard) Whole() bool { return s.Count <= 1 }

// String writes "I/N".
func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// ParseShard parses --shard's "I/N" (1 ≤ I ≤ N ≤ MaxShards); the error
// wraps errs.ErrUsage and says what the flag takes.
func ParseShard(v string) (Shard, error) {
	i, n, ok := strings.Cut(strings.TrimSpace(v), "/")
	index, err1 := strconv.Atoi(i)
	count, err2 := strconv.Atoi(n)
	switch {
	case !ok || err1 != nil || err2 != nil:
		return Shard{}, fmt.Errorf("%w: --shard %q: want I/N, e.g. --shard 2/4 for the second of four parts", errs.ErrUsage, v)
	case count < 1 || count > MaxShards:
		return Shard{}, fmt.Errorf("%w: --shard %s: want N from 1 to %d", errs.ErrUsage, v, MaxShards)
	case index < 1 || index > count:
		return Shard{}, fmt.Errorf("%w: --shard %s: want I from 1 to N (%d)", errs.ErrUsage, v, count)
	}
	return Shard{Index: index, Count: count}, nil
}

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
func shardInfo(sh Shard, positions []int, nSpecs, nSweep, nCost int, hunt bool) *results.ShardInfo {
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

// WriteMerged writes a merged bench f (results.MergeShards of the
// parts read from dirs) into out as one bench would have: every file of
// each part's histories folder copied into out/histories (two parts
// holding one file name is an error: they were not parts of one bench),
// then results.json, bench.txt, the plots and the report (finish keeps
// f's own Finished). out must not be one of dirs, and must hold no
// earlier results (the caller clears it: outdir.ReplaceEarlier). Errors
// are outdir.OutputError (exit 3) for files that cannot be written,
// wrapping errs.ErrUsage for a name two parts hold.
func WriteMerged(out string, dirs []string, f *results.File) error {
	copied := map[string]string{} // file name → the part that had it
	for _, dir := range dirs {
		src := filepath.Join(dir, "histories")
		entries, err := os.ReadDir(src)
		if errors.Is(err, fs.ErrNotExist) {
			continue // a part with no run (more parts than cells)
		}
		if err != nil {
			return fmt.Errorf("merge: read %s: %w", src, err)
		}
		if err := os.MkdirAll(filepath.Join(out, "histories"), 0o755); err != nil {
			return outdir.OutDirError(out, err)
		}
		for _, e := range entries {
			if !e.Type().IsRegular() {
				continue
			}
			if other, dup := copied[e.Name()]; dup {
				return fmt.Errorf("%w: merge: %s and %s both hold histories/%s: they are not parts of one bench", errs.ErrUsage, other, dir, e.Name())
			}
			copied[e.Name()] = dir
			if err := copyFile(filepath.Join(src, e.Name()), filepath.Join(out, "histories", e.Name())); err != nil {
				return outdir.OutputError(out, err, outdir.OutputFix)
			}
		}
	}
	if err := figures.Write(out, f); err != nil {
		return outdir.OutputError(out, err, outdir.OutputFix)
	}
	if err := Report(out, f); err != nil {
		return outdir.OutputError(out, err, outdir.OutputFix)
	}
	return nil
}

// CopyTree copies the regular files under src into dst (made), keeping
// their relative paths: the hunt folder of the part that ran the
// profile's hunt, for lockbench merge.
func CopyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(to, 0o755)
		case d.Type().IsRegular():
			return copyFile(path, to)
		}
		return nil
	})
}

// copyFile copies the regular file src to dst (created or truncated,
// mode 0644).
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("merge: copy %s: %w", src, err)
	}
	if err := out.Close(); err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	return nil
}
