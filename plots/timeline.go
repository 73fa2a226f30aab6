package plots

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Interval is one hold of a lock by a client, in ms since run start. An
// EndMs that is NaN or +Inf (a hold that never ended) is drawn to the right
// edge of the plot; an EndMs before StartMs is drawn as a sliver at StartMs.
type Interval struct {
	Client  int
	StartMs float64
	EndMs   float64
}

// Window is one fault (nemesis) window, in ms since run start.
type Window struct {
	Name    string
	StartMs float64
	EndMs   float64
}

// holdColor is the colour of holds when TimelineOptions names no strategy.
var holdColor color.Color = color.RGBA{R: 0x2b, G: 0x6c, B: 0xb0, A: 0xff}

// TimelineOptions are the optional settings of Timeline; a nil
// *TimelineOptions means every default.
type TimelineOptions struct {
	// Title is the plot's title. Default: `Holders of key "KEY" over time`.
	// A title longer than 80 characters is cut with an ellipsis.
	Title string
	// FromMs and ToMs zoom on a window of the run, in ms since run start:
	// holds and fault windows are cut to it, violations outside it left out,
	// and the X axis label names the window shown. FromMs below 0 is taken as
	// 0, and ToMs beyond the last finite time given is cut to it. Default
	// (both 0, or ToMs ≤ FromMs): no zoom, the axis spans every time given,
	// from 0. A window holding nothing gives ErrNoData.
	FromMs, ToMs float64
	// Strategy, when set, draws the holds in the strategy's colour
	// (StrategyColor), every other row lighter. Default: blue.
	Strategy string

	_ struct{} // keyed literals only
}

