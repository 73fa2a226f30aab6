// Package stats holds the statistics of lockbench's figures: latency
// percentiles (montanaflynn/stats), Jain's fairness index, spreads over
// repeats, and medians with 95% intervals and Mann-Whitney U tests over
// samples as benchstat computes them (golang.org/x/perf/benchmath), and how
// the reports write a number. It knows nothing of runs or files.
package stats

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	mstats "github.com/montanaflynn/stats"
)

// Latency holds percentiles in milliseconds.
type Latency struct {
	P50 float64 `json:"p50"`
	P90 float64 `json:"p90"`
	P99 float64 `json:"p99"`
	// P999 is the 99.9th percentile.
	P999 float64 `json:"p999"`
	Max  float64 `json:"max"`
	// Samples is how many latencies went in.
	Samples int `json:"samples"`
}

// Percentiles returns the 50th, 90th, 99th and 99.9th percentiles, the maximum and the
// count of samplesMs (latencies in milliseconds; the result is in
// milliseconds too). Percentiles use linear interpolation between the two
// closest ranks (rank = p/100·(n−1), Hyndman and Fan's type 7), as
// github.com/montanaflynn/stats computes them. An empty input gives the zero
// Latency and no error; a negative, NaN or infinite sample gives an error
// naming its index.
func Percentiles(samplesMs []float64) (Latency, error) {
	if len(samplesMs) == 0 {
		return Latency{}, nil
	}
	for i, v := range samplesMs {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return Latency{}, fmt.Errorf("stats: percentiles: sample %d is %v ms, want a finite latency ≥ 0", i, v)
		}
	}
	// Sorted once here: mstats.Percentile sorts a copy of its input at
	// every call, which costs nothing more on sorted input (pdqsort
	// finds it sorted in one pass); the values are the same.
	data := mstats.Float64Data(slices.Sorted(slices.Values(samplesMs)))
	var l Latency
	for _, q := range []struct {
		p   float64
		dst *float64
	}{{50, &l.P50}, {90, &l.P90}, {99, &l.P99}, {99.9, &l.P999}} {
		v, err := data.Percentile(q.p)
		if err != nil {
			return Latency{}, fmt.Errorf("stats: percentile %v: %w", q.p, err)
		}
		*q.dst = v
	}
	maxV, err := data.Max()
	if err != nil {
		return Latency{}, fmt.Errorf("stats: max: %w", err)
	}
	l.Max = maxV
	l.Samples = len(samplesMs)
	return l, nil
}

// JainIndex returns Jain's fairness index of xs, (Σx)²/(n·Σx²) (Jain, Chiu
// and Hawe, "A Quantitative Measure of Fairness and Discrimination for
// Resource Allocation in Shared Computer Systems", DEC-TR-301, 1984): 1 when
// every x is equal, 1/n when one x holds everything. No values, or values
// that are all zero, give 0 (nothing was shared). Negative values are an
// error naming their index.
func JainIndex(xs []float64) (float64, error) {
	var sum, sq float64
	for i, x := range xs {
		if x < 0 || math.IsNaN(x) || math.IsInf(x, 0) {
			return 0, fmt.Errorf("stats: fairness: value %d is %v, want a finite count ≥ 0", i, x)
		}
		sum += x
		sq += x * x
	}
	if sq == 0 {
		return 0, nil
	}
	return sum * sum / (float64(len(xs)) * sq), nil
}

// Spread is a statistic over repeats (seeds) of one measurement: the median
// and the range. Its unit is the measurement's. N is how many values went in;
// with N == 0 every field is zero.
type Spread struct {
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	N      int     `json:"n"`
}

// SpreadOf returns the median, minimum and maximum of values (the median of an
// even count is the mean of the two middle values). NaN values are skipped;
// no values give the zero Spread.
func SpreadOf(values []float64) Spread {
	vs := make([]float64, 0, len(values))
	for _, v := range values {
		if !math.IsNaN(v) {
			vs = append(vs, v)
		}
	}
	if len(vs) == 0 {
		return Spread{}
	}
	data := mstats.Float64Data(vs)
	// Errors are impossible here: the input is non-empty.
	med, _ := data.Median()
	lo, _ := data.Min()
	hi, _ := data.Max()
	return Spread{Median: med, Min: lo, Max: hi, N: len(vs)}
}

// FormatNum writes a figure as lockbench's reports do: three significant
// digits or fewer, without an exponent ("1002", "11.0", "2.25", "0.225");
// NaN and infinities as strconv writes them.
func FormatNum(v float64) string {
	a := math.Abs(v)
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return strconv.FormatFloat(v, 'f', -1, 64)
	case v == 0:
		return "0"
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}
