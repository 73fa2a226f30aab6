package plots

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// maxCDFPoints caps the points drawn per CDF line, keeping the SVG small.
const maxCDFPoints = 2000

// LatencyCDF draws one cumulative distribution line per strategy: for each
// latency x (ms, logarithmic axis over whole decades), the share of acquires
// that took at most x. series maps a strategy name to its latency samples in
// ms; samples that are not positive and finite are left out (a log axis
// cannot place them). Each line has its strategy's colour and dash pattern
// (StrategyColor), and is drawn from at most 2000 evenly spaced
// order statistics (the largest sample always included); the legend is right
// of the plot, so it covers no line; a strategy of series without a
// positive sample (no grant) is named under the chart. It returns an
// error wrapping ErrNoData when no series has a positive sample, else
// errors from writing the files.
func LatencyCDF(series map[string][]float64, prefix string) error {
	p := newPlot("Acquire latency CDF", "acquire latency (ms, log scale)", "share of acquires ≤ latency (0–1)")
	lo, hi := math.Inf(1), 0.0
	var names []string
	sorted := map[string][]float64{}
	for _, name := range styleOrder(sortedKeys(series)) {
		xs := make([]float64, 0, len(series[name]))
		for _, v := range series[name] {
			if v > 0 && !math.IsInf(v, 0) {
				xs = append(xs, v)
			}
		}
		if len(xs) == 0 {
			continue
		}
		slices.Sort(xs)
		lo, hi = min(lo, xs[0]), max(hi, xs[len(xs)-1])
		names = append(names, name)
		sorted[name] = xs
	}
	if len(names) == 0 {
		return fmt.Errorf("%w: latency CDF: no positive latency sample", ErrNoData)
	}
	var notes []string
	if none := slices.DeleteFunc(styleOrder(sortedKeys(series)), func(n string) bool { return slices.Contains(names, n) }); len(none) > 0 {
		notes = append(notes, "No line for "+strings.Join(none, ", ")+": no acquire latency (no grant).")
	}
	axis := newLogAxis(lo, hi)
	for _, name := range names {
		xs := sorted[name]
		step := max(1, len(xs)/maxCDFPoints)
		pts := make(plotter.XYs, 0, len(xs)/step+1)
		for j := 0; j < len(xs); j += step {
			pts = append(pts, plotter.XY{X: axis.pos(xs[j]), Y: float64(j+1) / float64(len(xs))})
		}
		if last := len(xs) - 1; last%step != 0 {
			pts = append(pts, plotter.XY{X: axis.pos(xs[last]), Y: 1})
		}
		l, err := plotter.NewLine(pts)
		if err != nil {
			return fmt.Errorf("plots: %w", err)
		}
		l.StepStyle = plotter.PostStep
		l.Color = StrategyColor(name)
		l.Dashes = strategyDashes(name)
		l.Width = vg.Points(1.5)
		p.Add(l)
		p.Legend.Add(name, l)
	}
	p.Add(plotter.NewGrid())
	p.Y.Min, p.Y.Max = 0, 1
	axis.apply(&p.X)
	return saveWithNotes(p, prefix, Width, Height, notes)
}

// XY is one point of ThroughputVsClients: X clients, Y grants per
// second. Low and High bound Y's 95% interval, drawn as a whisker; both 0
// (or not finite) means there is none.
type XY struct {
	X, Y      float64
	Low, High float64
}

// ThroughputVsClients draws one line with points per strategy: grants per
// second (Y, from 0) against the number of clients (X, a log axis when
// every count is positive, with a tick at each count measured), with a
// whisker over each point's interval (XY.Low, XY.High) where it has one. points
// maps a strategy name to its points, in any order (they are sorted by X);
// points with a NaN or infinite coordinate are left out. Each line has its
// strategy's colour, dashes and marker (StrategyColor); the legend is right
// of the plot. It returns an error wrapping ErrNoData when no point is left, else
// errors from writing the files.
func ThroughputVsClients(points map[string][]XY, prefix string) error {
	return clientLines(points, "Throughput against the number of clients", prefix)
}

