package plots

import (
	"cmp"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/lockbench/lockbench/figures"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/stats"
)

// barFigure says where a bar chart's figure comes from.
type barFigure struct {
	// window is the cost figure (one of figures.Figures) whose time
	// windows give a bar's median and 95% interval (stats.EstimateOf);
	// "" for a figure without windows.
	window string
	// perRun is a run's whole-run value, used when the pair's runs have
	// no windows (files from before windows, lockbench perf); ok is false
	// when the run does not know it.
	perRun func(results.Run) (v float64, ok bool)
}

var (
	throughputFigure     = barFigure{figures.FigureGrantsPerS, func(r results.Run) (float64, bool) { return r.ThroughputPerS, true }}
	clientCommandsFigure = barFigure{figures.FigureCommandsPerGrant, func(r results.Run) (float64, bool) {
		return r.ClientCommandsPerGrant, r.ClientCommandsPerGrant > 0
	}}
	serverCommandsFigure = barFigure{"", func(r results.Run) (float64, bool) { return r.RoundTripsPerGrant, r.RoundTripsPerGrant > 0 }}
)

// bar is one strategy's figure in one group of a bar chart.
type bar struct {
	median float64
	// low and high bound the 95% interval of the median over time
	// windows; interval is false when there is none (fewer than
	// stats.MinIntervalSamples windows, or runs without windows).
	low, high float64
	interval  bool
	// windows is true when the median is over time windows (every seed's
	// pooled), false when over the runs' whole-run values; n counts them.
	windows bool
	n       int
}

// barGroup is one group of bars: a scenario at one client count.
type barGroup struct {
	scenario string
	clients  int
	// label names the group on the X axis: the scenario, and its client
	// count when it differs from the chart's usual one.
	label string
}

// cutBar is a bar (or cross) taller than the axis: where it is drawn,
// whose it is and its value.
type cutBar struct {
	x             float64
	strategy, grp string
	value         float64
	server        float64 // the servers' count cut with it (a cross), 0 if none
}

// barKey is a strategy's bar in group i.
type barKey struct {
	strategy string
	group    int
}

// barChart is one figure per (strategy, group): the bars of Throughput
// and CommandsPerGrant.
type barChart struct {
	// labels are the "0" draw writes above bars of 0, for the caller to
	// add to the plot.
	labels plotter.XYLabels
	// zero names the pairs ("strategy × group") whose bar is the "0" of
	// labels, in drawing order, for the note under the chart.
	zero []string
	// cut are the bars draw cut at the top of the axis, in drawing order.
	cut []cutBar

	groups     []barGroup
	strategies []string // Strategies' order, then others in the order they first appear
	bars       map[barKey]bar
	// missing names the pairs ("strategy × scenario") that completed a
	// run but have no value, with why ("no grant" or "not measured").
	missing []string
	// failed names the pairs none of whose runs completed.
	failed []string
	// usualClients is the client count of most completed runs; a group at
	// another count says so in its label.
	usualClients int
	marked       bool // some group is labelled with its client count
}

