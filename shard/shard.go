// Package shard names one part of a bench split over several runners
// (lockbench bench --shard I/N): the part a runner runs (Shard) and the
// flag that asks for it (Parse). bench plans which cells each part runs;
// lockbench merge joins the parts' folders (package merge).
package shard

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/lockbench/lockbench/internal/errs"
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

// Parse parses --shard's "I/N" (1 ≤ I ≤ N ≤ MaxShards); the error
// wraps errs.ErrUsage and says what the flag takes.
func Parse(v string) (Shard, error) {
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
