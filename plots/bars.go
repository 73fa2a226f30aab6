package plots

import (
	"cmp"
	"fmt"
	"image/color"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/lockbench/lockbench/results"
)

// Throughput draws grants per second as bars grouped by scenario (X), one
// bar per strategy in the strategy's colour (StrategyColor), at the median
// over the given runs (seeds or repeats) of each (strategy, scenario) pair,
// with min–max error bars where they differ; the title says which (see
// seedsNote) and the legend, right of the plot, names the strategies. A pair
// that did not run has no bar. Runs with an Error are left out. The figure
// widens with the number of bars (20 to 32 cm). It returns an error wrapping
// ErrNoData when no run completed, else errors from writing the files.
func Throughput(runs []results.Run, prefix string) error {
	g := groupRuns(runs, func(r results.Run) (float64, bool) { return r.ThroughputPerS, true })
	if len(g.cells) == 0 {
		return fmt.Errorf("%w: throughput: no completed run", ErrNoData)
	}
	p := newPlot("Throughput per strategy and scenario "+seedsNote(g.spreads(), g.ranged()), "scenario", "throughput (grants/s)")
	if _, err := g.draw(p); err != nil {
		return err
	}
	return saveLegendRightSized(p, prefix, g.width(), Height)
}

// RoundTrips draws, per strategy and scenario, a bar in the strategy's
// colour at the median over the given runs of the Redis commands the
// servers executed per grant (Run.RoundTripsPerGrant: INFO commandstats
// deltas over every node, retries and commands run inside Lua scripts
// included) on a logarithmic Y axis over whole decades, with min–max error
// bars where the runs differ, and a black cross at the median of the commands the clients sent per grant
// (Run.ClientCommandsPerGrant, the go-redis hook count: the cross-check).
// Runs with an Error or reporting 0 (unknown) are left out. It returns an
// error wrapping ErrNoData when no run has the server-side figure, else
// errors from writing the files.
func RoundTrips(runs []results.Run, prefix string) error {
	g := groupRuns(runs, func(r results.Run) (float64, bool) { return r.RoundTripsPerGrant, r.RoundTripsPerGrant > 0 })
	if len(g.cells) == 0 {
		return fmt.Errorf("%w: round trips: no run reports round trips per grant", ErrNoData)
	}
	p := newPlot("Redis commands per grant "+seedsNote(g.spreads(), g.ranged()), "scenario", "Redis commands per grant (count, log scale)")
	client := groupRuns(runs, func(r results.Run) (float64, bool) {
		return r.ClientCommandsPerGrant, r.ClientCommandsPerGrant > 0 && r.RoundTripsPerGrant > 0
	})
	// A retrying quorum strategy can send thousands of commands per grant
	// where a single-node one sends two: a log axis shows both.
	lo, hi := math.Inf(1), 0.0
	for _, c := range []grouped{g, client} {
		for _, s := range c.cells {
			lo, hi = min(lo, s.Min, s.Median), max(hi, s.Max, s.Median)
		}
	}
	axis := newLogAxis(lo, hi)
	g = g.mapped(axis.pos)
	at, err := g.draw(p)
	if err != nil {
		return err
	}
	axis.apply(&p.Y)
	var pts plotter.XYs
	for k, s := range client.cells {
		if x, ok := at[k]; ok {
			pts = append(pts, plotter.XY{X: x, Y: axis.pos(s.Median)})
		}
	}
	if len(pts) > 0 {
		slices.SortFunc(pts, func(a, b plotter.XY) int { return cmp.Compare(a.X, b.X) })
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			return fmt.Errorf("plots: %w", err)
		}
		sc.Shape = draw.CrossGlyph{}
		sc.Color = color.Black
		sc.Radius = vg.Points(3.5)
		p.Add(sc)
		p.Legend.Add("sent by clients", sc)
	}
	return saveLegendRightSized(p, prefix, g.width(), Height)
}

// cellKey is a (strategy, scenario) pair.
type cellKey struct{ strategy, scenario string }

// grouped is one figure per (strategy, scenario) pair, the spread over runs.
type grouped struct {
	scenarios  []string // in the order they first appear
	strategies []string // Strategies' order, then others in the order they first appear
	cells      map[cellKey]results.Spread
}