// collectBars groups the completed runs by (strategy, scenario, clients)
// and gives each group of runs a bar: the median and 95% interval over
// their time windows of fig.window, or, when they have none, the median
// of fig.perRun over the runs, without interval. Groups come in the order
// their scenario first appears, client counts ascending within one.
func collectBars(runs []results.Run, fig barFigure) barChart {
	c := barChart{bars: map[barKey]bar{}}
	type gk struct {
		scenario string
		clients  int
	}
	type pk struct{ strategy, scenario string }
	var scenarios, others []string
	byGroup := map[gk]map[string][]results.Run{}
	ran, done := map[pk]bool{}, map[pk]bool{}
	var pairs []pk
	count := map[int]int{}
	for _, r := range runs {
		p := pk{r.Strategy, r.Scenario}
		if !ran[p] {
			pairs = append(pairs, p)
		}
		ran[p] = true
		if r.Error != "" {
			continue
		}
		done[p] = true
		if !slices.Contains(scenarios, r.Scenario) {
			scenarios = append(scenarios, r.Scenario)
		}
		if !slices.Contains(Strategies, r.Strategy) && !slices.Contains(others, r.Strategy) {
			others = append(others, r.Strategy)
		}
		k := gk{r.Scenario, r.Config.Clients}
		if byGroup[k] == nil {
			byGroup[k] = map[string][]results.Run{}
		}
		byGroup[k][r.Strategy] = append(byGroup[k][r.Strategy], r)
		count[r.Config.Clients]++
	}
	for n, k := range count {
		if k > count[c.usualClients] || k == count[c.usualClients] && n > c.usualClients {
			c.usualClients = n
		}
	}
	for _, p := range pairs {
		if !done[p] {
			c.failed = append(c.failed, p.strategy+" × "+p.scenario)
		}
	}
	seen := map[string]bool{}
	for _, st := range append(slices.Clone(Strategies), others...) {
		for _, g := range byGroup {
			if len(g[st]) > 0 && !seen[st] {
				seen[st] = true
				c.strategies = append(c.strategies, st)
			}
		}
	}
	hasBar := map[pk]bool{}
	for _, sc := range scenarios {
		var counts []int
		for k := range byGroup {
			if k.scenario == sc {
				counts = append(counts, k.clients)
			}
		}
		slices.Sort(counts)
		for _, n := range counts {
			g := barGroup{scenario: sc, clients: n, label: sc}
			if len(counts) > 1 || n != c.usualClients {
				g.label += "\n" + plural(n, "client")
				c.marked = true
			}
			i := len(c.groups)
			c.groups = append(c.groups, g)
			for st, rs := range byGroup[gk{sc, n}] {
				if b, ok := barOf(rs, fig); ok {
					c.bars[barKey{st, i}] = b
					hasBar[pk{st, sc}] = true
				}
			}
		}
	}
	for _, p := range pairs {
		if done[p] && !hasBar[p] {
			why := "not measured"
			if noGrant(runs, p.strategy, p.scenario) {
				why = "no grant"
			}
			c.missing = append(c.missing, fmt.Sprintf("%s × %s (%s)", p.strategy, p.scenario, why))
		}
	}
	return c
}

// barOf is the bar of one group's runs (see collectBars); ok is false
// when they have no value.
func barOf(rs []results.Run, fig barFigure) (bar, bool) {
	if fig.window != "" {
		if e := stats.EstimateOf(figures.SamplesOf(rs, fig.window)); e.N > 0 {
			b := bar{median: e.Median, windows: true, n: e.N}
			if e.Bounded() {
				b.low, b.high, b.interval = e.Low, e.High, true
			}
			return b, true
		}
	}
	var vs []float64
	for _, r := range rs {
		if v, ok := fig.perRun(r); ok && finite(v) {
			vs = append(vs, v)
		}
	}
	if len(vs) == 0 {
		return bar{}, false
	}
	return bar{median: stats.SpreadOf(vs).Median, n: len(vs)}, true
}

// noGrant reports whether no completed run of the pair granted the lock.
func noGrant(runs []results.Run, strategy, scenario string) bool {
	for _, r := range runs {
		if r.Strategy == strategy && r.Scenario == scenario && r.Error == "" && r.Grants > 0 {
			return false
		}
	}
	return true
}

// note says what the bars show, for the title: "(median over time
// windows, whiskers: 95% interval)" when some bar has an interval, else
// what the medians are over.
func (c barChart) note() string {
	var win, interval bool
	lo, hi := 0, 0
	for _, b := range c.bars {
		win, interval = win || b.windows, interval || b.interval
		if !b.windows {
			if lo == 0 || b.n < lo {
				lo = b.n
			}
			hi = max(hi, b.n)
		}
	}
	switch {
	case interval:
		return "(median over time windows, whiskers: 95% interval)"
	case win:
		return "(median over time windows; too few for an interval)"
	case hi <= 1:
		return "(one seed)"
	case lo == hi:
		return fmt.Sprintf("(median over %d seeds)", hi)
	}
	return fmt.Sprintf("(median over %d–%d seeds)", lo, hi)
}

// notes are the lines under a bar chart: which groups ran with another
// client count, which pairs have no bar and why, which did not complete.
func (c barChart) notes() []string {
	var out []string
	if c.marked {
		out = append(out, fmt.Sprintf("Groups labelled with a client count ran with that many clients; the others with %s. Compare bars within a group.", plural(c.usualClients, "client")))
	}
	if len(c.zero) > 0 {
		out = append(out, `A "0" marks a median of 0: `+listSome(c.zero, 8)+".")
	}
	if len(c.missing) > 0 {
		out = append(out, "No bar: "+listSome(c.missing, 8)+".")
	}
	if len(c.failed) > 0 {
		out = append(out, "Did not complete: "+listSome(c.failed, 8)+".")
	}
	return out
}

