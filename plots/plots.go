// Package plots draws lockbench's charts with gonum/plot: throughput and
// Redis round trips per strategy, acquire-latency percentiles and CDFs,
// throughput against the number of clients, and a timeline of the holders of
// one key with fault windows and violations marked. Each function takes the
// data it needs and writes prefix+".png" and prefix+".svg", 16 × 10 cm (the
// PNG at 150 dpi).
//
// Empty input: a function given nothing to draw writes no file and returns an
// error wrapping ErrNoData, so a caller can leave that plot out of the report
// (errors.Is(err, plots.ErrNoData)).
package plots

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Size of a plot (vg.Length, in points of 1/72 inch; a bar chart with many
// bars is wider), and the resolution of the PNG in dots per inch: 16 × 10
// cm is 945 × 591 px.
const (
	Width  = 16 * vg.Centimeter
	Height = 10 * vg.Centimeter
	PNGDPI = 150
)

// ErrNoData is wrapped by every plot function given nothing to draw; it then
// writes no file.
var ErrNoData = errors.New("plots: no data")

// sans is the typeface of every text in the plots.
var sans = font.Font{Typeface: "Liberation", Variant: "Sans"}

// newPlot returns a plot with a title, axis labels (units included), sans
// fonts sized for a 16 × 10 cm figure and linearTicks on both axes.
func newPlot(title, xLabel, yLabel string) *plot.Plot {
	p := plot.New()
	setFont := func(s *text.Style, size vg.Length) {
		s.Font = font.From(sans, size)
	}
	p.Title.Text = title
	setFont(&p.Title.TextStyle, 12)
	p.Title.Padding = 0.3 * vg.Centimeter
	p.X.Label.Text = xLabel
	p.Y.Label.Text = yLabel
	for _, ax := range []*plot.Axis{&p.X, &p.Y} {
		setFont(&ax.Label.TextStyle, 10)
		setFont(&ax.Tick.Label, 9)
		ax.Tick.Marker = linearTicks{}
	}
	setFont(&p.Legend.TextStyle, 9)
	return p
}

// save writes p to prefix.png and prefix.svg, creating the folder of prefix
// if needed.
func save(p *plot.Plot, prefix string) error {
	return saveWith(p.Draw, prefix, Width, Height)
}

// saveLegendRight is save with p's legend drawn in a column right of the
// plot, its top level with the top of the axes, so it never covers data.
// It takes the legend out of p.
func saveLegendRight(p *plot.Plot, prefix string) error {
	return saveLegendRightSized(p, prefix, Width, Height)
}

// saveLegendRightSized is saveLegendRight for a figure of w × h.
func saveLegendRightSized(p *plot.Plot, prefix string, w, h vg.Length) error {
	return saveWithNotes(p, prefix, w, h, nil)
}

// noteFont is the size of the notes under a chart.
const noteFont = 8

// saveWithNotes is saveLegendRightSized with notes: lines of text under
// the chart, left-aligned across its width, each wrapped to the width;
// the plot shrinks to make room. Notes say what the marks alone cannot
// (what an error bar spans, which pairs have no bar and why).
func saveWithNotes(p *plot.Plot, prefix string, w, h vg.Length, notes []string) error {
	leg := p.Legend
	p.Legend = plot.NewLegend() // no entries: p.Draw draws no legend
	leg.Top, leg.Left = true, true
	leg.XOffs, leg.YOffs = 0, 0
	gap := vg.Centimeter / 4
	top := p.Title.Padding
	if p.Title.Text != "" {
		top += p.Title.TextStyle.Rectangle(p.Title.Text).Size().Y
	}
	style := leg.TextStyle
	style.Font = font.From(sans, noteFont)
	style.XAlign, style.YAlign = draw.XLeft, draw.YBottom
	var lines []string
	for _, n := range notes {
		lines = append(lines, wrapText(style, n, w-2*gap)...)
	}
	lineH := style.FontExtents().Height * 1.15
	bottom := vg.Length(len(lines)) * lineH
	if len(lines) > 0 {
		bottom += gap
	}
	return saveWith(func(c draw.Canvas) {
		for i, l := range lines {
			at := vg.Point{X: c.Min.X + gap, Y: c.Min.Y + gap/2 + vg.Length(len(lines)-1-i)*lineH}
			c.FillText(style, at, l)
		}
		c = draw.Crop(c, 0, 0, bottom, 0)
		r := leg.Rectangle(c)
		lw := r.Max.X - r.Min.X + 2*gap
		p.Draw(draw.Crop(c, 0, -lw, 0, 0))
		leg.Draw(draw.Crop(c, c.Max.X-c.Min.X-lw+gap, 0, 0, -top))
	}, prefix, w, h)
}

// wrapText breaks s into lines no wider than width in style, at spaces.
func wrapText(style text.Style, s string, width vg.Length) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		try := word
		if line != "" {
			try = line + " " + word
		}
		if line != "" && style.Width(try) > width {
			lines = append(lines, line)
			try = word
		}
		line = try
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

// saveWith renders with drawFn to prefix.png and prefix.svg, w × h,
// creating the folder of prefix if needed.
func saveWith(drawFn func(draw.Canvas), prefix string, w, h vg.Length) error {
	if err := os.MkdirAll(filepath.Dir(prefix), 0o755); err != nil {
		return fmt.Errorf("plots: create folder: %w", err)
	}
	png := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(PNGDPI))
	drawFn(draw.New(png))
	if err := writeFile(prefix+".png", vgimg.PngCanvas{Canvas: png}); err != nil {
		return err
	}
	svg := vgsvg.New(w, h)
	drawFn(draw.New(svg))
	return writeFile(prefix+".svg", svg)
}