// groupRuns collects value over the completed runs of each pair; pairs
// without a value are left out.
func groupRuns(runs []results.Run, value func(results.Run) (float64, bool)) grouped {
	g := grouped{cells: map[cellKey]results.Spread{}}
	vals := map[cellKey][]float64{}
	var others []string
	for _, r := range runs {
		if r.Error != "" {
			continue
		}
		v, ok := value(r)
		if !ok || !finite(v) {
			continue
		}
		k := cellKey{r.Strategy, r.Scenario}
		vals[k] = append(vals[k], v)
		if !slices.Contains(g.scenarios, r.Scenario) {
			g.scenarios = append(g.scenarios, r.Scenario)
		}
		if !slices.Contains(Strategies, r.Strategy) && !slices.Contains(others, r.Strategy) {
			others = append(others, r.Strategy)
		}
	}
	for _, s := range Strategies {
		for k := range vals {
			if k.strategy == s {
				g.strategies = append(g.strategies, s)
				break
			}
		}
	}
	g.strategies = append(g.strategies, others...)
	for k, vs := range vals {
		g.cells[k] = results.SpreadOf(vs)
	}
	return g
}

func (g grouped) spreads() []results.Spread {
	out := make([]results.Spread, 0, len(g.cells))
	for _, s := range g.cells {
		out = append(out, s)
	}
	return out
}

func (g grouped) ranged() bool {
	for _, s := range g.cells {
		if s.Min != s.Max {
			return true
		}
	}
	return false
}

// mapped returns g with f applied to every median, min and max (e.g. a
// log axis's positions).
func (g grouped) mapped(f func(float64) float64) grouped {
	out := g
	out.cells = make(map[cellKey]results.Spread, len(g.cells))
	for k, s := range g.cells {
		s.Median, s.Min, s.Max = f(s.Median), f(s.Min), f(s.Max)
		out.cells[k] = s
	}
	return out
}

// width of the figure: 20 cm (room for the title beside the legend), wider
// with many bars, at most 32 cm.
func (g grouped) width() vg.Length {
	bars := vg.Length(len(g.scenarios) * len(g.strategies))
	return min(32*vg.Centimeter, max(20*vg.Centimeter, 7*vg.Centimeter+bars*0.3*vg.Centimeter))
}

// draw adds g's bars to p: scenario i at X = i, each strategy in its slot
// of the group; it names the groups on the X axis, adds each strategy to
// the legend and returns each bar's X position.
func (g grouped) draw(p *plot.Plot) (map[cellKey]float64, error) {
	n := len(g.strategies)
	slot := 0.8 / float64(n) // data units
	plotLen := g.width() - 7*vg.Centimeter
	w := plotLen / vg.Length(len(g.scenarios)) * vg.Length(slot) * 0.85
	at := map[cellKey]float64{}
	var errPts spreadPoints
	var errXs []float64
	for j, st := range g.strategies {
		var legend plot.Thumbnailer
		for i, sc := range g.scenarios {
			s, ok := g.cells[cellKey{st, sc}]
			if !ok {
				continue
			}
			x := float64(i) + (float64(j)-float64(n-1)/2)*slot
			at[cellKey{st, sc}] = x
			b, err := plotter.NewBarChart(plotter.Values{s.Median}, w)
			if err != nil {
				return nil, fmt.Errorf("plots: %w", err)
			}
			b.XMin = x
			b.Color = StrategyColor(st)
			b.LineStyle.Width = 0
			p.Add(b)
			if legend == nil {
				legend = b
			}
			if s.Min != s.Max {
				errPts = append(errPts, s)
				errXs = append(errXs, x)
			}
		}
		if legend != nil {
			p.Legend.Add(st, legend)
		}
	}
	if len(errPts) > 0 {
		eb, err := plotter.NewYErrorBars(positioned{errPts, errXs})
		if err != nil {
			return nil, fmt.Errorf("plots: %w", err)
		}
		eb.LineStyle.Width = vg.Points(1.2)
		eb.CapWidth = w / 2
		p.Add(eb)
	}
	p.Add(plotter.NewGrid())
	p.Y.Min = 0
	p.Y.Max *= 1.08 // headroom above the tallest bar or error bar (a log axis sets its own range after)
	if p.Y.Max <= 0 {
		p.Y.Max = 1
	}
	nominalX(p, g.scenarios)
	p.X.Min, p.X.Max = -0.5, float64(len(g.scenarios))-0.5
	return at, nil
}

// spreadPoints are spreads drawn as error bars: down to Min, up to Max
// from the Median.
type spreadPoints []results.Spread

// positioned places spreadPoints[i] at X xs[i], Y its median (plotter.XYer
// and plotter.YErrorer).
type positioned struct {
	s  spreadPoints
	xs []float64
}

