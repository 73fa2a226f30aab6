package plots

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"image/color"
	"image/png"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/impl/strategies"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/stats"
)

// outDir is where the tests write plots: a temporary folder, or $PLOTS_OUT
// when set, to look at them (PLOTS_OUT=/tmp/plots go test ./plots).
func outDir(t *testing.T) string {
	t.Helper()
	if d := os.Getenv("PLOTS_OUT"); d != "" {
		return filepath.Join(d, t.Name())
	}
	return t.TempDir()
}

func sampleRuns() []results.Run {
	var runs []results.Run
	names := Strategies
	for i, n := range names {
		for seed := 1; seed <= 3; seed++ {
			runs = append(runs, results.Run{
				Strategy: n, Scenario: "baseline", Seed: int64(seed),
				ThroughputPerS:         1000 + float64(i*100+seed*37),
				RoundTripsPerGrant:     2 + float64(i%3) + float64(seed)*0.1,
				ClientCommandsPerGrant: 1.5 + float64(i%3),
				AcquireLatencyMs: stats.Latency{
					P50: 0.3 + float64(i)*0.1, P90: 1 + float64(i), P99: 5 + float64(i*3), P999: 20 + float64(i*5), Max: 40 + float64(i*20), Samples: 10,
				},
			})
		}
	}
	return runs
}

// windowed gives each run six time windows around its throughput,
// acquire p50 and p99 and commands per grant (jitter ±10%), as a bench
// records them.
func windowed(runs []results.Run) []results.Run {
	out := slices.Clone(runs)
	for i := range out {
		r := &out[i]
		r.Windows = nil
		for k, j := range []float64{-0.1, -0.05, 0, 0.02, 0.05, 0.1} {
			p50, p99, c := r.AcquireLatencyMs.P50*(1+j), r.AcquireLatencyMs.P99*(1+j), r.ClientCommandsPerGrant*(1+j)
			w := results.Window{StartMs: float64(k) * 100, EndMs: float64(k+1) * 100, Grants: 10,
				GrantsPerS: r.ThroughputPerS * (1 + j), AcquireP50Ms: &p50, AcquireP99Ms: &p99, CommandsPerGrant: &c}
			if r.ThroughputPerS == 0 { // no grant: no latency, no commands per grant
				w.Grants, w.AcquireP50Ms, w.AcquireP99Ms, w.CommandsPerGrant = 0, nil, nil, nil
			}
			r.Windows = append(r.Windows, w)
		}
	}
	return out
}

func sampleLatencies() map[string][]float64 {
	r := rand.New(rand.NewPCG(1, 2))
	m := map[string][]float64{}
	for i, n := range []string{"token-lua", "redlock", "watchdog"} {
		for range 5000 {
			m[n] = append(m[n], 0.2*float64(i+1)*r.ExpFloat64()+0.05)
		}
	}
	return m
}

func sampleHolds() []Interval {
	var hs []Interval
	t := 0.0
	for i := 0; t < 2000; i++ {
		d := 20 + float64(i%7)*5
		hs = append(hs, Interval{Client: i % 5, StartMs: t, EndMs: t + d})
		t += d + 3
	}
	// A paused holder overlapping the next ones, and a hold that never ended.
	return append(hs, Interval{Client: 2, StartMs: 450, EndMs: 650}, Interval{Client: 7, StartMs: 1900, EndMs: math.Inf(1)})
}

// checkFiles asserts prefix.png decodes as a PNG at PNGDPI, 10 cm high and
// 16 to 32 cm wide, and prefix.svg parses as an SVG document.
func checkFiles(t *testing.T, prefix string) {
	t.Helper()
	data, err := os.ReadFile(prefix + ".png")
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%s.png does not decode: %v", prefix, err)
	}
	minW, maxW, wantH := int(math.Round(16/2.54*PNGDPI)), int(math.Round(32/2.54*PNGDPI)), int(math.Round(10/2.54*PNGDPI))
	if b := img.Bounds(); b.Dx() < minW-1 || b.Dx() > maxW+1 || abs(b.Dy()-wantH) > 1 {
		t.Errorf("%s.png is %dx%d px, want %d to %d px wide and about %d high", prefix, b.Dx(), b.Dy(), minW, maxW, wantH)
	}
	svgTexts(t, prefix+".svg") // parses it
}

