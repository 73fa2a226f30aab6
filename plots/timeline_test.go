package plots

import (
	"bytes"
	"fmt"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"gonum.org/v1/plot/vg"
)

// marksAt are point marks (MarkBothHeld, no rows) at the times given, in ms.
func marksAt(ts ...float64) []Mark {
	var ms []Mark
	for _, t := range ts {
		ms = append(ms, Mark{Kind: MarkBothHeld, StartMs: t, EndMs: t})
	}
	return ms
}

// errOf drops Timeline's marks.
func errOf(_ []Mark, err error) error { return err }

func TestTimelineWindows(t *testing.T) {
	tests := []struct {
		name   string
		holds  []Interval
		faults []Window
		marks  []Mark
		ttl    float64
		end    float64
		want   []Span
	}{
		{name: "no fault, no mark: the whole run", holds: []Interval{{0, 10, 20}}, ttl: 100, end: 2000,
			want: []Span{{0, 2000}}},
		// A client crashes holding a key without TTL: nobody is granted
		// again, so the window runs to the end of the run.
		{name: "deadlock: the whole aftermath", holds: []Interval{{0, 10, 20}, {1, 290, 300}}, faults: []Window{{"crash-between", 300, 300}},
			ttl: 100, end: 1100, want: []Span{{200, 1100}}},
		// A partition heals at 700; the next grant comes at 950: in view.
		{name: "partition: until the grant after the heal", holds: []Interval{{0, 380, 420}, {1, 950, 960}}, faults: []Window{{"partition-holder", 400, 700}},
			ttl: 100, end: 2000, want: []Span{{300, 1050}}},
		// A paused holder's use ends late, after the next grants.
		{name: "struck hold: until its end of use", holds: []Interval{{0, 100, 1400}, {1, 310, 320}}, faults: []Window{{"gc-pause", 110, 300}},
			ttl: 100, end: 2000, want: []Span{{10, 1500}}},
		{name: "mark outside every fault gets its own window", holds: []Interval{{0, 10, 20}, {1, 420, 430}}, faults: []Window{{"f", 400, 410}},
			marks: []Mark{{Kind: MarkBothHeld, StartMs: 1500, EndMs: 1510}}, ttl: 100, end: 2000,
			want: []Span{{300, 610}, {1400, 1610}}},
		{name: "windows that overlap merge", holds: []Interval{{0, 150, 160}, {0, 250, 260}}, faults: []Window{{"a", 100, 110}, {"b", 200, 210}},
			ttl: 50, end: 2000, want: []Span{{50, 310}}},
		{name: "more than four windows: the closest merge", faults: []Window{{"a", 100, 100}, {"b", 300, 300}, {"c", 480, 480}, {"d", 700, 700}, {"e", 900, 900}},
			holds: []Interval{{0, 101, 102}, {0, 301, 302}, {0, 481, 482}, {0, 701, 702}, {0, 901, 902}}, ttl: 10, end: 1000,
			want: []Span{{90, 120}, {290, 500}, {690, 720}, {890, 920}}},
		{name: "cut to the run", holds: []Interval{{0, 5, 6}}, faults: []Window{{"f", 2, 3}}, ttl: 100, end: 150,
			want: []Span{{0, 150}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := TimelineWindows(tt.holds, tt.faults, tt.marks, tt.ttl, tt.end)
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("windows %v, want %v", got, tt.want)
			}
			for _, m := range tt.marks {
				if !slices.ContainsFunc(got, func(w Span) bool { return w.FromMs <= m.StartMs && m.EndMs <= w.ToMs }) {
					t.Errorf("mark %+v is in no window", m)
				}
			}
		})
	}
}