// listSome joins up to most items, then "and N more".
func listSome(items []string, most int) string {
	if len(items) <= most {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:most], ", ") + fmt.Sprintf(" and %d more", len(items)-most)
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// width of the figure: 20 cm (room for the title beside the legend), wider
// with many bars, at most 32 cm.
func (c barChart) width() vg.Length {
	bars := vg.Length(len(c.groups) * len(c.strategies))
	return min(32*vg.Centimeter, max(20*vg.Centimeter, 7*vg.Centimeter+bars*0.3*vg.Centimeter))
}

// Throughput draws grants per second as bars grouped by scenario (X), one
// bar per strategy in the strategy's colour (StrategyColor): the median
// over the time windows of the pair's runs (every seed's windows pooled),
// with a whisker over its 95% interval (stats.EstimateOf: benchmath, as
// the report's tables); runs without windows give the median of their
// whole-run throughput, without whisker. A scenario run at several client
// counts, or at another count than most runs, gets a group per count
// labelled with it, so bars of different client counts never stand side
// by side unmarked. A bar of 0 is labelled "0"; pairs that did not complete
// are named under the chart. The title says what the bars are over, the
// legend, right of the plot, names the strategies. The figure widens with
// the number of bars (20 to 32 cm). It returns an error wrapping ErrNoData
// when no run completed, else errors from writing the files.
func Throughput(runs []results.Run, prefix string) error {
	c := collectBars(runs, throughputFigure)
	if len(c.bars) == 0 {
		return fmt.Errorf("%w: throughput: no completed run", ErrNoData)
	}
	p := newPlot("Throughput per strategy and scenario "+c.note(), "scenario", "throughput (grants/s)")
	if _, err := c.draw(p, math.Inf(1)); err != nil {
		return err
	}
	if err := addValueLabels(p, c.labels); err != nil {
		return err
	}
	return saveWithNotes(p, prefix, c.width(), Height, c.notes())
}

