package measure

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
