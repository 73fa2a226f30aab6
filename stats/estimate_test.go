package stats

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// TestEstimateOf checks the benchmath wrapper on synthetic samples: the
// median, the distribution-free 95% interval (the 1st and 6th order
// statistics of 6 samples, the 2nd and 9th of 10), no interval below 6
// samples, NaN left out.
func TestEstimateOf(t *testing.T) {
	inf := math.Inf(1)
	tests := []struct {
		name   string
		values []float64
		want   Estimate
		text   string
	}{
		{"none", nil, Estimate{}, "—"},
		{"NaN only", []float64{math.NaN()}, Estimate{}, "—"},
		{"one", []float64{5}, Estimate{Median: 5, Low: -inf, High: inf, N: 1}, "5.00 [no interval: n < 6] (n=1)"},
		{"five: too few for 95%", []float64{5, 1, 4, 2, 3}, Estimate{Median: 3, Low: -inf, High: 5, N: 5}, "3.00 [no interval: n < 6] (n=5)"},
		{"six: min and max", []float64{12, 10, 11, 13, 9, 14}, Estimate{Median: 11.5, Low: 9, High: 14, N: 6}, "11.5 [9.00, 14.0] (n=6)"},
		{"ten", []float64{10, 1, 9, 2, 8, 3, 7, 4, 6, 5}, Estimate{Median: 5.5, Low: 2, High: 9, N: 10}, "5.50 [2.00, 9.00] (n=10)"},
		{"NaN left out", []float64{1, 2, math.NaN(), 3, 4, 5, 6}, Estimate{Median: 3.5, Low: 1, High: 6, N: 6}, "3.50 [1.00, 6.00] (n=6)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := append([]float64(nil), tt.values...)
			got := EstimateOf(in)
			if got != tt.want {
				t.Errorf("EstimateOf(%v) = %+v, want %+v", tt.values, got, tt.want)
			}
			if s := got.String(); s != tt.text {
				t.Errorf("String() = %q, want %q", s, tt.text)
			}
			for i := range in {
				if in[i] != tt.values[i] && !math.IsNaN(in[i]) {
					t.Fatalf("EstimateOf changed its argument: %v", in)
				}
			}
		})
	}
}

// TestEstimateJSON: an unbounded interval is written as null and read back
// as infinite; a bounded one round-trips.
func TestEstimateJSON(t *testing.T) {
	for _, e := range []Estimate{
		{},
		{Median: 3, Low: math.Inf(-1), High: 5, N: 5},
		{Median: 5, Low: math.Inf(-1), High: math.Inf(1), N: 1},
		{Median: 11.5, Low: 9, High: 14, N: 6},
	} {
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		if e.N > 0 && math.IsInf(e.Low, 0) && !strings.Contains(string(b), `"low":null`) {
			t.Errorf("unbounded %+v written as %s", e, b)
		}
		var back Estimate
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if back != e {
			t.Errorf("%+v → %s → %+v", e, b, back)
		}
	}
}

// TestCompareSamples checks the Mann-Whitney U wrapper on synthetic
// samples: identical samples are "~", separated ones a signed change with
// benchstat's p-value, and three samples a side can never be significant
// at 0.05 (benchmath says so).
func TestCompareSamples(t *testing.T) {
	tests := []struct {
		name        string
		a, b        []float64
		significant bool
		text        string
		note        string
	}{
		{"same", []float64{1, 2, 3, 4, 5, 6}, []float64{1, 2, 3, 4, 5, 6}, false, "~ (p=1.000 n=6)", ""},
		{"overlapping", []float64{10, 12, 11, 13, 9, 14}, []float64{11, 13, 10, 12, 15, 9}, false, "~ (p=0.965 n=6)", ""},
		{"higher", []float64{10, 11, 12, 10, 11, 12}, []float64{20, 21, 22, 20, 21, 22}, true, "+90.91% (p=0.002 n=6)", ""},
		{"lower, unequal sizes", []float64{100, 101, 102, 103, 99, 98, 97, 100}, []float64{50, 51, 52, 49, 48, 50}, true, "-50.00% (p=0.001 n=8+6)", ""},
		{"three a side", []float64{1, 2, 3}, []float64{10, 11, 12}, false, "~ (p=0.100 n=3)", "need >= 4 samples to detect a difference at alpha level 0.05"},
		{"empty side", nil, []float64{1}, false, "~ (p=1.000 n=0+1)", "no samples on a side"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := CompareSamples(tt.a, tt.b)
			if got.Significant != tt.significant || got.String() != tt.text || got.Note != tt.note {
				t.Errorf("CompareSamples = %+v (%s), want significant %v, %q, note %q", got, got, tt.significant, tt.text, tt.note)
			}
		})
	}
}