// CommandsPerGrant draws the commands the clients sent per grant
// (figures.FigureCommandsPerGrant, the go-redis hook count: retries and
// calls that timed out included) as bars grouped by scenario on a linear Y
// axis from 0, one per strategy in its colour: the median over the time
// windows of the pair's runs with a whisker over its 95% interval (runs
// without windows: the median of Run.ClientCommandsPerGrant, no whisker).
// A black cross marks the commands the servers executed per grant
// (Run.RoundTripsPerGrant, INFO commandstats: commands inside Lua
// scripts counted too), the median over the pair's runs, where known.
// When a few bars tower over the rest (the largest above three times the
// 90th percentile), the axis stops at 1.5 times that percentile and each
// taller bar or cross is drawn to the top, marked with a triangle, its
// value given under the chart, so the others stay readable on a linear
// scale. Under the chart, notes
// name the pairs without a bar (no grant, or not measured) and the
// scenarios whose server count is unknown (a node restarted or was
// promoted during the run). It returns an error wrapping ErrNoData when no
// run has either figure, else errors from writing the files.
func CommandsPerGrant(runs []results.Run, prefix string) error {
	c := collectBars(runs, clientCommandsFigure)
	server := collectBars(runs, serverCommandsFigure)
	if len(c.bars) == 0 && len(server.bars) == 0 {
		return fmt.Errorf("%w: commands per grant: no run counted its commands", ErrNoData)
	}
	if len(c.bars) == 0 { // only server counts (an older file): draw them as the bars
		c = server
		server = barChart{}
	}
	p := newPlot("Commands per grant "+c.note(), "scenario", "commands per grant (count)")
	var all []float64
	for _, b := range c.bars {
		all = append(all, b.median)
	}
	for _, b := range server.bars {
		all = append(all, b.median)
	}
	top := clipAt(all)
	at, err := c.draw(p, top)
	if err != nil {
		return err
	}
	var pts plotter.XYs
	unknown := map[string]bool{}
	for k := range c.bars {
		unknown[c.groups[k.group].scenario] = true
	}
	for k, b := range server.bars {
		g := server.groups[k.group]
		unknown[g.scenario] = false
		i := slices.IndexFunc(c.groups, func(x barGroup) bool { return x.scenario == g.scenario && x.clients == g.clients })
		x, ok := at[barKey{k.strategy, i}]
		if i < 0 || !ok {
			continue
		}
		y := b.median
		if y > top {
			y = top
			if j := slices.IndexFunc(c.cut, func(cb cutBar) bool { return cb.x == x }); j >= 0 {
				c.cut[j].server = b.median
			} else {
				c.cut = append(c.cut, cutBar{x: x, strategy: k.strategy, grp: c.groups[i].label, server: b.median})
			}
		}
		pts = append(pts, plotter.XY{X: x, Y: y})
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
		p.Legend.Add("executed by the servers", sc)
	}
	if len(c.cut) > 0 {
		var tops plotter.XYs
		for _, cb := range c.cut {
			tops = append(tops, plotter.XY{X: cb.x, Y: top})
		}
		sc, err := plotter.NewScatter(tops)
		if err != nil {
			return fmt.Errorf("plots: %w", err)
		}
		sc.Shape = draw.PyramidGlyph{}
		sc.Color = color.Black
		sc.Radius = vg.Points(3)
		p.Add(sc)
		p.Legend.Add("cut at the top (value below)", sc)
	}
	if err := addValueLabels(p, c.labels); err != nil {
		return err
	}
	notes := c.notes()
	if len(server.bars) > 0 {
		var none []string
		for _, g := range c.groups {
			if unknown[g.scenario] && !slices.Contains(none, g.scenario) {
				none = append(none, g.scenario)
			}
		}
		what := "Bars: commands the clients sent per grant; crosses: commands the servers executed per grant (INFO commandstats, commands inside Lua scripts included)."
		if len(none) > 0 {
			what += " No cross under " + strings.Join(none, ", ") + ": the server count is unknown when a node restarted or was promoted during the run."
		}
		notes = append([]string{what}, notes...)
	}
	if len(c.cut) > 0 {
		var vals []string
		for _, cb := range c.cut {
			v := strings.ReplaceAll(cb.strategy+" × "+cb.grp, "\n", " ")
			switch {
			case cb.value > 0 && cb.server > 0:
				v += fmt.Sprintf(" %s (servers %s)", formatValue(cb.value), formatValue(cb.server))
			case cb.value > 0:
				v += " " + formatValue(cb.value)
			default:
				v += " servers " + formatValue(cb.server)
			}
			vals = append(vals, v)
		}
		notes = append(notes, fmt.Sprintf("The axis stops at %s; a triangle marks each bar or cross cut there: %s.", formatValue(top), strings.Join(vals, ", ")))
	}
	return saveWithNotes(p, prefix, c.width(), Height, notes)
}

