package plots

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
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

// Span is a stretch of a run's time axis, [FromMs, ToMs] in ms since run
// start: what one panel of a timeline shows.
type Span struct {
	FromMs, ToMs float64
}

// MarkKind says what a timeline mark shows.
type MarkKind string

// Mark kinds: one per kind of checker witness a timeline draws.
const (
	// MarkBothHeld: the interval where two holds of the key certainly
	// overlapped (an exclusion witness), on both holders' rows.
	MarkBothHeld MarkKind = "both-held"
	// MarkLostUpdate: the accepted write of a lost update, on the writer's
	// row, from its invoke to its completion.
	MarkLostUpdate MarkKind = "lost-update"
	// MarkStaleWrite: an accepted write the fencing check had to reject, on
	// the writer's row.
	MarkStaleWrite MarkKind = "stale-write"
	// MarkNotLinearizable: a stretch of resource operations with no
	// linearization, across every row.
	MarkNotLinearizable MarkKind = "not-linearizable"
)

// Mark is a violation drawn on a timeline: a closed interval [StartMs,
// EndMs] (ms since run start; a single instant when equal) shaded on the
// rows of Clients, a dashed red line at its middle across every row and a
// marker at its middle below the rows. A mark comes from a checker witness
// (see WitnessMarks); Timeline draws nothing outside the interval given.
type Mark struct {
	Kind           MarkKind
	StartMs, EndMs float64
	// Clients are the rows shaded: both holders, or the writer. None: the
	// interval is shaded across every row.
	Clients []int
	// Witness describes the witness in one line.
	Witness string
}

// holdColor is the colour of holds when TimelineOptions names no strategy.
var holdColor color.Color = color.RGBA{R: 0x2b, G: 0x6c, B: 0xb0, A: 0xff}

// markFill is the translucent red shading of a mark's interval.
var markFill = color.NRGBA{R: 0xd0, G: 0x10, B: 0x10, A: 0x70}

// TimelineOptions are the optional settings of Timeline; a nil
// *TimelineOptions means every default.
type TimelineOptions struct {
	// Title is the plot's title. Default: `Holders of key "KEY" over time`.
	// A title longer than 80 characters is cut with an ellipsis.
	Title string
	// Windows are the stretches of the run to show, one panel each, top to
	// bottom (see TimelineWindows): holds, fault windows and marks are cut
	// to each panel, and each panel's X axis label names its window. A
	// window's FromMs below 0 is taken as 0; its ToMs is kept even beyond
	// the last time given (the aftermath of a fault in which nothing
	// happened is shown empty); a window with nothing in it is dropped.
	// Default (none): one panel, set by FromMs and ToMs.
	Windows []Span
	// FromMs and ToMs zoom on one window of the run, in ms since run start,
	// when Windows is empty (ignored otherwise): FromMs below 0 is taken as
	// 0 and ToMs beyond the last finite time given is cut to it. Default
	// (both 0, or ToMs ≤ FromMs): no zoom, the axis spans every time given,
	// from 0. Windows or a zoom holding nothing give ErrNoData.
	FromMs, ToMs float64
	// Strategy, when set, draws the holds in the strategy's colour
	// (StrategyColor), every other row lighter. Default: blue.
	Strategy string
	// Note, when set, is one more line at the end of the legend (e.g. that
	// the run kept only some of its witnesses).
	Note string

	_ struct{} // keyed literals only
}

// panelHeight is the height each panel after the first adds to a timeline
// with several windows.
const panelHeight = 6.5 * vg.Centimeter