// svgTexts parses an SVG file as XML and returns the content of its <text>
// elements, in document order; it fails the test when the file is not an
// SVG document.
func svgTexts(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := xml.NewDecoder(bytes.NewReader(data))
	var texts []string
	root, inText := "", false
	var cur strings.Builder
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s does not parse as XML: %v", path, err)
		}
		switch el := tok.(type) {
		case xml.StartElement:
			if root == "" {
				root = el.Name.Local
			}
			if el.Name.Local == "text" {
				inText = true
				cur.Reset()
			}
		case xml.CharData:
			if inText {
				cur.Write(el)
			}
		case xml.EndElement:
			if el.Name.Local == "text" {
				inText = false
				texts = append(texts, strings.TrimSpace(cur.String()))
			}
		}
	}
	if root != "svg" {
		t.Fatalf("%s: root element %q, want svg", path, root)
	}
	return texts
}

// checkNoFiles asserts that nothing was written for prefix.
func checkNoFiles(t *testing.T, prefix string) {
	t.Helper()
	for _, ext := range []string{".png", ".svg"} {
		if _, err := os.Stat(prefix + ext); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s%s exists after a no-data error", prefix, ext)
		}
	}
}

func abs(x int) int { return max(x, -x) }

func TestPlots(t *testing.T) {
	errored := results.Run{Strategy: "token-lua", Error: "port in use", AcquireLatencyMs: stats.Latency{P50: 1, Samples: 1}, ThroughputPerS: 5, RoundTripsPerGrant: 2}
	noLatency := results.Run{Strategy: "token-lua", ThroughputPerS: 5}
	zeroLatency := results.Run{Strategy: "token-lua", AcquireLatencyMs: stats.Latency{Samples: 3}}
	tests := []struct {
		name   string
		draw   func(prefix string) error
		noData bool // want ErrNoData and no file
	}{
		{"throughput", func(p string) error { return Throughput(sampleRuns(), p) }, false},
		{"throughput one run", func(p string) error { return Throughput(sampleRuns()[:1], p) }, false},
		{"throughput all zero", func(p string) error { return Throughput([]results.Run{noLatency, {Strategy: "x"}}, p) }, false},
		{"throughput empty", func(p string) error { return Throughput(nil, p) }, true},
		{"throughput only errors", func(p string) error { return Throughput([]results.Run{errored}, p) }, true},
		{"throughput windows", func(p string) error { return Throughput(windowed(sampleRuns()), p) }, false},
		{"commands per grant", func(p string) error { return CommandsPerGrant(sampleRuns(), p) }, false},
		{"commands per grant windows", func(p string) error { return CommandsPerGrant(windowed(sampleRuns()), p) }, false},
		{"commands per grant unknown", func(p string) error { return CommandsPerGrant([]results.Run{noLatency}, p) }, true},
		{"latency percentiles", func(p string) error { return LatencyPercentiles(sampleRuns(), p) }, false},
		{"latency percentiles windows", func(p string) error { return LatencyPercentiles(windowed(sampleRuns()), p) }, false},
		{"latency percentiles some zero", func(p string) error {
			return LatencyPercentiles(append(sampleRuns()[:3], results.Run{Strategy: "fast", AcquireLatencyMs: stats.Latency{P99: 0.02, Max: 0.5, Samples: 2}}), p)
		}, false},
		{"latency percentiles no samples", func(p string) error { return LatencyPercentiles([]results.Run{noLatency, errored}, p) }, true},
		{"latency percentiles all zero", func(p string) error { return LatencyPercentiles([]results.Run{zeroLatency}, p) }, true},
		{"latency CDF", func(p string) error { return LatencyCDF(sampleLatencies(), p) }, false},
		{"latency CDF one sample", func(p string) error { return LatencyCDF(map[string][]float64{"a": {3}, "b": nil}, p) }, false},
		{"latency CDF empty", func(p string) error { return LatencyCDF(nil, p) }, true},
		{"latency CDF non-positive", func(p string) error {
			return LatencyCDF(map[string][]float64{"a": {0, -1, math.NaN(), math.Inf(1)}}, p)
		}, true},
		{"timeline", func(p string) error {
			return errOf(Timeline("lock:0", sampleHolds(), []Window{{"pause holder", 400, 700}, {"kill node", 1500, math.Inf(1)}}, marksAt(520, 610), p, nil))
		}, false},
		{"timeline zoomed with title", func(p string) error {
			return errOf(Timeline("lock:0", sampleHolds(), []Window{{"pause holder", 400, 700}, {"kill node", 1500, math.Inf(1)}}, marksAt(520, 610, 1800),
				p, &TimelineOptions{Title: "fenced under gc-pause (seed 1): holders of lock:0", FromMs: 300, ToMs: 900}))
		}, false},
		{"timeline zoom past the data", func(p string) error {
			return errOf(Timeline("k", sampleHolds(), nil, nil, p, &TimelineOptions{FromMs: -100, ToMs: 1e6}))
		}, false},
		{"timeline window holds nothing", func(p string) error {
			return errOf(Timeline("k", sampleHolds(), nil, nil, p, &TimelineOptions{FromMs: 5000, ToMs: 6000}))
		}, true},
		{"timeline faults only", func(p string) error { return errOf(Timeline("k", nil, []Window{{"partition", 10, 20}}, nil, p, nil)) }, false},
		{"timeline many clients", func(p string) error {
			var hs []Interval
			for c := range 64 {
				hs = append(hs, Interval{Client: c * 3, StartMs: float64(c * 10), EndMs: float64(c*10 + 8)})
			}
			return errOf(Timeline(strings.Repeat("long-key-", 10), hs, nil, marksAt(math.NaN()), p, nil))
		}, false},
		{"timeline empty", func(p string) error { return errOf(Timeline("k", nil, nil, nil, p, nil)) }, true},
		{"throughput vs clients", func(p string) error {
			return ThroughputVsClients(map[string][]XY{
				"token-lua": {{X: 8, Y: 1650}, {X: 1, Y: 900}, {X: 2, Y: 1500}, {X: 4, Y: 1700}},
				"redlock":   {{X: 1, Y: 300}, {X: 2, Y: 500}, {X: 4, Y: 600}, {X: 8, Y: 580}, {X: 16, Y: math.NaN()}},
			}, p)
		}, false},
		{"throughput vs clients one point", func(p string) error { return ThroughputVsClients(map[string][]XY{"a": {{X: 4, Y: 0}}}, p) }, false},
		{"throughput vs clients empty", func(p string) error { return ThroughputVsClients(map[string][]XY{"a": nil}, p) }, true},
		{"capacity", func(p string) error {
			return Capacity(map[string][]XY{
				"token-lua":  {{X: 1, Y: 190, Low: 180, High: 195}, {X: 4, Y: 760}, {X: 16, Y: 2900}, {X: 64, Y: 6100}, {X: 256, Y: 5800}},
				"etcd-mutex": {{X: 1, Y: 120}, {X: 4, Y: 400}, {X: 16, Y: 900}, {X: 64, Y: 1000}, {X: 256, Y: 700}},
			}, p)
		}, false},
		{"capacity empty", func(p string) error { return Capacity(map[string][]XY{"a": {{X: 1, Y: math.Inf(1)}}}, p) }, true},
	}
	dir := outDir(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prefix := filepath.Join(dir, "sub", strings.ReplaceAll(tt.name, " ", "-"))
			err := tt.draw(prefix)
			if tt.noData {
				if !errors.Is(err, ErrNoData) {
					t.Fatalf("err = %v, want ErrNoData", err)
				}
				checkNoFiles(t, prefix)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			checkFiles(t, prefix)
		})
	}
}