// clipAt returns where a linear axis over vs (≥ 0) should stop so that a
// few towering values do not flatten the rest: 1.5 times the 90th
// percentile (nearest rank) when the largest value is above three times
// it, else +Inf (no clipping).
func clipAt(vs []float64) float64 {
	if len(vs) < 5 {
		return math.Inf(1)
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	p90 := s[int(math.Ceil(0.9*float64(len(s))))-1]
	if p90 <= 0 || s[len(s)-1] <= 3*p90 {
		return math.Inf(1)
	}
	return 1.5 * p90
}

// formatValue writes v with at most three significant digits, no exponent.
func formatValue(v float64) string {
	switch a := math.Abs(v); {
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// draw adds c's bars to p: group i at X = i, each strategy in its slot of
// the group, with a whisker over its interval; bars and whiskers above top
// are cut there and listed in c.cut, bars of 0 get a "0" in c.labels.
// It names the groups on the X axis, adds each strategy to the legend and
// returns each bar's X position.
func (c *barChart) draw(p *plot.Plot, top float64) (map[barKey]float64, error) {
	n := len(c.strategies)
	slot := 0.8 / float64(n) // data units
	plotLen := c.width() - 7*vg.Centimeter
	w := plotLen / vg.Length(len(c.groups)) * vg.Length(slot) * 0.85
	at := map[barKey]float64{}
	var whiskers intervals
	labels := &c.labels
	for j, st := range c.strategies {
		var legend plot.Thumbnailer
		for i := range c.groups {
			b, ok := c.bars[barKey{st, i}]
			if !ok {
				continue
			}
			x := float64(i) + (float64(j)-float64(n-1)/2)*slot
			at[barKey{st, i}] = x
			h := min(b.median, top)
			bc, err := plotter.NewBarChart(plotter.Values{h}, w)
			if err != nil {
				return nil, fmt.Errorf("plots: %w", err)
			}
			bc.XMin = x
			bc.Color = StrategyColor(st)
			bc.LineStyle.Width = 0
			p.Add(bc)
			if legend == nil {
				legend = bc
			}
			switch {
			case b.median > top:
				c.cut = append(c.cut, cutBar{x: x, strategy: st, grp: c.groups[i].label, value: b.median})
			case b.median == 0:
				labels.XYs = append(labels.XYs, plotter.XY{X: x, Y: 0})
				labels.Labels = append(labels.Labels, "0")
				c.zero = append(c.zero, st+" × "+strings.ReplaceAll(c.groups[i].label, "\n", ", "))
			}
			if b.interval && b.median <= top {
				whiskers = append(whiskers, interval{x: x, y: b.median, low: b.low, high: min(b.high, top)})
			}
		}
		if legend != nil {
			p.Legend.Add(st, legend)
		}
	}
	if len(whiskers) > 0 {
		eb, err := plotter.NewYErrorBars(whiskers)
		if err != nil {
			return nil, fmt.Errorf("plots: %w", err)
		}
		eb.LineStyle.Width = vg.Points(1)
		eb.CapWidth = w / 2
		p.Add(eb)
	}
	p.Add(plotter.NewGrid())
	p.Y.Min = 0
	if !math.IsInf(top, 1) {
		p.Y.Max = top
	}
	p.Y.Max *= 1.08 // headroom above the tallest bar or whisker
	if p.Y.Max <= 0 {
		p.Y.Max = 1
	}
	names := make([]string, len(c.groups))
	for i, g := range c.groups {
		names[i] = g.label
	}
	nominalX(p, names)
	p.X.Min, p.X.Max = -0.5, float64(len(c.groups))-0.5
	return at, nil
}

// addValueLabels writes each label just above its point, centred, in
// small text.
func addValueLabels(p *plot.Plot, ls plotter.XYLabels) error {
	if len(ls.XYs) == 0 {
		return nil
	}
	l, err := plotter.NewLabels(ls)
	if err != nil {
		return fmt.Errorf("plots: %w", err)
	}
	for i := range l.TextStyle {
		l.TextStyle[i].Font = font.From(sans, 7)
		l.TextStyle[i].XAlign = draw.XCenter
	}
	l.Offset = vg.Point{Y: vg.Points(2)}
	p.Add(l)
	return nil
}

// interval is a whisker at x from low to high around y (plotter.XYer and
// plotter.YErrorer).
type interval struct{ x, y, low, high float64 }

// intervals are whiskers for plotter.NewYErrorBars.
type intervals []interval

func (s intervals) Len() int                        { return len(s) }
func (s intervals) XY(i int) (float64, float64)     { return s[i].x, s[i].y }
func (s intervals) YError(i int) (float64, float64) { return s[i].y - s[i].low, s[i].high - s[i].y }

// percentileNames and percentileOf list the latency figures LatencyPercentiles draws.
var percentileNames = [...]string{"p50", "p90", "p99", "p99.9", "max"}

func percentileOf(l stats.Latency, i int) float64 {
	return [...]float64{l.P50, l.P90, l.P99, l.P999, l.Max}[i]
}

// LatencyPercentiles draws, per strategy, a line with markers in the
// strategy's colour through the p50, p90, p99, p99.9 and maximum of
// successful acquire latency in ms (X: the percentile), on a logarithmic
// Y axis over whole decades, from the decade at or below the smallest
// figure to the one at or above the largest; the legend is right of the
// plot. p50 and p99 are the medians over the time windows of the given
// runs with a whisker over their 95% interval (stats.EstimateOf), as the
// report's tables give them; p90, p99.9 and the maximum, which have no
// windows, are the medians of the runs' whole-run figures, and so are p50
// and p99 for runs without windows; a note under the chart says so. Runs
// with an Error or without latency samples are left out, and strategies
// with no granted acquire are named under the chart; a figure of 0 ms
// (a p99.9 absent from an older results file, or a latency below the
// clock's resolution) is left out of its line. It returns an error
// wrapping ErrNoData when no run has a positive latency figure, else
// errors from writing the files.
func LatencyPercentiles(runs []results.Run, prefix string) error {
	// The caller passes comparable runs (one scenario): a strategy's runs
	// all go into its medians.
	perStrategy := map[string][len(percentileNames)][]float64{}
	byStrategy := map[string][]results.Run{}
	var names []string
	var none []string // strategies that completed runs without a grant
	for _, r := range runs {
		if r.Error == "" && r.AcquireLatencyMs.Samples == 0 && !slices.Contains(none, r.Strategy) {
			none = append(none, r.Strategy)
		}
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
		byStrategy[r.Strategy] = append(byStrategy[r.Strategy], r)
		if !seen {
			names = append(names, r.Strategy)
		}
	}
	names = styleOrder(names)
	windowed := map[int]string{0: figures.FigureAcquireP50Ms, 2: figures.FigureAcquireP99Ms}
	type line struct {
		name    string
		pts     plotter.XYs
		whisker intervals
	}
	var lines []line
	lo, hi := 0.0, 0.0
	seeds := 0
	anyWindows := false
	see := func(v float64) {
		if v > 0 {
			if lo == 0 || v < lo {
				lo = v
			}
			hi = max(hi, v)
		}
	}
	for j, n := range names {
		var ln line
		ln.name = n
		// Each strategy's line is shifted a little sideways, so whiskers
		// at the same percentile do not hide each other.
		dx := (float64(j) - float64(len(names)-1)/2) * min(0.04, 0.5/float64(len(names)))
		for k := range percentileNames {
			i := k
			if fig, ok := windowed[i]; ok {
				if e := stats.EstimateOf(figures.SamplesOf(byStrategy[n], fig)); e.N > 0 && e.Median > 0 {
					anyWindows = true
					ln.pts = append(ln.pts, plotter.XY{X: float64(i) + dx, Y: e.Median})
					see(e.Median)
					if e.Bounded() {
						low := max(e.Low, e.Median/1e3) // a log axis cannot reach 0
						ln.whisker = append(ln.whisker, interval{x: float64(i) + dx, y: e.Median, low: low, high: e.High})
						see(low)
						see(e.High)
					}
					continue
				}
			}
			if len(perStrategy[n][i]) == 0 {
				continue
			}
			v := stats.SpreadOf(perStrategy[n][i]).Median
			ln.pts = append(ln.pts, plotter.XY{X: float64(i) + dx, Y: v})
			see(v)
		}
		if len(ln.pts) > 0 {
			lines = append(lines, ln)
			seeds = max(seeds, len(byStrategy[n]))
		}
	}
	if len(lines) == 0 {
		return fmt.Errorf("%w: latency percentiles: no run with a positive latency figure", ErrNoData)
	}
	title := "Acquire latency percentiles"
	var notes []string
	switch {
	case anyWindows:
		title += " (whiskers: 95% interval)"
		notes = append(notes, "p50 and p99: the median over time windows of the runs, with its 95% interval; p90, p99.9 and max: the median over runs of each run's whole-run figure (no interval).")
	case seeds <= 1:
		title += " (one seed)"
	default:
		title += fmt.Sprintf(" (median over %d seeds)", seeds)
	}
	none = slices.DeleteFunc(none, func(st string) bool { return len(byStrategy[st]) > 0 })
	if len(none) > 0 {
		notes = append(notes, "No line for "+strings.Join(none, ", ")+": no acquire was granted.")
	}
	p := newPlot(title, "percentile", "acquire latency (ms, log scale)")
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
		if len(ln.whisker) > 0 {
			ws := make(intervals, len(ln.whisker))
			for k, w := range ln.whisker {
				ws[k] = interval{x: w.x, y: axis.pos(w.y), low: axis.pos(w.low), high: axis.pos(w.high)}
			}
			eb, err := plotter.NewYErrorBars(ws)
			if err != nil {
				return fmt.Errorf("plots: %w", err)
			}
			eb.LineStyle.Color, eb.LineStyle.Width = c, vg.Points(1)
			eb.CapWidth = vg.Points(6)
			p.Add(eb)
		}
	}
	p.Add(plotter.NewGrid())
	axis.apply(&p.Y)
	p.NominalX(percentileNames[:]...)
	p.X.Min, p.X.Max = -0.3, float64(len(percentileNames))-0.7
	return saveWithNotes(p, prefix, 20*vg.Centimeter, Height, notes)
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
