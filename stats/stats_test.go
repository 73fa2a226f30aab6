package stats

import (
	"math"
	"testing"
)

func TestJainIndex(t *testing.T) {
	tests := []struct {
		name    string
		in      []float64
		want    float64
		wantErr bool
	}{
		{"equal", []float64{5, 5, 5, 5}, 1, false},
		{"one has all", []float64{12, 0, 0, 0}, 0.25, false},
		{"two of four", []float64{3, 3, 0, 0}, 0.5, false},
		{"uneven", []float64{1, 2, 3}, 36.0 / 42, false},
		{"single client", []float64{7}, 1, false},
		{"no grants", []float64{0, 0}, 0, false},
		{"empty", nil, 0, false},
		{"negative", []float64{1, -1}, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := JainIndex(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if math.Abs(got-tt.want) > 1e-12 {
				t.Errorf("JainIndex(%v) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

func TestPercentiles(t *testing.T) {
	oneTo100 := make([]float64, 100)
	for i := range oneTo100 {
		oneTo100[100-1-i] = float64(i + 1) // descending: Percentiles must sort
	}
	tests := []struct {
		name    string
		in      []float64
		want    Latency
		wantErr bool
	}{
		{"empty", nil, Latency{}, false},
		{"one", []float64{7}, Latency{P50: 7, P90: 7, P99: 7, P999: 7, Max: 7, Samples: 1}, false},
		// Linear interpolation: rank = p/100·(n−1) over 1..100.
		{"1..100", oneTo100, Latency{P50: 50.5, P90: 90.1, P99: 99.01, P999: 99.901, Max: 100, Samples: 100}, false},
		{"two", []float64{10, 20}, Latency{P50: 15, P90: 19, P99: 19.9, P999: 19.99, Max: 20, Samples: 2}, false},
		{"NaN", []float64{1, math.NaN()}, Latency{}, true},
		{"negative", []float64{1, -1}, Latency{}, true},
		{"infinite", []float64{math.Inf(1)}, Latency{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Percentiles(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			const eps = 1e-9
			if math.Abs(got.P50-tt.want.P50) > eps || math.Abs(got.P90-tt.want.P90) > eps ||
				math.Abs(got.P99-tt.want.P99) > eps || math.Abs(got.P999-tt.want.P999) > eps || got.Max != tt.want.Max || got.Samples != tt.want.Samples {
				t.Errorf("Percentiles = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestSpreadOf(t *testing.T) {
	tests := []struct {
		in   []float64
		want Spread
	}{
		{nil, Spread{}},
		{[]float64{3}, Spread{Median: 3, Min: 3, Max: 3, N: 1}},
		{[]float64{5, 1, 3}, Spread{Median: 3, Min: 1, Max: 5, N: 3}},
		{[]float64{4, 1, 2, 10}, Spread{Median: 3, Min: 1, Max: 10, N: 4}},
		{[]float64{math.NaN(), 2}, Spread{Median: 2, Min: 2, Max: 2, N: 1}},
	}
	for _, tt := range tests {
		if got := SpreadOf(tt.in); got != tt.want {
			t.Errorf("SpreadOf(%v) = %+v, want %+v", tt.in, got, tt.want)
		}
	}
}
