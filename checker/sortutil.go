package checker

import (
	"cmp"
	"slices"
)

// sortIndexStable sorts idx, indexes of elements ordered by key, stably
// (equal keys keep their order in idx).
func sortIndexStable(idx []int, key func(i int) int64) {
	if len(idx) < 2 {
		return
	}
	type entry struct {
		k   int64
		pos int32
		i   int
	}
	es := make([]entry, len(idx))
	for p, i := range idx {
		es[p] = entry{key(i), int32(p), i}
	}
	slices.SortFunc(es, func(a, b entry) int {
		if r := cmp.Compare(a.k, b.k); r != 0 {
			return r
		}
		return cmp.Compare(a.pos, b.pos)
	})
	for p := range es {
		idx[p] = es[p].i
	}
}