// Capacity draws the capacity curves of package results' CapacityOf as
// ThroughputVsClients draws the client sweep: grants per second against
// the number of clients, each client on a key of its own (no
// contention), one line per strategy, whiskers over the 95% intervals. Its
// errors are ThroughputVsClients'.
func Capacity(points map[string][]XY, prefix string) error {
	return clientLines(points, "Capacity: grants/s against clients, a key per client (no contention)", prefix)
}

// clientLines draws ThroughputVsClients and Capacity under title.
func clientLines(points map[string][]XY, title, prefix string) error {
	// Client counts are positive and spread over decades (1 to 256): a log
	// (base 2) X axis keeps 1, 4 and 16 apart. Any count ≤ 0: linear.
	logX := true
	for _, ps := range points {
		for _, pt := range ps {
			logX = logX && (pt.X > 0 || !finite(pt.X) || !finite(pt.Y))
		}
	}
	xLabel, xPos := "clients (number)", func(x float64) float64 { return x }
	if logX {
		xLabel, xPos = "clients (number, log scale)", math.Log2
	}
	p := newPlot("", xLabel, "throughput (grants/s)")
	i := 0
	var xs []float64 // distinct X values
	whiskers := false
	for _, name := range styleOrder(sortedKeys(points)) {
		var pts plotter.XYs
		var ws intervals
		for _, pt := range points[name] {
			if finite(pt.X) && finite(pt.Y) {
				pts = append(pts, plotter.XY{X: xPos(pt.X), Y: pt.Y})
				if finite(pt.Low) && finite(pt.High) && pt.High > pt.Low {
					ws = append(ws, interval{x: xPos(pt.X), y: pt.Y, low: pt.Low, high: pt.High})
				}
			}
		}
		if len(pts) == 0 {
			continue
		}
		slices.SortStableFunc(pts, func(a, b plotter.XY) int { return cmp.Compare(a.X, b.X) })
		for _, pt := range pts {
			if !slices.Contains(xs, pt.X) {
				xs = append(xs, pt.X)
			}
		}
		l, s, err := plotter.NewLinePoints(pts)
		if err != nil {
			return fmt.Errorf("plots: %w", err)
		}
		l.Color = StrategyColor(name)
		l.Dashes = strategyDashes(name)
		l.Width = vg.Points(1.5)
		s.Color = StrategyColor(name)
		s.Shape = strategyShape(name)
		s.Radius = vg.Points(3)
		p.Add(l, s)
		p.Legend.Add(name, l, s)
		if len(ws) > 0 {
			eb, err := plotter.NewYErrorBars(ws)
			if err != nil {
				return fmt.Errorf("plots: %w", err)
			}
			eb.LineStyle.Color, eb.LineStyle.Width = StrategyColor(name), vg.Points(1)
			eb.CapWidth = vg.Points(6)
			p.Add(eb)
			whiskers = true
		}
		i++
	}
	if i == 0 {
		return fmt.Errorf("%w: throughput against clients: no finite point", ErrNoData)
	}
	p.Title.Text = title
	if whiskers {
		p.Title.Text += " (whiskers: 95% interval)"
	}
	p.Add(plotter.NewGrid())
	if len(xs) <= 12 { // a tick at each number of clients measured
		slices.Sort(xs)
		var ticks []plot.Tick
		for _, x := range xs {
			label := x
			if logX {
				label = math.Round(math.Exp2(x)*1e6) / 1e6
			}
			ticks = append(ticks, plot.Tick{Value: x, Label: strconv.FormatFloat(label, 'g', -1, 64)})
		}
		p.X.Tick.Marker = plot.ConstantTicks(ticks)
	}
	p.Y.Min = min(p.Y.Min, 0)
	p.Y.Max *= 1.1
	if p.Y.Max <= p.Y.Min {
		p.Y.Max = p.Y.Min + 1
	}
	if p.X.Min == p.X.Max {
		p.X.Min, p.X.Max = p.X.Min-1, p.X.Max+1
	}
	return saveLegendRight(p, prefix)
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
