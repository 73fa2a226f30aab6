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

// Colours of the timeline.
var (
	holdColors   = [2]color.Color{color.RGBA{R: 0x2b, G: 0x6c, B: 0xb0, A: 0xff}, color.RGBA{R: 0x5b, G: 0x9b, B: 0xd5, A: 0xff}}
	faultColor   = color.NRGBA{R: 0xff, G: 0x99, B: 0x00, A: 0x50}
	violateColor = color.RGBA{R: 0xd0, G: 0x10, B: 0x10, A: 0xff}
)

// Timeline draws who held key over time: one row per client (in client
// order), a bar per hold, fault windows shaded across every row and labelled
// with their name above it, and a red dashed line with a marker at the bottom
// at each violation time (ms since run start). It returns an error wrapping
// ErrNoData when holds, faults and violationsAtMs are all empty, else errors
// from writing the files.
func Timeline(key string, holds []Interval, faults []Window, violationsAtMs []float64, prefix string) error {
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

	title := key
	if r := []rune(title); len(r) > 40 { // leave room for the legend beside the title
		title = string(r[:39]) + "…"
	}
	p := newPlot(fmt.Sprintf("Holders of key %s over time", strconv.Quote(title)), "time since run start (ms)", "client")
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

	// Holds: one polygon per client, a ring per hold.
	rings := make([][]plotter.XYer, rows)
	for _, h := range holds {
		start, end := h.StartMs, h.EndMs
		if !finite(start) {
			continue // no start: nothing to place
		}
		if math.IsNaN(end) || math.IsInf(end, 1) {
			end = tMax
		}
		end = max(end, start+sliver)
		y := float64(row[h.Client])
		rings[row[h.Client]] = append(rings[row[h.Client]], rect(start, end, y-0.35, y+0.35))
	}
	for i, rs := range rings {
		if len(rs) == 0 {
			continue
		}
		poly, err := plotter.NewPolygon(rs...)
		if err != nil {
			return fmt.Errorf("plots: holds of client %d: %w", clients[i], err)
		}
		poly.Color = holdColors[i%2]
		poly.LineStyle.Width = 0
		p.Add(poly)
		if i == 0 {
			p.Legend.Add("hold", poly)
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

// rect is the closed rectangle [x0, x1] × [y0, y1] as a polygon ring.
func rect(x0, x1, y0, y1 float64) plotter.XYs {
	return plotter.XYs{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}}
}