// Timeline draws who held key over time: one row per client (in client
// order), a bar per hold, fault windows shaded across every row and
// labelled with their name above it, and each mark (see Mark) where its
// interval is. With several windows (opts.Windows) it stacks one panel per
// window, the legend in the first; the figure grows by panelHeight per
// panel after the first. The legend counts the marks drawn of each kind.
//
// It returns the marks drawn, each cut to the panel it was drawn in (a mark
// outside every panel is not drawn and not returned; one drawn in two
// overlapping windows is returned twice), in panel order. It returns an
// error wrapping ErrNoData when holds, faults and marks are all empty, or
// all outside the windows, else errors from writing the files.
func Timeline(key string, holds []Interval, faults []Window, marks []Mark, prefix string, opts *TimelineOptions) ([]Mark, error) {
	if opts == nil {
		opts = &TimelineOptions{}
	}
	if len(holds) == 0 && len(faults) == 0 && len(marks) == 0 {
		return nil, fmt.Errorf("%w: timeline of key %q: no hold, fault or violation", ErrNoData, key)
	}
	panels, zoomed, err := timelinePanels(key, holds, faults, marks, opts)
	if err != nil {
		return nil, err
	}
	tl := timelineLayout{zoomed: zoomed, clients: timelineClients(panels), title: timelineTitle(key, opts), base: holdColor}
	if opts.Strategy != "" {
		tl.base = StrategyColor(opts.Strategy)
	}
	tl.row = make(map[int]int, len(tl.clients))
	for i, c := range tl.clients {
		tl.row[c] = i
	}
	tl.rows = max(len(tl.clients), 1)
	tl.yLo, tl.yHi = -0.5, float64(tl.rows)-0.5

	var drawn []Mark
	var plotsDrawn []*plot.Plot
	legend := timelineLegend{}
	for i, pn := range panels {
		p, ms, err := tl.drawPanel(i, pn, &legend)
		if err != nil {
			return nil, err
		}
		drawn = append(drawn, ms...)
		plotsDrawn = append(plotsDrawn, p)
	}
	return drawn, tl.save(plotsDrawn, legend.addTo(plotsDrawn[0], drawn, opts.Note), prefix)
}

// timelinePanel is one panel of a timeline: a span of time and what falls in it.
type timelinePanel struct {
	span   Span
	holds  []Interval
	faults []Window
	marks  []Mark
}

// timelinePanels returns the panels of a timeline: one per window of opts
// with anything in it (zoomed), else one over the whole time range (every
// finite time given, from 0) with the marks of finite extent.
func timelinePanels(key string, holds []Interval, faults []Window, marks []Mark, opts *TimelineOptions) ([]timelinePanel, bool, error) {
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
	for _, m := range marks {
		see(m.StartMs)
		see(m.EndMs)
	}
	windows := opts.Windows
	zoomed := len(windows) > 0 || opts.ToMs > opts.FromMs
	if len(windows) == 0 && zoomed {
		windows = []Span{{opts.FromMs, min(opts.ToMs, tMax)}}
	}
	var panels []timelinePanel
	if zoomed {
		for _, w := range windows {
			from, to := max(w.FromMs, 0), w.ToMs
			if to <= from {
				continue
			}
			hs, fs, ms := clipToWindow(holds, faults, marks, from, to)
			if len(hs) == 0 && len(fs) == 0 && len(ms) == 0 {
				continue
			}
			panels = append(panels, timelinePanel{Span{from, to}, hs, fs, ms})
		}
		if len(panels) == 0 {
			return nil, true, fmt.Errorf("%w: timeline of key %q: no hold, fault or violation in %s", ErrNoData, key, spansText(windows))
		}
		return panels, true, nil
	}
	if tMax <= tMin {
		tMax = tMin + 1
	}
	var ms []Mark
	for _, m := range marks {
		if finite(m.StartMs) && finite(m.EndMs) {
			ms = append(ms, m)
		}
	}
	return []timelinePanel{{Span{tMin, tMax}, holds, faults, ms}}, false, nil
}

// timelineClients returns the clients of every panel's holds and marks,
// sorted: one row per client, the same in every panel.
func timelineClients(panels []timelinePanel) []int {
	var clients []int
	addRow := func(c int) {
		if !slices.Contains(clients, c) {
			clients = append(clients, c)
		}
	}
	for _, p := range panels {
		for _, h := range p.holds {
			addRow(h.Client)
		}
		for _, m := range p.marks {
			for _, c := range m.Clients {
				addRow(c)
			}
		}
	}
	slices.Sort(clients)
	return clients
}

