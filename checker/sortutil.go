package checker

import (
	"cmp"
	"slices"
)

// sortStable sorts s by c as sort.SliceStable would (equal elements keep
// their order), with pdqsort on a permutation and one copy of each element
// at the end: a stable sort through reflection swapped the large elements
// of long histories O(n log² n) times (docs/performance.md).
func sortStable[T any](s []T, c func(a, b *T) int) {
	if len(s) < 2 {
		return
	}
	perm := make([]int32, len(s))
	for i := range perm {
		perm[i] = int32(i)
	}
	slices.SortFunc(perm, func(i, j int32) int {
		if r := c(&s[i], &s[j]); r != 0 {
			return r
		}
		return cmp.Compare(i, j)
	})
	tmp := make([]T, len(s))
	for k, i := range perm {
		tmp[k] = s[i]
	}
	copy(s, tmp)
}

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