func (p positioned) Len() int                    { return len(p.s) }
func (p positioned) XY(i int) (float64, float64) { return p.xs[i], p.s[i].Median }
func (p positioned) YError(i int) (float64, float64) {
	return p.s[i].Median - p.s[i].Min, p.s[i].Max - p.s[i].Median
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

// percentileNames and percentileOf list the latency figures LatencyPercentiles draws.
var percentileNames = [...]string{"p50", "p90", "p99", "p99.9", "max"}

func percentileOf(l results.Latency, i int) float64 {
	return [...]float64{l.P50, l.P90, l.P99, l.P999, l.Max}[i]
}

// LatencyPercentiles draws, per strategy, a line with markers in the
// strategy's colour through the p50, p90, p99, p99.9 and maximum of
// successful acquire latency in ms (X: the percentile; each point the median
// over the given runs), on a logarithmic Y axis over whole decades, from the
// decade at or below the smallest figure to the one at or above the
// largest; the legend is right of the plot. Runs with an Error or without
// latency samples are left out; a figure of 0 ms (a p99.9 absent from an
// older results file, or a latency below the clock's resolution) is left
// out of its line. It returns an error wrapping ErrNoData when no run has a
// positive latency figure, else errors from writing the files.
func LatencyPercentiles(runs []results.Run, prefix string) error {
	// The caller passes comparable runs (one scenario): a strategy's runs
	// all go into its medians.
	perStrategy := map[string][len(percentileNames)][]float64{}
	var names []string
	lo, hi := 0.0, 0.0
	seeds := []results.Spread{}
	for _, r := range runs {
		if r.Error != "" || r.AcquireLatencyMs.Samples == 0 {
			continue
		}
		vs, seen := perStrategy[r.Strategy]
		for i := range percentileNames {
			if v := percentileOf(r.AcquireLatencyMs, i); v > 0 && finite(v) {
				vs[i] = append(vs[i], v)
			}
		}
		perStrategy[r.Strategy] = vs
		if !seen {
			names = append(names, r.Strategy)
		}
	}
	names = styleOrder(names)
	p := newPlot("", "percentile", "acquire latency (ms, log scale)")
	type line struct {
		name string
		pts  plotter.XYs
	}
	var lines []line
	for _, n := range names {
		var pts plotter.XYs
		for i := range percentileNames {
			if len(perStrategy[n][i]) == 0 {
				continue
			}
			v := results.SpreadOf(perStrategy[n][i]).Median
			pts = append(pts, plotter.XY{X: float64(i), Y: v})
			if lo == 0 || v < lo {
				lo = v
			}
			hi = max(hi, v)
		}
		if len(pts) > 0 {
			lines = append(lines, line{n, pts})
			seeds = append(seeds, results.Spread{N: len(perStrategy[n][0])})
		}
	}
	if len(lines) == 0 {
		return fmt.Errorf("%w: latency percentiles: no run with a positive latency figure", ErrNoData)
	}
	p.Title.Text = "Acquire latency percentiles " + seedsNote(seeds, false)
	axis := newLogAxis(lo, hi)
	for _, ln := range lines {
		for k := range ln.pts {
			ln.pts[k].Y = axis.pos(ln.pts[k].Y)
		}
		l, s, err := plotter.NewLinePoints(ln.pts)
		if err != nil {
			return fmt.Errorf("plots: %w", err)
		}
		c := StrategyColor(ln.name)
		l.Color, l.Dashes, l.Width = c, strategyDashes(ln.name), vg.Points(1.5)
		s.Color, s.Shape, s.Radius = c, strategyShape(ln.name), vg.Points(3)
		p.Add(l, s)
		p.Legend.Add(ln.name, l, s)
	}
	p.Add(plotter.NewGrid())
	axis.apply(&p.Y)
	p.NominalX(percentileNames[:]...)
	p.X.Min, p.X.Max = -0.3, float64(len(percentileNames))-0.7
	return saveLegendRight(p, prefix)
}

// styleOrder sorts strategy names as Strategies lists them, others after
// them by name.
func styleOrder(names []string) []string {
	out := slices.Clone(names)
	slices.SortStableFunc(out, func(a, b string) int {
		ia, ib := slices.Index(Strategies, a), slices.Index(Strategies, b)
		switch {
		case ia >= 0 && ib >= 0:
			return ia - ib
		case ia >= 0:
			return -1
		case ib >= 0:
			return 1
		case a < b:
			return -1
		case a > b:
			return 1
		}
		return 0
	})
	return out
}