func TestLogAxis(t *testing.T) {
	tests := []struct {
		lo, hi float64
		want   logAxis
	}{
		{0.3, 200, logAxis{-1, 3}},
		{1, 10, logAxis{0, 1}},
		{5, 5, logAxis{0, 1}},
		{0.1, 0.1, logAxis{-1, 0}},
		{0.05, 902, logAxis{-2, 3}}, // ends at the decade above the largest value
		{0.05, 1000, logAxis{-2, 3}},
	}
	for _, tt := range tests {
		a := newLogAxis(tt.lo, tt.hi)
		if a != tt.want {
			t.Errorf("newLogAxis(%v, %v) = %+v, want %+v", tt.lo, tt.hi, a, tt.want)
		}
	}
	a := logAxis{-1, 3}
	for v, want := range map[float64]float64{0.1: 0, 1: 1, 100: 3, 0: 0, -5: 0, 0.01: 0} {
		if got := a.pos(v); math.Abs(got-want) > 1e-12 {
			t.Errorf("pos(%v) = %v, want %v", v, got, want)
		}
	}
}

func TestSaveError(t *testing.T) {
	// A prefix under a regular file cannot be created.
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	err := Throughput(sampleRuns(), filepath.Join(file, "plot"))
	if err == nil || errors.Is(err, ErrNoData) {
		t.Fatalf("err = %v, want a file-system error", err)
	}
}