// linearTicks marks a linear axis at 1, 2 or 5 times a power of ten, about
// five labelled ticks over the range, with an unlabelled tick halfway
// between; every label of an axis has the same number of decimals, the
// fewest the step needs (0 for steps of 1 and above), so an axis never mixes
// "0.00" and "300".
type linearTicks struct{}

// Ticks returns the ticks for the range [lo, hi] (plot.Ticker).
func (linearTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) || !finite(lo) || !finite(hi) {
		return nil
	}
	step := niceStep((hi - lo) / 5)
	decimals := max(0, -int(math.Floor(math.Log10(step)+1e-9)))
	var ticks []plot.Tick
	first := math.Ceil(lo/step-1e-9) * step
	if minor := first - step/2; minor >= lo {
		ticks = append(ticks, plot.Tick{Value: minor})
	}
	for v := first; v <= hi+step*1e-9; v += step {
		v = math.Round(v/step) * step // no accumulated error
		label := strconv.FormatFloat(v, 'f', decimals, 64)
		if label == "-0" || strings.Trim(label, "-0.") == "" {
			label = strconv.FormatFloat(0, 'f', decimals, 64)
		}
		ticks = append(ticks, plot.Tick{Value: v, Label: label})
		if minor := v + step/2; minor <= hi {
			ticks = append(ticks, plot.Tick{Value: minor})
		}
	}
	return ticks
}

// niceStep is the smallest of 1, 2 or 5 times a power of ten at least raw (> 0).
func niceStep(raw float64) float64 {
	if !(raw > 0) {
		return 1
	}
	p := math.Pow10(int(math.Floor(math.Log10(raw))))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw*(1-1e-9) {
			return m * p
		}
	}
	return 10 * p
}

// writeFile writes a rendered canvas to path; on error it removes the file.
func writeFile(path string, c io.WriterTo) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("plots: %w", err)
	}
	_, err = c.WriteTo(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return fmt.Errorf("plots: write %s: %w", path, err)
	}
	return nil
}

// logAxis shows positive values on a log scale over whole decades with a
// linear gonum axis: a value v is drawn at log10(v) − Lo, and the ticks are
// labelled with the values. gonum's own plot.LogScale is not used because
// v0.17 places an axis label's glyph box at the arithmetic midpoint of Min
// and Max, which on a log scale shrinks the plot area, and because
// plot.LogTicks drops the labels below 1 (it truncates log10 of the minimum
// toward zero). Drawing positions linearly also lets bars start at the bottom
// of the axis.
type logAxis struct {
	Lo, Hi int // the decades at the ends of the axis: 10^Lo to 10^Hi
}

// newLogAxis covers the positive range [lo, hi] (lo ≤ hi) with whole
// decades, at least one.
func newLogAxis(lo, hi float64) logAxis {
	a := logAxis{Lo: int(math.Floor(math.Log10(lo))), Hi: int(math.Ceil(math.Log10(hi)))}
	if a.Hi <= a.Lo {
		a.Hi = a.Lo + 1
	}
	return a
}

// pos is where v is drawn; values at or below 10^Lo (zero included) are
// drawn at the bottom of the axis.
func (a logAxis) pos(v float64) float64 {
	if v <= 0 {
		return 0
	}
	return max(0, math.Log10(v)-float64(a.Lo))
}

// apply sets ax's range and ticks: a labelled tick at each power of ten and
// unlabelled ones at 2..9 times it.
func (a logAxis) apply(ax *plot.Axis) {
	ax.Min, ax.Max = 0, float64(a.Hi-a.Lo)
	var ticks []plot.Tick
	for e := a.Lo; e <= a.Hi; e++ {
		at := float64(e - a.Lo)
		ticks = append(ticks, plot.Tick{Value: at, Label: strconv.FormatFloat(math.Pow10(e), 'g', -1, 64)})
		if e == a.Hi {
			break
		}
		for i := 2; i < 10; i++ {
			ticks = append(ticks, plot.Tick{Value: at + math.Log10(float64(i))})
		}
	}
	ax.Tick.Marker = plot.ConstantTicks(ticks)
}

// nominalX names the categories 0..n-1 of the X axis, slanting the labels
// when they would not fit side by side.
func nominalX(p *plot.Plot, names []string) {
	p.NominalX(names...)
	total := 0
	for _, n := range names {
		total += len(n) + 2
	}
	if total > 60 {
		p.X.Tick.Label.Rotation = math.Pi / 6
		p.X.Tick.Label.XAlign = draw.XRight
		p.X.Tick.Label.YAlign = draw.YCenter
	}
}

// sortedKeys returns the keys of m in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
