package diff

import (
	"math"
	"testing"
)

// TestFisherGreater checks the one-sided p-value against values computed
// by hand from the hypergeometric distribution.
func TestFisherGreater(t *testing.T) {
	for _, tt := range []struct {
		aBad, aN, bBad, bN int
		want               float64
	}{
		{0, 4, 4, 4, 1.0 / 70},   // C(4,4)/C(8,4)
		{0, 3, 3, 3, 1.0 / 20},   // C(3,3)/C(6,3): not below 0.05
		{0, 5, 5, 5, 1.0 / 252},  // C(5,5)/C(10,5)
		{0, 10, 1, 10, 0.5},      // one run of twenty
		{2, 2, 2, 2, 1},          // both always
		{3, 5, 0, 5, 1},          // B better: the one-sided p is 1
		{1, 5, 4, 5, 0.10317460}, // P(X≥4 | N=10, K=5, n=5) = (C(5,4)C(5,1)+1)/252 = 26/252
	} {
		got := FisherGreater(tt.aBad, tt.aN, tt.bBad, tt.bN)
		if math.Abs(got-tt.want) > 1e-6 {
			t.Errorf("FisherGreater(%d/%d vs %d/%d) = %.6f, want %.6f", tt.aBad, tt.aN, tt.bBad, tt.bN, got, tt.want)
		}
	}
}

// TestRunsToShow: every run showing the event needs 4 runs a side (1/70
// < 0.05, 1/20 is not); rarer events need about 5/rate.
func TestRunsToShow(t *testing.T) {
	if got := RunsToShow(1, 0.05, DefaultPower); got != 4 {
		t.Errorf("RunsToShow(1) = %d, want 4", got)
	}
	prev := 0
	for _, rate := range []float64{0.5, 0.2, 0.1, 0.01} {
		n := RunsToShow(rate, 0.05, DefaultPower)
		if n <= prev || float64(n) < 4/rate || float64(n) > 12/rate {
			t.Errorf("RunsToShow(%g) = %d: want more than %d, within 4/rate..12/rate", rate, n, prev)
		}
		prev = n
	}
	if RunsToShow(0, 0.05, DefaultPower) != 0 {
		t.Error("RunsToShow(0) != 0")
	}
}