func TestLinearTicks(t *testing.T) {
	tests := []struct {
		lo, hi float64
		want   []string // the labels, in order
	}{
		{0, 500, []string{"0", "100", "200", "300", "400", "500"}},
		{0, 706, []string{"0", "200", "400", "600"}},
		{106, 706, []string{"200", "400", "600"}},
		{0, 1, []string{"0.0", "0.2", "0.4", "0.6", "0.8", "1.0"}},
		{0, 0.05, []string{"0.00", "0.01", "0.02", "0.03", "0.04", "0.05"}},
		{-10, 10, []string{"-10", "-5", "0", "5", "10"}},
		{3, 3, nil},
	}
	for _, tt := range tests {
		var got []string
		for _, tk := range (linearTicks{}).Ticks(tt.lo, tt.hi) {
			if tk.Label != "" {
				got = append(got, tk.Label)
			}
			if tk.Value < tt.lo || tk.Value > tt.hi {
				t.Errorf("Ticks(%v, %v): tick at %v is outside the range", tt.lo, tt.hi, tk.Value)
			}
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("Ticks(%v, %v) labels = %q, want %q", tt.lo, tt.hi, got, tt.want)
		}
	}
}

// TestStrategyColors: the fixed colours go to registered strategies, in
// the registry's order (a strategy added to strategies.All without one is drawn
// in a colour chosen by its name, so the palette needs no edit), none is
// the violation red or the fault orange, and a name keeps its colour (also
// a name outside the fixed list).
func TestStrategyColors(t *testing.T) {
	registered := slices.DeleteFunc(strategies.Names(), func(n string) bool { return !slices.Contains(Strategies, n) })
	if !slices.Equal(Strategies, registered) {
		t.Errorf("plots.Strategies = %q, strategies.Names() = %q: the fixed colours go to registered strategies, in registry order", Strategies, strategies.Names())
	}
	seen := map[color.Color]string{}
	for _, n := range Strategies {
		c := StrategyColor(n)
		if other, ok := seen[c]; ok {
			t.Errorf("%s and %s share the colour %v", other, n, c)
		}
		seen[c] = n
		for _, reserved := range []color.Color{violateColor, faultColor, color.RGBA{0xd6, 0x27, 0x28, 0xff}, color.RGBA{0xff, 0x7f, 0x0e, 0xff}} {
			if sameRGB(c, reserved) {
				t.Errorf("%s is drawn in a colour reserved for violations or faults", n)
			}
		}
	}
	want := map[string]color.Color{"token-lua": color.RGBA{0x1f, 0x77, 0xb4, 0xff}, "redlock": color.RGBA{0x94, 0x67, 0xbd, 0xff}, "fenced": color.RGBA{0x17, 0xbe, 0xcf, 0xff}}
	for n, c := range want {
		if StrategyColor(n) != c {
			t.Errorf("StrategyColor(%s) = %v, want %v (the colour is part of the report's key)", n, StrategyColor(n), c)
		}
	}
	if StrategyColor("my-new-lock") != StrategyColor("my-new-lock") {
		t.Error("an unknown name changes colour between calls")
	}
	if _, known := seen[StrategyColor("my-new-lock")]; known {
		t.Error("an unknown name takes a registered strategy's colour")
	}
}

func sameRGB(a, b color.Color) bool {
	r1, g1, b1, _ := a.RGBA()
	r2, g2, b2, _ := b.RGBA()
	return r1>>8 == r2>>8 && g1>>8 == g2>>8 && b1>>8 == b2>>8
}