// timelineTitle is opts.Title, or one naming the key (shortened to 40
// characters); at most 80 characters either way.
func timelineTitle(key string, opts *TimelineOptions) string {
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
	return title
}

// timelineLayout is what every panel of a timeline shares: its rows (one
// per client), their vertical range, the title (first panel) and the
// colour of holds.
type timelineLayout struct {
	zoomed   bool
	clients  []int
	row      map[int]int // client → row
	rows     int
	yLo, yHi float64
	title    string
	base     color.Color
}

// drawPanel draws panel i of a timeline: its fault windows, then the
// holds over them, then the marks; it returns the plot and the marks drawn,
// and fills in legend's entries.
func (tl timelineLayout) drawPanel(i int, pn timelinePanel, legend *timelineLegend) (*plot.Plot, []Mark, error) {
	var drawn []Mark
	xLabel := "time since run start (ms)"
	if tl.zoomed {
		xLabel = fmt.Sprintf("time since run start (ms), window %s–%s ms", formatMs(pn.span.FromMs), formatMs(pn.span.ToMs))
	}
	t := ""
	if i == 0 {
		t = tl.title
	}
	p := newPlot(t, xLabel, "client (number)")
	lo, hi := pn.span.FromMs, pn.span.ToMs
	sliver := (hi - lo) / 500 // narrowest visible hold
	// Fault windows first, so holds draw over them.
	var labels plotter.XYLabels
	for _, f := range pn.faults {
		start, end := f.StartMs, f.EndMs
		if !finite(start) {
			start = lo
		}
		if !finite(end) || end > hi {
			end = hi
		}
		end = max(end, start+sliver)
		poly, err := plotter.NewPolygon(rect(start, end, tl.yLo, tl.yHi))
		if err != nil {
			return nil, nil, fmt.Errorf("plots: fault %q: %w", f.Name, err)
		}
		poly.Color = faultColor
		poly.LineStyle.Width = 0
		p.Add(poly)
		legend.fault = poly
	}
	labelStyle := text.Style{Font: font.From(sans, 8), Handler: plot.DefaultTextHandler}
	msPerPoint := (hi - lo) / float64(Width-2*vg.Centimeter) // the data area is about 2 cm narrower than the figure
	labelWidth := func(name string) float64 { return float64(labelStyle.Width(name)+vg.Points(4)) * msPerPoint }
	for _, f := range labelledFaults(pn.faults, lo, labelWidth) {
		labels.XYs = append(labels.XYs, plotter.XY{X: f.StartMs, Y: tl.yHi})
		labels.Labels = append(labels.Labels, f.Name)
	}
	// Holds: one polygon each, so overlapping holds of one client (a
	// stale holder and its next grant) fill whole whatever the fill rule.
	for _, h := range pn.holds {
		start, end := h.StartMs, h.EndMs
		if !finite(start) {
			continue // no start: nothing to place
		}
		if math.IsNaN(end) || math.IsInf(end, 1) {
			end = hi
		}
		end = max(end, start+sliver)
		r := tl.row[h.Client]
		y := float64(r)
		poly, err := plotter.NewPolygon(rect(start, end, y-0.35, y+0.35))
		if err != nil {
			return nil, nil, fmt.Errorf("plots: hold of client %d: %w", h.Client, err)
		}
		poly.Color = tl.base
		if r%2 == 1 {
			poly.Color = lighter(tl.base, 0.35)
		}
		poly.LineStyle.Width = 0
		p.Add(poly)
		if legend.hold == nil {
			legend.hold = poly
		}
	}
	// Marks: exactly their interval, over the holds.
	for _, m := range pn.marks {
		if err := addMark(p, m, tl.row, tl.yLo, tl.yHi, legend); err != nil {
			return nil, nil, err
		}
		drawn = append(drawn, m)
	}
	if len(labels.XYs) > 0 {
		l, err := plotter.NewLabels(labels)
		if err != nil {
			return nil, nil, fmt.Errorf("plots: fault labels: %w", err)
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
	every := max(1, len(tl.clients)/20)
	var ticks []plot.Tick
	for i, c := range tl.clients {
		t := plot.Tick{Value: float64(i)}
		if i%every == 0 {
			t.Label = strconv.Itoa(c)
		}
		ticks = append(ticks, t)
	}
	p.Y.Tick.Marker = plot.ConstantTicks(ticks)
	p.X.Min, p.X.Max = lo, hi
	return p, drawn, nil
}

// save sizes the panels (room above the rows for the fault labels and,
// in the first panel, the legend's entries lines) and writes them, one
// above the other, as prefix.png and prefix.svg.
func (tl timelineLayout) save(plotsDrawn []*plot.Plot, entries int, prefix string) error {
	h := Height + panelHeight*vg.Length(len(plotsDrawn)-1)
	// Room above the rows for the fault labels, and in the first panel for
	// the legend: at least a fifth of the axis, more when the legend's
	// lines (about 11 pt each, plus a fault label's line) need it in a
	// panel's data area (its share of the height less about 2.2 cm of
	// title and axis).
	dataH := float64(h/vg.Length(len(plotsDrawn)) - 2.2*vg.Centimeter)
	for i, p := range plotsDrawn {
		room := 0.25 * float64(tl.rows)
		if need := float64(11*vg.Length(entries) + 12); i == 0 && dataH > need {
			room = max(room, need*float64(tl.rows+1)/(dataH-need))
		}
		p.Y.Min, p.Y.Max = tl.yLo, tl.yHi+room
	}
	if len(plotsDrawn) == 1 {
		return save(plotsDrawn[0], prefix)
	}
	err := saveWith(func(c draw.Canvas) {
		tiles := draw.Tiles{Rows: len(plotsDrawn), Cols: 1, PadY: vg.Centimeter / 4}
		grid := make([][]*plot.Plot, len(plotsDrawn))
		for i, p := range plotsDrawn {
			grid[i] = []*plot.Plot{p}
		}
		for i, cs := range plot.Align(grid, tiles, c) {
			plotsDrawn[i].Draw(cs[0])
		}
	}, prefix, Width, h)
	return err
}

// timelineLegend collects one thumbnail per kind of thing a timeline draws.
type timelineLegend struct {
	fault, hold plot.Thumbnailer
	marks       map[MarkKind]plot.Thumbnailer
}

// markLabels are the legend texts of the mark kinds, in legend order.
var markLabels = []struct {
	kind  MarkKind
	label string
}{
	{MarkBothHeld, "both held (exclusion witness)"},
	{MarkLostUpdate, "lost update: the write"},
	{MarkStaleWrite, "stale write accepted"},
	{MarkNotLinearizable, "resource not linearizable"},
}

// addTo writes the legend into p: fault window, hold, and for each mark
// kind drawn its label with the number of marks drawn, e.g. "both held
// (exclusion witness): 2"; note last. It returns the number of lines.
func (l timelineLegend) addTo(p *plot.Plot, drawn []Mark, note string) int {
	n := 0
	defer func() { p.Legend.Top, p.Legend.Left = true, false }()
	add := func(label string, thumbs ...plot.Thumbnailer) {
		p.Legend.Add(label, thumbs...)
		n++
	}
	if l.fault != nil {
		add("fault window", l.fault)
	}
	if l.hold != nil {
		add("hold (lock granted until end of use)", l.hold)
	}
	count := map[MarkKind]int{}
	for _, m := range drawn {
		count[m.Kind]++
	}
	for _, ml := range markLabels {
		if c := count[ml.kind]; c > 0 {
			add(fmt.Sprintf("%s: %d", ml.label, c), l.marks[ml.kind])
		}
	}
	if note != "" {
		add(note)
	}
	return n
}

// markGlyph is the marker below the rows for each mark kind.
func markGlyph(k MarkKind) draw.GlyphDrawer {
	switch k {
	case MarkBothHeld:
		return draw.PyramidGlyph{}
	case MarkNotLinearizable:
		return draw.SquareGlyph{}
	case MarkStaleWrite:
		return draw.RingGlyph{}
	default:
		return draw.CrossGlyph{}
	}
}

// addMark draws m on p: its interval shaded on its clients' rows (every
// row if none), a dashed line at its middle across every row and a marker
// at its middle below the rows.
func addMark(p *plot.Plot, m Mark, row map[int]int, yLo, yHi float64, legend *timelineLegend) error {
	shade := func(y0, y1 float64) error {
		poly, err := plotter.NewPolygon(rect(m.StartMs, m.EndMs, y0, y1))
		if err != nil {
			return fmt.Errorf("plots: mark at %v ms: %w", m.StartMs, err)
		}
		poly.Color = markFill
		poly.LineStyle.Color = violateColor
		poly.LineStyle.Width = vg.Points(0.75)
		p.Add(poly)
		return nil
	}
	if len(m.Clients) == 0 {
		if err := shade(yLo, yHi); err != nil {
			return err
		}
	}
	for _, c := range m.Clients {
		y := float64(row[c])
		if err := shade(y-0.45, y+0.45); err != nil {
			return err
		}
	}
	mid := m.StartMs + (m.EndMs-m.StartMs)/2
	l, err := plotter.NewLine(plotter.XYs{{X: mid, Y: yLo}, {X: mid, Y: yHi}})
	if err != nil {
		return fmt.Errorf("plots: mark at %v ms: %w", mid, err)
	}
	l.Color = violateColor
	l.Width = vg.Points(0.75)
	l.Dashes = []vg.Length{vg.Points(3), vg.Points(2)}
	p.Add(l)
	s, err := plotter.NewScatter(plotter.XYs{{X: mid, Y: yLo}})
	if err != nil {
		return fmt.Errorf("plots: mark at %v ms: %w", mid, err)
	}
	s.Shape = markGlyph(m.Kind)
	s.Color = violateColor
	s.Radius = vg.Points(4)
	p.Add(s)
	if legend.marks == nil {
		legend.marks = map[MarkKind]plot.Thumbnailer{}
	}
	if legend.marks[m.Kind] == nil {
		legend.marks[m.Kind] = s
	}
	return nil
}

// clipToWindow cuts holds, faults and marks to [from, to] (ms); those
// wholly outside are left out.
func clipToWindow(holds []Interval, faults []Window, marks []Mark, from, to float64) ([]Interval, []Window, []Mark) {
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
	var ms []Mark
	for _, m := range marks {
		if !finite(m.StartMs) || !finite(m.EndMs) || m.StartMs > to || m.EndMs < from {
			continue
		}
		m.StartMs, m.EndMs = max(m.StartMs, from), min(m.EndMs, to)
		ms = append(ms, m)
	}
	return hs, fs, ms
}

// spansText writes windows as "106–706 ms" or "106–706 ms, 900–1200 ms".
func spansText(ws []Span) string {
	s := ""
	for i, w := range ws {
		if i > 0 {
			s += ", "
		}
		s += formatMs(w.FromMs) + "–" + formatMs(w.ToMs) + " ms"
	}
	return s
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

// labelledFaults are the fault windows that get their name above the rows,
// in order, an unknown start moved to lo: every window but one whose label
// would print over an earlier kept one (redlock-clock-jump's first clock
// jump, 160 ms into its partition, printed its name over the partition's).
// width is a label's width in the X axis' units (ms). A dropped label's
// window stays shaded; its name is in the run's fault list.
func labelledFaults(faults []Window, lo float64, width func(string) float64) []Window {
	var out []Window
	for _, f := range faults {
		if !finite(f.StartMs) {
			f.StartMs = lo
		}
		over := false
		for _, o := range out {
			if f.StartMs < o.StartMs+width(o.Name) && o.StartMs < f.StartMs+width(f.Name) {
				over = true
				break
			}
		}
		if !over {
			out = append(out, f)
		}
	}
	return out
}