// TestTimelineDrawsMarks: Timeline draws each mark over exactly its
// interval (cut to a panel only when it crosses the panel's edge), returns
// what it drew, and its legend counts the marks drawn by kind; a figure
// with several windows is one panel taller per window.
func TestTimelineDrawsMarks(t *testing.T) {
	holds := []Interval{{0, 100, 180}, {1, 150, 170}, {2, 900, 990}, {1, 960, 965}}
	faults := []Window{{"gc-pause", 110, 160}, {"clock-jump", 950, 955}}
	marks := []Mark{
		{Kind: MarkBothHeld, StartMs: 150, EndMs: 170, Clients: []int{0, 1}},
		{Kind: MarkLostUpdate, StartMs: 175, EndMs: 180, Clients: []int{0}},
		{Kind: MarkBothHeld, StartMs: 960, EndMs: 960, Clients: []int{1, 2}}, // one instant
		{Kind: MarkStaleWrite, StartMs: 985, EndMs: 990, Clients: []int{2}},
		{Kind: MarkNotLinearizable, StartMs: 3000, EndMs: 3100}, // in no window
	}
	tests := []struct {
		name      string
		opts      *TimelineOptions
		wantDrawn []Mark
		legend    []string
		panels    int
	}{
		{"whole run", nil, marks, []string{"both held (exclusion witness): 2", "lost update: the write: 1", "stale write accepted: 1", "resource not linearizable: 1"}, 1},
		{"two windows", &TimelineOptions{Windows: []Span{{50, 300}, {850, 1050}}}, marks[:4],
			[]string{"both held (exclusion witness): 2", "lost update: the write: 1", "stale write accepted: 1"}, 2},
		{"window cuts a mark", &TimelineOptions{FromMs: 160, ToMs: 400},
			[]Mark{{Kind: MarkBothHeld, StartMs: 160, EndMs: 170, Clients: []int{0, 1}}, marks[1]},
			[]string{"both held (exclusion witness): 1", "lost update: the write: 1"}, 1},
	}
	dir := outDir(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prefix := filepath.Join(dir, tt.name)
			drawn, err := Timeline("lb:k0", holds, faults, marks, prefix, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(drawn) != fmt.Sprint(tt.wantDrawn) {
				t.Errorf("drawn %v\nwant %v", drawn, tt.wantDrawn)
			}
			texts := svgTexts(t, prefix+".svg")
			for _, l := range tt.legend {
				if !slices.Contains(texts, l) {
					t.Errorf("legend lacks %q; texts %q", l, texts)
				}
			}
			data, err := os.ReadFile(prefix + ".png")
			if err != nil {
				t.Fatal(err)
			}
			img, err := png.Decode(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			wantH := int(math.Round(float64(Height+panelHeight*vg.Length(tt.panels-1)) / vg.Inch.Points() * PNGDPI))
			if h := img.Bounds().Dy(); abs(h-wantH) > 1 {
				t.Errorf("PNG %d px high, want %d (%d panels)", h, wantH, tt.panels)
			}
		})
	}
}

// TestTimelineWindowPastTheData: a window is kept to its end even past the
// last time given, so a deadlock's empty aftermath shows.
func TestTimelineWindowPastTheData(t *testing.T) {
	prefix := filepath.Join(outDir(t), "deadlock")
	holds := []Interval{{1, 350, 360}, {10, 400, 405}}
	_, err := Timeline("lb:k0", holds, []Window{{"crash-between", 405, 405}}, nil, prefix, &TimelineOptions{Windows: []Span{{305, 2000}}})
	if err != nil {
		t.Fatal(err)
	}
	if texts := svgTexts(t, prefix+".svg"); !slices.Contains(texts, "time since run start (ms), window 305–2000 ms") {
		t.Errorf("the window is not 305–2000 ms; texts %q", texts)
	}
}

// TestLabelledFaults: a fault label that would print over an earlier one
// is dropped (redlock-clock-jump's first clock jump inside its partition
// printed its name over the partition's); the others keep theirs.
func TestLabelledFaults(t *testing.T) {
	width := func(name string) float64 { return 10 * float64(len(name)) } // ms
	tests := []struct {
		name   string
		faults []Window
		want   []string
	}{
		{"a label over the previous one", []Window{{"rcj partition", 0, 900}, {"rcj", 100, 110}, {"rcj", 400, 410}}, []string{"rcj partition@0", "rcj@400"}},
		{"side by side", []Window{{"gc-pause", 100, 300}, {"gc-pause", 180, 500}}, []string{"gc-pause@100", "gc-pause@180"}},
		{"too close", []Window{{"gc-pause", 100, 300}, {"gc-pause", 179, 500}}, []string{"gc-pause@100"}},
		{"unknown start", []Window{{"f", math.NaN(), 50}, {"g", 15, 30}}, []string{"f@10"}},
		{"none", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, f := range labelledFaults(tt.faults, 10, width) {
				got = append(got, fmt.Sprintf("%s@%g", f.Name, f.StartMs))
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("labelledFaults = %v, want %v", got, tt.want)
			}
		})
	}
}