// TestSameColourEveryChart: a strategy's colour appears in each chart that
// draws it (SVG fill or stroke), so one colour stands for it everywhere.
func TestSameColourEveryChart(t *testing.T) {
	dir := outDir(t)
	runs := sampleRuns()
	draws := map[string]func(string) error{
		"throughput":  func(p string) error { return Throughput(runs, p) },
		"commands":    func(p string) error { return CommandsPerGrant(runs, p) },
		"percentiles": func(p string) error { return LatencyPercentiles(runs, p) },
		"cdf":         func(p string) error { return LatencyCDF(sampleLatencies(), p) },
		"vs-clients": func(p string) error {
			return ThroughputVsClients(map[string][]XY{"token-lua": {{X: 1, Y: 900}, {X: 4, Y: 1500}}, "redlock": {{X: 1, Y: 300}, {X: 4, Y: 500}}, "watchdog": {{X: 1, Y: 800}, {X: 4, Y: 1400}}}, p)
		},
		"timeline": func(p string) error {
			return errOf(Timeline("k", sampleHolds(), nil, nil, p, &TimelineOptions{Strategy: "token-lua"}))
		},
	}
	for name, draw := range draws {
		prefix := filepath.Join(dir, name)
		if err := draw(prefix); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		doc, err := os.ReadFile(prefix + ".svg")
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range []string{"token-lua", "redlock", "watchdog"} {
			if name == "timeline" && st != "token-lua" {
				continue
			}
			r, g, b, _ := StrategyColor(st).RGBA()
			hex := fmt.Sprintf("#%02X%02X%02X", r>>8, g>>8, b>>8)
			if !strings.Contains(strings.ToUpper(string(doc)), hex) {
				t.Errorf("%s.svg does not draw %s in its colour %s", name, st, hex)
			}
		}
	}
}

// TestTitles checks what the plots say in their SVG text: no min–max claim
// without a spread, the caller's timeline title and zoom window, and the
// latency axis ending at the decade above the largest value.
func TestTitles(t *testing.T) {
	dir := outDir(t)
	svg := func(prefix string) string {
		t.Helper()
		data, err := os.ReadFile(prefix + ".svg")
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	oneSeed := sampleRuns()
	var seed1 []results.Run
	for _, r := range oneSeed {
		if r.Seed == 1 {
			seed1 = append(seed1, r)
		}
	}
	tests := []struct {
		name          string
		draw          func(prefix string) error
		want, notWant []string
	}{
		{"throughput one seed", func(p string) error { return Throughput(seed1, p) },
			[]string{"Throughput per strategy and scenario (one seed)"}, []string{"min–max"}},
		{"throughput three seeds", func(p string) error { return Throughput(sampleRuns(), p) },
			[]string{"Throughput per strategy and scenario (median over 3 seeds)"}, []string{"min–max"}},
		{"throughput windows", func(p string) error { return Throughput(windowed(sampleRuns()), p) },
			[]string{"Throughput per strategy and scenario (median over time windows, whiskers: 95% interval)"}, []string{"min–max"}},
		{"latency percentiles windows", func(p string) error { return LatencyPercentiles(windowed(seed1), p) },
			[]string{"Acquire latency percentiles (whiskers: 95% interval)", "p90, p99.9 and max: the median over runs"}, nil},
		{"latency percentiles", func(p string) error { return LatencyPercentiles(seed1, p) },
			// largest max is 40+8·20 = 200 ms: the axis ends at 1000, not beyond.
			[]string{"Acquire latency percentiles (one seed)", ">1000<"}, []string{">10000<"}},
		{"timeline default title", func(p string) error { return errOf(Timeline("lb:k0", sampleHolds(), nil, nil, p, nil)) },
			[]string{"Holders of key &#34;lb:k0&#34; over time", "time since run start (ms)<"}, []string{"window"}},
		{"timeline title and window", func(p string) error {
			return errOf(Timeline("lb:k0", sampleHolds(), nil, nil, p, &TimelineOptions{Title: "fenced under gc-pause (seed 1)", FromMs: 106, ToMs: 706}))
		}, []string{"fenced under gc-pause (seed 1)", "time since run start (ms), window 106–706 ms", ">200<", ">600<"}, []string{"Holders of key", ">200.00<"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prefix := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "-"))
			if err := tt.draw(prefix); err != nil {
				t.Fatal(err)
			}
			doc := svg(prefix)
			for _, w := range tt.want {
				if !strings.Contains(doc, w) {
					t.Errorf("SVG lacks %q", w)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(doc, w) {
					t.Errorf("SVG contains %q", w)
				}
			}
		})
	}
}

