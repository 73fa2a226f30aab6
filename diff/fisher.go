package diff

import (
	"math"
)

// FisherGreater is the one-sided p-value of Fisher's exact test (Fisher
// 1935; Agresti, Categorical Data Analysis, §3.5) that side B shows an
// event in a larger share of its runs than side A: bBad of bN runs of B
// against aBad of aN runs of A. Under the null hypothesis (both sides
// share one rate) the count of B's runs with the event, given the total
// aBad+bBad, is hypergeometric; the p-value is the probability of bBad or
// more. It is 1 when a side has no runs. Exact: the hypergeometric terms
// are summed from log-factorials (math.Lgamma), fine for the run counts
// lockbench uses (up to a few thousand).
func FisherGreater(aBad, aN, bBad, bN int) float64 {
	if aN <= 0 || bN <= 0 || aBad < 0 || bBad < 0 || aBad > aN || bBad > bN {
		return 1
	}
	n := aN + bN     // runs in all
	k := aBad + bBad // runs with the event in all
	p := 0.0
	for x := bBad; x <= min(k, bN); x++ {
		p += math.Exp(lchoose(k, x) + lchoose(n-k, bN-x) - lchoose(n, bN))
	}
	return min(p, 1)
}

// lchoose is log(n choose k).
func lchoose(n, k int) float64 {
	if k < 0 || k > n {
		return math.Inf(-1)
	}
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}

// Power is the share of diffs, each with n runs a side, in which
// FisherGreater shows (p < alpha) a difference between a lock that shows an
// event in share rate of its runs (B, binomial) and one that never does
// (A): Σₖ P(Binomial(n, rate) = k)·[FisherGreater(0, n, k, n) < alpha].
// With A at 0, FisherGreater(0, n, k, n) = C(n,k)/C(2n,k) ≈ 2⁻ᵏ for k ≪ n:
// B needs about log₂(1/alpha) runs with the event (5 at alpha 0.05)
// whatever n, so the runs needed grow as about 5/rate (see RunsToShow).
func Power(rate float64, n int, alpha float64) float64 {
	if n <= 0 || rate <= 0 {
		return 0
	}
	if rate >= 1 {
		// Every run shows it: k = n surely.
		if Below(FisherGreater(0, n, n, n), alpha) {
			return 1
		}
		return 0
	}
	pw := 0.0
	for k := 1; k <= n; k++ {
		if !Below(FisherGreater(0, n, k, n), alpha) {
			continue
		}
		pw += math.Exp(lchoose(n, k) + float64(k)*math.Log(rate) + float64(n-k)*math.Log1p(-rate))
	}
	return min(pw, 1)
}

// Below reports whether p-value p is below alpha (significant), allowing
// for rounding in the sums: 1/20 computed from logarithms is not below
// 0.05.
func Below(p, alpha float64) bool { return p < alpha*(1-1e-9) }

// DefaultPower is the power RunsToShow asks for: a difference that exists
// is shown in 80% of diffs (Cohen's convention).
const DefaultPower = 0.8

// maxRunsToShow bounds RunsToShow's search.
const maxRunsToShow = 100000

// RunsToShow is the fewest runs a side with which a diff shows (Fisher's
// exact test, p < alpha, with the given power) that one lock shows an
// event in share rate of its runs while the other never does; 0 when
// rate is not in (0, 1] or more than 100 000 runs would be needed.
//
// Derivation: seeing the event at all in n runs has probability
// 1−(1−rate)ⁿ, so n ≥ log(1−power)/log(1−rate) runs are needed before any
// test can start (the "⌈log α / log(1−p)⌉" rule for a single witness);
// and a one-sided Fisher test of k runs with the event against none needs
// C(n,k)/C(2n,k) < alpha, about k ≥ log₂(1/alpha) = 5 at alpha 0.05
// (4 when every run shows it: 1/70). So the runs needed grow as about
// 5/rate: rate 1 needs 4, 0.5 about 12, 0.1 about 70, 0.01 about 700
// (computed exactly by Power, not by this rule of thumb).
func RunsToShow(rate, alpha, power float64) int {
	if !(rate > 0 && rate <= 1) {
		return 0
	}
	for n := 1; n <= maxRunsToShow; n = next(n) {
		if Power(rate, n, alpha) >= power {
			return n
		}
	}
	return 0
}

// next is the search step of RunsToShow: one at a time up to 2000, then
// 1/16 larger.
func next(n int) int {
	if n < 2000 {
		return n + 1
	}
	return n + n/16
}
