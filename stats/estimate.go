package stats

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"

	"golang.org/x/perf/benchmath"
)

// Confidence is the confidence level of every interval lockbench reports
// (0.95: a 95% interval), as benchstat uses.
const Confidence = 0.95

// Alpha is the significance level of every comparison lockbench reports
// (0.05), benchmath's default: a difference is significant when the
// Mann-Whitney U test's p-value is below it.
const Alpha = 0.05

// MinIntervalSamples is the fewest samples for which benchmath gives a
// finite 95% interval for a median (6: with 5 the distribution-free
// interval around the median would need a confidence below 95%).
const MinIntervalSamples = 6

// Estimate is a figure over samples (windows of runs, see Window): the
// median with its 95% confidence interval, computed as benchstat does
// (golang.org/x/perf/benchmath, AssumeNothing: distribution-free order
// statistics around the sample median). Its unit is the figure's. With
// fewer than MinIntervalSamples samples the interval is unbounded: Low is
// -Inf, High +Inf or both (5 samples give [-Inf, max]), written as null in
// JSON. With N == 0 every field is zero.
type Estimate struct {
	// Median is the sample median.
	Median float64
	// Low and High bound the 95% confidence interval of the median.
	Low, High float64
	// N is how many samples went in.
	N int
}

// EstimateOf returns the Estimate of values (NaN values are left out);
// values itself is not modified.
func EstimateOf(values []float64) Estimate {
	vs := finite(values)
	if len(vs) == 0 {
		return Estimate{}
	}
	s := benchmath.AssumeNothing.Summary(benchmath.NewSample(vs, &benchmath.DefaultThresholds), Confidence)
	return Estimate{Median: s.Center, Low: s.Lo, High: s.Hi, N: len(vs)}
}

// Bounded reports whether the interval is finite (enough samples).
func (e Estimate) Bounded() bool {
	return e.N > 0 && !math.IsInf(e.Low, 0) && !math.IsInf(e.High, 0)
}

// String writes "median [low, high] (n=N)", "median [no interval: N < 6]
// (n=N)" when the interval is unbounded, and "—" without samples.
func (e Estimate) String() string {
	switch {
	case e.N == 0:
		return "—"
	case !e.Bounded():
		return fmt.Sprintf("%s [no interval: n < %d] (n=%d)", FormatNum(e.Median), MinIntervalSamples, e.N)
	}
	return fmt.Sprintf("%s [%s, %s] (n=%d)", FormatNum(e.Median), FormatNum(e.Low), FormatNum(e.High), e.N)
}

// estimateJSON is Estimate as written in results.json: an unbounded end of
// the interval is null.
type estimateJSON struct {
	Median float64  `json:"median"`
	Low    *float64 `json:"low"`
	High   *float64 `json:"high"`
	N      int      `json:"n"`
}

// MarshalJSON writes {"median", "low", "high", "n"}; an infinite bound is null.
func (e Estimate) MarshalJSON() ([]byte, error) {
	j := estimateJSON{Median: e.Median, N: e.N}
	if !math.IsInf(e.Low, 0) {
		j.Low = &e.Low
	}
	if !math.IsInf(e.High, 0) {
		j.High = &e.High
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads what MarshalJSON writes; a null low is -Inf and a
// null high +Inf (when n > 0).
func (e *Estimate) UnmarshalJSON(b []byte) error {
	var j estimateJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*e = Estimate{Median: j.Median, N: j.N}
	switch {
	case j.Low != nil:
		e.Low = *j.Low
	case j.N > 0:
		e.Low = math.Inf(-1)
	}
	switch {
	case j.High != nil:
		e.High = *j.High
	case j.N > 0:
		e.High = math.Inf(1)
	}
	return nil
}

// Significance is the outcome of testing whether two samples of one
// figure (OLD and NEW, or strategy A and B) differ: the Mann-Whitney U
// test at Alpha, as benchstat runs it (golang.org/x/perf/benchmath,
// AssumeNothing.Compare).
type Significance struct {
	// P is the test's p-value (1 when it could not run, e.g. no samples
	// on a side).
	P float64 `json:"p"`
	// N1 and N2 are the samples on each side.
	N1 int `json:"n1"`
	N2 int `json:"n2"`
	// Significant is true when P < Alpha.
	Significant bool `json:"significant"`
	// Delta is benchstat's "vs base" text: "~" when the difference is
	// not significant, else the change of the medians from the first to
	// the second sample as a signed percentage ("+12.30%"), "?" when
	// the first median is 0.
	Delta string `json:"delta"`
	// Note says why no difference can be detected, e.g. "need >= 4
	// samples to detect a difference at alpha level 0.05"; empty when
	// the samples suffice.
	Note string `json:"note,omitempty"`
}

// CompareSamples tests whether samples a and b differ (Mann-Whitney U, Alpha),
// with the change of b's median from a's. NaN values are left out.
func CompareSamples(a, b []float64) Significance {
	as, bs := finite(a), finite(b)
	if len(as) == 0 || len(bs) == 0 {
		return Significance{P: 1, N1: len(as), N2: len(bs), Delta: "~", Note: "no samples on a side"}
	}
	sa := benchmath.NewSample(as, &benchmath.DefaultThresholds)
	sb := benchmath.NewSample(bs, &benchmath.DefaultThresholds)
	c := benchmath.AssumeNothing.Compare(sa, sb)
	ma := benchmath.AssumeNothing.Summary(sa, Confidence).Center
	mb := benchmath.AssumeNothing.Summary(sb, Confidence).Center
	out := Significance{P: c.P, N1: c.N1, N2: c.N2, Significant: c.P < c.Alpha, Delta: c.FormatDelta(ma, mb)}
	if len(c.Warnings) > 0 {
		out.Note = c.Warnings[0].Error()
	}
	return out
}

// String writes the comparison as benchstat does: "~ (p=0.310 n=6)",
// "-12.30% (p=0.002 n=6+12)".
func (s Significance) String() string {
	n := fmt.Sprintf("n=%d+%d", s.N1, s.N2)
	if s.N1 == s.N2 {
		n = fmt.Sprintf("n=%d", s.N1)
	}
	return fmt.Sprintf("%s (p=%.3f %s)", s.Delta, s.P, n)
}

// finite returns a sorted copy of values without NaN and infinities.
func finite(values []float64) []float64 {
	vs := make([]float64, 0, len(values))
	for _, v := range values {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			vs = append(vs, v)
		}
	}
	slices.Sort(vs)
	return vs
}
