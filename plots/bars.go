package plots

import (
	"fmt"
	"image/color"

	"github.com/lockbench/lockbench/results"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// Throughput draws a bar per strategy: the median of grants per second over
// the given runs (its seeds), with min–max error bars where the seeds differ;
// the title says which (see spreadBars). Runs are grouped by
// strategy only, so the caller passes comparable runs (e.g. one fault-free
// scenario); runs with an Error are left out. It returns an error wrapping
// ErrNoData when no run completed, else errors from writing the files.
func Throughput(runs []results.Run, prefix string) error {
	names, spreads := byStrategy(runs, func(r results.Run) (float64, bool) {
		return r.ThroughputPerS, true
	})
	if len(names) == 0 {
		return fmt.Errorf("%w: throughput: no completed run", ErrNoData)
	}
	return spreadBars("Throughput per strategy", "grants/s", names, spreads, prefix)
}

// RoundTrips draws a bar per strategy: the median of Redis commands sent per
// grant over the given runs, with min–max error bars where the seeds differ.
// Runs with an Error or
// reporting 0 round trips (unknown) are left out. It returns an error
// wrapping ErrNoData when no run has the figure, else errors from writing
// the files.
func RoundTrips(runs []results.Run, prefix string) error {
	names, spreads := byStrategy(runs, func(r results.Run) (float64, bool) {
		return r.RoundTripsPerGrant, r.RoundTripsPerGrant > 0
	})
	if len(names) == 0 {
		return fmt.Errorf("%w: round trips: no run reports round trips per grant", ErrNoData)
	}
	return spreadBars("Redis round trips per grant", "Redis commands per grant", names, spreads, prefix)
}

// byStrategy groups the values value picks from completed runs by strategy,
// in the order strategies first appear, and returns each group's spread.
func byStrategy(runs []results.Run, value func(results.Run) (float64, bool)) ([]string, []results.Spread) {
	var names []string
	groups := map[string][]float64{}
	for _, r := range runs {
		if r.Error != "" {
			continue
		}
		v, ok := value(r)
		if !ok {
			continue
		}
		if _, seen := groups[r.Strategy]; !seen {
			names = append(names, r.Strategy)
		}
		groups[r.Strategy] = append(groups[r.Strategy], v)
	}
	spreads := make([]results.Spread, len(names))
	for i, n := range names {
		spreads[i] = results.SpreadOf(groups[n])
	}
	return names, spreads
}

// spreadPoints places each Spread at x = its index, y = its median, with
// errors down to its min and up to its max (plotter.XYer and YErrorer).
type spreadPoints []results.Spread

func (s spreadPoints) Len() int                    { return len(s) }
func (s spreadPoints) XY(i int) (float64, float64) { return float64(i), s[i].Median }
func (s spreadPoints) YError(i int) (float64, float64) {
	return s[i].Median - s[i].Min, s[i].Max - s[i].Median
}

// spreadBars draws one bar per name at its spread's median, with min–max
// error bars where some spread has a range. The title gets what the bars
// show: "(median over seeds, bars: min–max)" with a range, "(median over N
// seeds)" without one, "(one seed)" when every bar is a single run.
func spreadBars(title, yLabel string, names []string, spreads []results.Spread, prefix string) error {
	vals := make(plotter.Values, len(spreads))
	ranged := false
	for i, s := range spreads {
		vals[i] = s.Median
		ranged = ranged || s.Min != s.Max
	}
	p := newPlot(title+" "+seedsNote(spreads, ranged), "strategy", yLabel)
	bars, err := plotter.NewBarChart(vals, barWidth(len(names), 1))
	if err != nil {
		return fmt.Errorf("plots: %w", err)
	}
	bars.Color = seriesColor(0)
	bars.LineStyle.Width = 0
	p.Add(bars)
	if ranged {
		eb, err := plotter.NewYErrorBars(spreadPoints(spreads))
		if err != nil {
			return fmt.Errorf("plots: %w", err)
		}
		eb.LineStyle.Width = vg.Points(1.2)
		eb.CapWidth = barWidth(len(names), 1) / 3
		p.Add(eb)
	}
	p.Add(plotter.NewGrid())
	p.Y.Min = 0
	p.Y.Max *= 1.08 // headroom above the tallest bar or error bar
	if p.Y.Max <= 0 {
		p.Y.Max = 1
	}
	nominalX(p, names)
	return save(p, prefix)
}

// seedsNote says what a bar over spreads shows: "(one seed)" when every
// spread is one value, "(median over seeds, bars: min–max)" when ranged (some
// spread has a range, drawn as error bars), else "(median over N seeds)" or
// "(median over 2–3 seeds)".
func seedsNote(spreads []results.Spread, ranged bool) string {
	lo, hi := 0, 0
	for i, s := range spreads {
		if i == 0 || s.N < lo {
			lo = s.N
		}
		hi = max(hi, s.N)
	}
	switch {
	case hi <= 1:
		return "(one seed)"
	case ranged:
		return "(median over seeds, bars: min–max)"
	case lo == hi:
		return fmt.Sprintf("(median over %d seeds)", hi)
	}
	return fmt.Sprintf("(median over %d–%d seeds)", lo, hi)
}

// percentileColors shade p50 to max from light to dark blue (ColorBrewer
// "Blues"): the four figures are ordered, so their colours are too.
var percentileColors = [...]color.Color{
	color.RGBA{0x9e, 0xca, 0xe1, 0xff},
	color.RGBA{0x42, 0x92, 0xc6, 0xff},
	color.RGBA{0x08, 0x51, 0x9c, 0xff},
	color.RGBA{0x08, 0x30, 0x6b, 0xff},
}

// barWidth is the width of each of perGroup bars side by side in one of n
// categories across the plot, so a group fills about 70% of its slot.
func barWidth(n, perGroup int) vg.Length {
	w := (Width - 3*vg.Centimeter) / vg.Length(n) * 0.7 / vg.Length(perGroup)
	return min(w, max(1.5*vg.Centimeter, 0.75*vg.Centimeter*vg.Length(perGroup))/vg.Length(perGroup))
}

// percentileNames and percentileOf list the latency figures LatencyPercentiles draws.
var percentileNames = [...]string{"p50", "p90", "p99", "max"}

func percentileOf(l results.Latency, i int) float64 {
	return [...]float64{l.P50, l.P90, l.P99, l.Max}[i]
}

// LatencyPercentiles draws, per strategy, four bars side by side: the p50,
// p90, p99 and maximum of successful acquire latency in ms (the median of
// each over the given runs), on a logarithmic Y axis over whole decades, from
// the decade at or below the smallest figure to the one at or above the
// largest; the legend is right of the plot.
// Runs with an Error or without latency samples are left out; a figure of 0
// ms is drawn as an empty bar. It returns an error wrapping ErrNoData when no
// run has latency samples, else errors from writing the files.
func LatencyPercentiles(runs []results.Run, prefix string) error {
	var names []string
	groups := map[string][4][]float64{}
	for _, r := range runs {
		if r.Error != "" || r.AcquireLatencyMs.Samples == 0 {
			continue
		}
		g, seen := groups[r.Strategy]
		if !seen {
			names = append(names, r.Strategy)
		}
		for i := range percentileNames {
			g[i] = append(g[i], percentileOf(r.AcquireLatencyMs, i))
		}
		groups[r.Strategy] = g
	}
	if len(names) == 0 {
		return fmt.Errorf("%w: latency percentiles: no run with latency samples", ErrNoData)
	}
	w := barWidth(len(names), len(percentileNames))
	medians := make([][]float64, len(percentileNames))
	lo, hi := 0.0, 0.0
	seeds := make([]results.Spread, 0, len(names)) // for the title: how many seeds per strategy
	for _, n := range names {
		seeds = append(seeds, results.Spread{N: len(groups[n][0])})
	}
	p := newPlot("Acquire latency percentiles "+seedsNote(seeds, false), "strategy", "latency (ms, log scale)")
	for i := range percentileNames {
		medians[i] = make([]float64, len(names))
		for j, n := range names {
			v := results.SpreadOf(groups[n][i]).Median
			medians[i][j] = v
			if v > 0 {
				if lo == 0 || v < lo {
					lo = v
				}
				hi = max(hi, v)
			}
		}
	}
	if hi == 0 { // every latency was 0 ms: nothing to place on a log axis
		return fmt.Errorf("%w: latency percentiles: every latency is 0 ms", ErrNoData)
	}
	axis := newLogAxis(lo, hi) // up to the decade at or above the largest value
	for i, pn := range percentileNames {
		vals := make(plotter.Values, len(names))
		for j := range names {
			vals[j] = axis.pos(medians[i][j])
		}
		bars, err := plotter.NewBarChart(vals, w)
		if err != nil {
			return fmt.Errorf("plots: %w", err)
		}
		bars.Color = percentileColors[i]
		bars.LineStyle.Width = 0
		bars.Offset = (vg.Length(i) - vg.Length(len(percentileNames)-1)/2) * w
		p.Add(bars)
		p.Legend.Add(pn, bars)
	}
	p.Add(plotter.NewGrid())
	axis.apply(&p.Y)
	nominalX(p, names)
	return saveLegendRight(p, prefix)
}