// TestEveryPlotLabelled opens each kind of plot lockbench draws (the PNG
// decodes, the SVG parses) and reads the SVG's text elements: each has its
// title, both axis labels, a unit in brackets on each value axis, and a
// legend naming what it draws.
func TestEveryPlotLabelled(t *testing.T) {
	dir := outDir(t)
	runs := sampleRuns()
	for i := range runs { // a second scenario for the grouped bars
		if runs[i].Seed == 1 {
			r := runs[i]
			r.Scenario, r.ThroughputPerS = "long-cs", r.ThroughputPerS/2
			runs = append(runs, r)
		}
	}
	tests := []struct {
		name   string
		draw   func(prefix string) error
		title  string
		x, y   string   // axis labels
		units  []string // label texts that must carry a unit in brackets
		legend []string
	}{
		{"throughput", func(p string) error { return Throughput(windowed(runs), p) },
			"Throughput per strategy and scenario (median over time windows, whiskers: 95% interval)", "scenario", "throughput (grants/s)",
			[]string{"throughput (grants/s)"}, Strategies},
		{"commands-per-grant", func(p string) error { return CommandsPerGrant(windowed(runs), p) },
			"Commands per grant (median over time windows, whiskers: 95% interval)", "scenario", "commands per grant (count)",
			[]string{"commands per grant (count)"}, append(slices.Clone(Strategies), "executed by the servers")},
		{"latency-percentiles", func(p string) error { return LatencyPercentiles(sampleRuns(), p) },
			"Acquire latency percentiles (median over 3 seeds)", "percentile", "acquire latency (ms, log scale)",
			[]string{"acquire latency (ms, log scale)"}, Strategies},
		{"latency-cdf", func(p string) error { return LatencyCDF(sampleLatencies(), p) },
			"Acquire latency CDF", "acquire latency (ms, log scale)", "share of acquires ≤ latency (0–1)",
			[]string{"acquire latency (ms, log scale)", "share of acquires ≤ latency (0–1)"}, []string{"token-lua", "redlock", "watchdog"}},
		{"throughput-vs-clients", func(p string) error {
			return ThroughputVsClients(map[string][]XY{"token-lua": {{X: 1, Y: 900}, {X: 4, Y: 1500}, {X: 16, Y: 1700}, {X: 64, Y: 1650}, {X: 256, Y: 1400}}, "redlock": {{X: 1, Y: 300}, {X: 4, Y: 500}, {X: 16, Y: 600}, {X: 64, Y: 580}, {X: 256, Y: 400}}}, p)
		}, "Throughput against the number of clients", "clients (number, log scale)", "throughput (grants/s)",
			[]string{"clients (number, log scale)", "throughput (grants/s)"}, []string{"token-lua", "redlock"}},
		{"timeline", func(p string) error {
			return errOf(Timeline("lock:0", sampleHolds(), []Window{{"pause holder", 400, 700}}, marksAt(520), p, &TimelineOptions{Strategy: "fenced"}))
		}, `Holders of key "lock:0" over time`, "time since run start (ms)", "client (number)",
			[]string{"time since run start (ms)", "client (number)"}, []string{"fault window", "hold (lock granted until end of use)", "both held (exclusion witness): 1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prefix := filepath.Join(dir, tt.name)
			if err := tt.draw(prefix); err != nil {
				t.Fatal(err)
			}
			checkFiles(t, prefix)
			texts := svgTexts(t, prefix+".svg")
			for _, want := range append([]string{tt.title, tt.x, tt.y}, tt.legend...) {
				if !slices.Contains(texts, want) {
					t.Errorf("%s.svg has no text %q; its texts: %q", tt.name, want, texts)
				}
			}
			for _, u := range tt.units {
				if !strings.Contains(u, "(") || !strings.HasSuffix(u, ")") {
					t.Errorf("axis label %q has no unit in brackets", u)
				}
			}
		})
	}
}