// Timeline draws who held key over time: one row per client (in client
// order), a bar per hold, fault windows shaded across every row and labelled
// with their name above it, and a red dashed line with a marker at the bottom
// at each violation time (ms since run start). opts sets the title and a
// zoom window (nil: defaults, see TimelineOptions). It returns an error
// wrapping ErrNoData when holds, faults and violationsAtMs are all empty, or
// all outside the zoom window, else errors from writing the files.
func Timeline(key string, holds []Interval, faults []Window, violationsAtMs []float64, prefix string, opts *TimelineOptions) error {
	if opts == nil {
		opts = &TimelineOptions{}
	}
	if len(holds) == 0 && len(faults) == 0 && len(violationsAtMs) == 0 {
		return fmt.Errorf("%w: timeline of key %q: no hold, fault or violation", ErrNoData, key)
	}

	// The time range: every finite time given, from 0.
	tMin, tMax := 0.0, 0.0
	see := func(v float64) {
		if finite(v) {
			tMin, tMax = min(tMin, v), max(tMax, v)
		}
	}
	for _, h := range holds {
		see(h.StartMs)
		see(h.EndMs)
	}
	for _, f := range faults {
		see(f.StartMs)
		see(f.EndMs)
	}
	for _, v := range violationsAtMs {
		see(v)
	}
	zoomed := opts.ToMs > opts.FromMs
	if zoomed {
		from, to := max(opts.FromMs, 0), min(opts.ToMs, tMax)
		if to > from {
			holds, faults, violationsAtMs = clipToWindow(holds, faults, violationsAtMs, from, to)
		}
		if to <= from || len(holds) == 0 && len(faults) == 0 && len(violationsAtMs) == 0 {
			return fmt.Errorf("%w: timeline of key %q: no hold, fault or violation in %s–%s ms", ErrNoData, key, formatMs(opts.FromMs), formatMs(opts.ToMs))
		}
		tMin, tMax = from, to
	}
	if tMax <= tMin {
		tMax = tMin + 1
	}
	sliver := (tMax - tMin) / 500 // narrowest visible hold

	// One row per client.
	var clients []int
	for _, h := range holds {
		if !slices.Contains(clients, h.Client) {
			clients = append(clients, h.Client)
		}
	}
	slices.Sort(clients)
	row := make(map[int]int, len(clients))
	for i, c := range clients {
		row[c] = i
	}
	rows := max(len(clients), 1)
	yLo, yHi := -0.5, float64(rows)-0.5

	title := opts.Title
	if title == "" {
		k := key
		if r := []rune(k); len(r) > 40 {
			k = string(r[:39]) + "…"
		}
		title = fmt.Sprintf("Holders of key %s over time", strconv.Quote(k))
	}
	if r := []rune(title); len(r) > 80 {
		title = string(r[:79]) + "…"
	}
	xLabel := "time since run start (ms)"
	if zoomed {
		xLabel = fmt.Sprintf("time since run start (ms), window %s–%s ms", formatMs(tMin), formatMs(tMax))
	}
	p := newPlot(title, xLabel, "client (number)")
	// Fault windows first, so holds draw over them.
	var labels plotter.XYLabels
	for i, f := range faults {
		start, end := f.StartMs, f.EndMs
		if !finite(start) {
			start = tMin
		}
		if !finite(end) || end > tMax {
			end = tMax
		}
		end = max(end, start+sliver)
		poly, err := plotter.NewPolygon(rect(start, end, yLo, yHi))
		if err != nil {
			return fmt.Errorf("plots: fault %q: %w", f.Name, err)
		}
		poly.Color = faultColor
		poly.LineStyle.Width = 0
		p.Add(poly)
		if i == 0 {
			p.Legend.Add("fault window", poly)
		}
		labels.XYs = append(labels.XYs, plotter.XY{X: start, Y: yHi})
		labels.Labels = append(labels.Labels, f.Name)
	}

	base := holdColor
	if opts.Strategy != "" {
		base = StrategyColor(opts.Strategy)
	}
	// Holds: one polygon each, so overlapping holds of one client (a stale
	// holder and its next grant) fill whole whatever the fill rule.
	legendDone := false
	for _, h := range holds {
		start, end := h.StartMs, h.EndMs
		if !finite(start) {
			continue // no start: nothing to place
		}
		if math.IsNaN(end) || math.IsInf(end, 1) {
			end = tMax
		}
		end = max(end, start+sliver)
		i := row[h.Client]
		y := float64(i)
		poly, err := plotter.NewPolygon(rect(start, end, y-0.35, y+0.35))
		if err != nil {
			return fmt.Errorf("plots: hold of client %d: %w", h.Client, err)
		}
		poly.Color = base
		if i%2 == 1 {
			poly.Color = lighter(base, 0.35)
		}
		poly.LineStyle.Width = 0
		p.Add(poly)
		if !legendDone {
			p.Legend.Add("hold (lock granted until end of use)", poly)
			legendDone = true
		}
	}

	// Violations: a dashed line across every row and a marker below them.
	var marks plotter.XYs
	for _, v := range violationsAtMs {
		if !finite(v) {
			continue
		}
		l, err := plotter.NewLine(plotter.XYs{{X: v, Y: yLo}, {X: v, Y: yHi}})
		if err != nil {
			return fmt.Errorf("plots: violation at %v ms: %w", v, err)
		}
		l.Color = violateColor
		l.Width = vg.Points(1)
		l.Dashes = []vg.Length{vg.Points(3), vg.Points(2)}
		p.Add(l)
		marks = append(marks, plotter.XY{X: v, Y: yLo})
	}
	if len(marks) > 0 {
		s, err := plotter.NewScatter(marks)
		if err != nil {
			return fmt.Errorf("plots: violations: %w", err)
		}
		s.Shape = draw.PyramidGlyph{}
		s.Color = violateColor
		s.Radius = vg.Points(4)
		p.Add(s)
		p.Legend.Add(fmt.Sprintf("violation (%d)", len(marks)), s)
	}
	if len(labels.XYs) > 0 {
		l, err := plotter.NewLabels(labels)
		if err != nil {
			return fmt.Errorf("plots: fault labels: %w", err)
		}
		for i := range l.TextStyle {
			l.TextStyle[i].Font.Size = 8
			l.TextStyle[i].Font.Typeface = sans.Typeface
			l.TextStyle[i].Font.Variant = sans.Variant
			l.TextStyle[i].YAlign = draw.YBottom
		}
		p.Add(l)
	}

	// Axes: a labelled row per client (every k-th when there are many).
	every := max(1, len(clients)/20)
	var ticks []plot.Tick
	for i, c := range clients {
		t := plot.Tick{Value: float64(i)}
		if i%every == 0 {
			t.Label = strconv.Itoa(c)
		}
		ticks = append(ticks, t)
	}
	p.Y.Tick.Marker = plot.ConstantTicks(ticks)
	// Room above the rows for the fault labels and the legend: a fifth of the axis.
	p.Y.Min, p.Y.Max = yLo, yHi+0.25*float64(rows)
	p.X.Min, p.X.Max = tMin, tMax
	p.Legend.Top, p.Legend.Left = true, false
	return save(p, prefix)
}

// clipToWindow cuts holds and faults to [from, to] (ms; holds and faults
// wholly outside are left out) and leaves out violations outside it.
func clipToWindow(holds []Interval, faults []Window, violationsAtMs []float64, from, to float64) ([]Interval, []Window, []float64) {
	var hs []Interval
	for _, h := range holds {
		end := h.EndMs
		if math.IsNaN(end) {
			end = math.Inf(1)
		}
		if !finite(h.StartMs) || h.StartMs > to || max(end, h.StartMs) < from {
			continue
		}
		h.StartMs, h.EndMs = max(h.StartMs, from), min(end, to)
		hs = append(hs, h)
	}
	var fs []Window
	for _, f := range faults {
		start, end := f.StartMs, f.EndMs
		if !finite(start) {
			start = from
		}
		if math.IsNaN(end) {
			end = math.Inf(1)
		}
		if start > to || end < from {
			continue
		}
		f.StartMs, f.EndMs = max(start, from), min(end, to)
		fs = append(fs, f)
	}
	var vs []float64
	for _, v := range violationsAtMs {
		if v >= from && v <= to {
			vs = append(vs, v)
		}
	}
	return hs, fs, vs
}

// formatMs writes a time in ms, whole from 10 ms up ("106", "704") and with
// at most one decimal below ("2.5").
func formatMs(v float64) string {
	if math.Abs(v) >= 10 {
		return strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	}
	return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64)
}

// rect is the closed rectangle [x0, x1] × [y0, y1] as a polygon ring.
func rect(x0, x1, y0, y1 float64) plotter.XYs {
	return plotter.XYs{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}}
}