// TestBarsCannotMislead: the bar charts say what their marks are and
// what is missing: commands per grant on a linear axis from 0, each
// scenario's pairs without a bar named with why, a scenario whose server
// count is unknown named, towering bars cut with their value written; a
// scenario run with other client counts labelled with them, never side by
// side unmarked; a bar of 0 labelled.
func TestBarsCannotMislead(t *testing.T) {
	run := func(st, sc string, clients int, tput, client, server float64, grants int) results.Run {
		return results.Run{Strategy: st, Scenario: sc, Seed: 1, Grants: grants, ThroughputPerS: tput,
			ClientCommandsPerGrant: client, RoundTripsPerGrant: server, Config: results.RunConfig{Clients: clients}}
	}
	runs := windowed([]results.Run{
		run("token-lua", "baseline", 16, 150, 12, 13, 150), run("redlock", "baseline", 16, 90, 110, 170, 90),
		run("set-nx-px", "baseline", 16, 160, 11, 11, 160), run("watchdog", "baseline", 16, 140, 12, 14, 140),
		run("token-lua", "node-restart", 16, 80, 12, 0, 80), run("redlock", "node-restart", 2, 40, 20, 0, 40),
		run("redlock", "clock-jump", 16, 2, 1400, 1500, 2), run("token-lua", "clock-jump", 16, 160, 12, 14, 160),
		run("redsync", "gc-pause", 16, 0, 0, 0, 0), run("token-lua", "gc-pause", 16, 110, 12, 13, 110),
		run("naive", "baseline", 16, 150, 12, 12, 150), run("fenced", "baseline", 16, 150, 14, 25, 150),
		run("reentrant", "baseline", 16, 150, 15, 50, 150), run("fenced", "gc-pause", 16, 100, 14, 26, 100),
	})
	failed := run("watchdog", "gc-pause", 16, 0, 0, 0, 0)
	failed.Error = "port in use"
	runs = append(runs, failed)
	dir := outDir(t)
	texts := func(name string, draw func(string) error) string {
		t.Helper()
		prefix := filepath.Join(dir, name)
		if err := draw(prefix); err != nil {
			t.Fatal(err)
		}
		checkFiles(t, prefix)
		return strings.Join(svgTexts(t, prefix+".svg"), "\n")
	}
	cmds := texts("commands", func(p string) error { return CommandsPerGrant(runs, p) })
	tput := texts("throughput", func(p string) error { return Throughput(runs, p) })
	for _, c := range []struct {
		chart, doc string
		want       []string
		notWant    []string
	}{
		{"commands per grant", cmds, []string{
			"commands per grant (count)", "0", // a linear axis from 0
			"redsync × gc-pause (no grant)", // no bar, and why
			"No cross under node-restart",   // server count unknown
			// cut bars have their value under the chart; the 90th percentile is 170
			"The axis stops at 255; a triangle marks each bar or cross cut there: redlock × clock-jump 1414 (servers 1500).",
			"cut at the top (value below)",
			"2 clients", // node-restart's redlock ran with 2 clients
		}, []string{"log scale", "\n1000\n"}},
		{"throughput", tput, []string{
			"node-restart", "2 clients", "Groups labelled with a client count ran with that many clients; the others with 16 clients.",
			"Did not complete:", "watchdog × gc-pause",
			`A "0" marks a median of 0: redsync × gc-pause.`, // the 0 label explained
			"(median over time windows, whiskers: 95% interval)",
		}, []string{"min–max"}},
	} {
		for _, w := range c.want {
			if !strings.Contains(c.doc, w) {
				t.Errorf("%s: no text %q; texts:\n%s", c.chart, w, c.doc)
			}
		}
		for _, w := range c.notWant {
			if strings.Contains(c.doc, w) {
				t.Errorf("%s: has text %q", c.chart, w)
			}
		}
	}
	withNoGrant := append(windowed(sampleRuns()[:3]), results.Run{Strategy: "redsync", Scenario: "baseline"})
	pct := texts("percentiles", func(p string) error { return LatencyPercentiles(withNoGrant, p) })
	cdf := texts("cdf", func(p string) error {
		return LatencyCDF(map[string][]float64{"token-lua": {1, 2, 3}, "redsync": nil}, p)
	})
	for name, doc := range map[string]string{"percentiles": pct, "cdf": cdf} {
		if !strings.Contains(doc, "No line for redsync:") {
			t.Errorf("%s: redsync, which was granted nothing, is not named; texts:\n%s", name, doc)
		}
	}
	if !strings.Contains(tput, "\n0\n") {
		t.Errorf("throughput: redsync × gc-pause's bar of 0 is not labelled 0; texts:\n%s", tput)
	}
}
