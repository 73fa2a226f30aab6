package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/checker"
	"github.com/lockbench/lockbench/impl/strategies"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/stats"
	"github.com/lockbench/lockbench/verdicts"
)

// chromium returns the path of a headless-capable Chromium, or fails the
// test: a report test that cannot render the page must not pass. Only
// LOCKBENCH_NO_BROWSER=1, set on purpose, skips it.
func chromium(t *testing.T) string {
	t.Helper()
	if os.Getenv("LOCKBENCH_NO_BROWSER") == "1" {
		t.Skip("LOCKBENCH_NO_BROWSER=1: index.html is not rendered in a browser")
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "chrome-headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("no Chromium to render index.html with: install Debian's chromium (apt-get install chromium, or make deps-test as root), or set LOCKBENCH_NO_BROWSER=1 to skip this test on purpose")
	return ""
}

// runChromium runs headless Chromium on url with args and returns stdout.
func runChromium(t *testing.T, bin, profile string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-dev-shm-usage",
		"--hide-scrollbars", "--user-data-dir=" + profile}
	cmd := exec.CommandContext(ctx, bin, append(base, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %s: %v\n%s", strings.Join(args, " "), err, errb.String())
	}
	return out.Bytes()
}

// sampleReportFile is a small bench result: two strategies under the
// baseline and a fault, one unexpected verdict, and a client sweep.
func sampleReportFile() *results.File {
	run := func(strategy, scenario string, tput float64, asExpected bool, verdict checker.Status) results.Run {
		r := results.Run{
			Strategy: strategy, Scenario: scenario, Seed: 1, Expected: "must-hold", AsExpected: asExpected,
			ExpectedChecks: map[string]string{"exclusion": "hold", "resource": "hold", "liveness": "hold"},
			Verdict:        results.Verdict{Exclusion: verdict, Resource: verdict, Liveness: "ok"},
			Grants:         int(tput), ThroughputPerS: tput, RoundTripsPerGrant: 3.2, ClientCommandsPerGrant: 2.4,
			AcquireLatencyMs: stats.Latency{P50: 1.2, P90: 4, P99: 12, P999: 30, Max: 55, Samples: 400},
			Config:           results.RunConfig{Clients: 16, Keys: 1, TTLMs: 100, DurationMs: 1000},
			History:          "histories/" + strategy + "-" + scenario + "-1.jsonl",
			Command:          "lockbench run --strategy " + strategy + " --scenario " + scenario,
		}
		if !asExpected {
			r.Unexpected = []string{"exclusion must hold but is violated: 2 overlapping holds"}
			r.Visualization = "histories/" + strategy + "-" + scenario + "-1.html"
		}
		return r
	}
	f := &results.File{
		SchemaVersion: results.SchemaVersion, Tool: "lockbench test", Profile: "ci", Command: "lockbench bench --profile ci",
		Runs: []results.Run{
			run("token-lua", "baseline", 180, true, "ok"), run("redlock", "baseline", 90, true, "ok"),
			run("token-lua", "gc-pause", 150, true, "ok"), run("redlock", "gc-pause", 70, false, "violated"),
		},
	}
	for _, n := range []int{1, 4, 16, 64, 256} {
		s := run("token-lua", "baseline", 100+float64(n), true, "ok")
		s.Config.Clients = n
		f.Sweep = append(f.Sweep, s)
	}
	return f
}

// ciShapedFile is a results file shaped like the ci profile's: every
// strategy under every ci scenario that applies to it, with the verdict
// table's expectations and reasons, observed verdicts that follow them
// (at-risk pairs alternate), three fault windows per faulted run,
// checker messages, an unknown-outcome warning here and there and six cost
// windows per run: the report of a real ci bench in size.
func ciShapedFile(t *testing.T) *results.File {
	t.Helper()
	p, err := LookupProfile("ci")
	if err != nil {
		t.Fatal(err)
	}
	f := &results.File{SchemaVersion: results.SchemaVersion, Tool: "lockbench test", Profile: "ci", Command: "lockbench bench --profile ci --seed 1 --repeat 1 --out out",
		Host: results.Host{CPUs: 2, OS: "linux/amd64", Go: "go1.26"}, Redis: "7.0.15"}
	for _, name := range p.Strategies {
		st, err := strategies.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		f.Strategies = append(f.Strategies, StrategyInfo(st))
	}
	jitter := []float64{-0.1, -0.05, 0, 0.02, 0.05, 0.1}
	i := 0
	for _, pair := range verdicts.Matrix() {
		if !slices.Contains(p.Scenarios, pair.Scenario) || !slices.Contains(p.Strategies, pair.Strategy) {
			continue
		}
		i++
		e := pair.Expectation
		v := results.Verdict{Exclusion: "ok", Resource: "ok", Liveness: "ok"}
		switch {
		case e.Exclusion == verdicts.Break || e.Exclusion == verdicts.AtRisk && i%2 == 0:
			v.Exclusion = "violated"
			if e.Resource != verdicts.Hold {
				v.Resource = "violated"
			}
		}
		r := results.Run{
			Strategy: pair.Strategy, Scenario: pair.Scenario, Seed: 1, Expected: e.Summary(), ExpectedChecks: e.Checks(),
			Reason: e.Reason, Verdict: v, AsExpected: true, Grants: 150, ThroughputPerS: 150,
			Acquires:         map[string]int{"ok": 150, "fail": 1400, "info": 3},
			AcquireLatencyMs: stats.Latency{P50: 2, P90: 200, P99: 400, P999: 700, Max: 900, Samples: 150},
			Config:           results.RunConfig{Clients: 16, Keys: 1, TTLMs: 100, DurationMs: 1000, CSMs: "fixed(5ms)", Retry: "exponential:2ms:20ms", Topology: "single"},
			Checks: map[string]string{"exclusion": "no overlapping holds on 1 key (porcupine: ok)", "resource": "linearizable (porcupine: ok)",
				"liveness": "every key was acquirable after the run"},
			History: historyName(pair.Strategy, pair.Scenario, 1), Command: "lockbench run --strategy " + pair.Strategy + " --scenario " + pair.Scenario + " --clients 16 --keys 1 --ttl 100ms --duration 1s --seed 1",
		}
		if i%9 == 0 {
			r.Acquires["info"] = 400 // an unknown-outcome warning
		}
		if pair.Scenario != "baseline" {
			for k := range 3 {
				r.Faults = append(r.Faults, results.Fault{Name: pair.Scenario, StartMs: float64(200 + 250*k), EndMs: float64(400 + 250*k), Note: "holder client 3 on n1"})
			}
		}
		for k, j := range jitter {
			p50, p99, c := 2*(1+j), 400*(1+j), 12*(1+j)
			r.Windows = append(r.Windows, results.Window{StartMs: float64(k) * 166, EndMs: float64(k+1) * 166, Grants: 25,
				GrantsPerS: 150 * (1 + j), AcquireP50Ms: &p50, AcquireP99Ms: &p99, CommandsPerGrant: &c})
		}
		f.Runs = append(f.Runs, r)
	}
	if len(f.Runs) < 80 {
		t.Fatalf("the ci-shaped file has %d runs, want the ci profile's 82 or so", len(f.Runs))
	}
	return f
}

// pageCheck is injected into a copy of index.html beside it: once the
// page has loaded, it asks every image to load now (they are lazy), waits
// for them, and reports every image's natural width, every resource the
// page fetched, where the chooser table is against the viewport, and
// whether a broken image placed by the check itself is seen as broken (so
// the check has teeth).
const pageCheck = `<script>
window.addEventListener('load', async () => {
  const imgs = [...document.images];
  imgs.forEach(i => { i.loading = 'eager'; });
  await Promise.all(imgs.map(i => (i.complete && i.naturalWidth > 0) ? null : new Promise(r => { i.addEventListener('load', r); i.addEventListener('error', r); })));
  const probe = new Image();
  const report = (probeBroken) => {
    const c = document.getElementById('chooser-table');
    const r = c ? c.getBoundingClientRect() : null;
    const out = document.createElement('pre');
    out.id = 'lockbench-page-check';
    out.textContent = JSON.stringify({
      images: imgs.map(i => ({alt: i.alt, complete: i.complete, width: i.naturalWidth})),
      fetched: performance.getEntriesByType('resource').map(e => e.name),
      chooserTop: r ? r.top : -1,
      viewport: window.innerHeight,
      probeBroken: probeBroken,
    });
    document.body.appendChild(out);
  };
  probe.onload = () => report(false);
  probe.onerror = () => report(true);
  probe.src = 'data:image/png;base64,bm90IGEgUE5H';
});
</script>`

// Size limits of a ci profile's report: report.md under 300
// lines, index.html under 2 MB.
const (
	maxReportLines = 300
	maxHTMLBytes   = 2 << 20
)

// TestIndexHTMLInChromium renders real reports in headless Chromium: a
// small bench's with its plots, and one of the size of a ci bench. Every
// image decodes (naturalWidth > 0) from the plots folder beside the page,
// the page fetches nothing from outside its folder, the chooser table
// starts on the first screen (its top above the viewport's height), a
// screenshot of the first screen shows the chooser's colours, and the ci
// report stays under the size limits (report.md lines, index.html bytes).
// The screenshot is kept under $REPORT_SHOT when set, to look at.
func TestIndexHTMLInChromium(t *testing.T) {
	bin := chromium(t)
	for _, tc := range []struct {
		name   string
		f      *results.File
		images int // at least
	}{
		{"small bench with plots", sampleReportFile(), 4}, // throughput, latency percentiles, throughput vs clients, commands per grant; no history, so no CDF or timeline
		{"ci-sized bench", ciShapedFile(t), 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := report.Render(dir, tc.f); err != nil {
				t.Fatal(err)
			}
			page, err := os.ReadFile(filepath.Join(dir, results.ReportHTML))
			if err != nil {
				t.Fatal(err)
			}
			md, err := os.ReadFile(filepath.Join(dir, results.ReportMarkdown))
			if err != nil {
				t.Fatal(err)
			}
			if n := bytes.Count(md, []byte("\n")); n >= maxReportLines {
				t.Errorf("report.md has %d lines, want fewer than %d", n, maxReportLines)
			}
			if len(page) >= maxHTMLBytes {
				t.Errorf("index.html is %d bytes, want less than %d", len(page), maxHTMLBytes)
			}
			if n := bytes.Count(page, []byte(`<img src="plots/`)); n < tc.images {
				t.Fatalf("index.html links %d images from plots/, want %d", n, tc.images)
			}
			checked := bytes.Replace(page, []byte("</body>"), []byte(pageCheck+"</body>"), 1)
			if err := os.WriteFile(filepath.Join(dir, "check.html"), checked, 0o644); err != nil {
				t.Fatal(err)
			}
			profile := t.TempDir()
			dom := runChromium(t, bin, profile, "--window-size=1280,900", "--virtual-time-budget=10000", "--dump-dom", "file://"+filepath.Join(dir, "check.html"))
			m := regexp.MustCompile(`<pre id="lockbench-page-check">([^<]*)</pre>`).FindSubmatch(dom)
			if m == nil {
				t.Fatalf("the page check did not run; DOM tail: %s", tail(dom, 500))
			}
			var got struct {
				Images []struct {
					Alt      string
					Complete bool
					Width    int
				}
				Fetched     []string
				ChooserTop  float64
				Viewport    float64
				ProbeBroken bool
			}
			js := strings.NewReplacer("&quot;", `"`, "&amp;", "&", "&lt;", "<", "&gt;", ">").Replace(string(m[1]))
			if err := json.Unmarshal([]byte(js), &got); err != nil {
				t.Fatalf("page check output %q: %v", js, err)
			}
			if !got.ProbeBroken {
				t.Error("a broken image was not seen as broken: the image check has no teeth")
			}
			if len(got.Images) < tc.images {
				t.Errorf("Chromium saw %d images, want at least %d", len(got.Images), tc.images)
			}
			for _, img := range got.Images {
				if !img.Complete || img.Width <= 0 {
					t.Errorf("image %q did not load in Chromium (complete %v, naturalWidth %d)", img.Alt, img.Complete, img.Width)
				}
			}
			for _, u := range got.Fetched {
				if !strings.HasPrefix(u, "data:") && !strings.HasPrefix(u, "file://"+dir+"/") {
					t.Errorf("index.html fetched %s: it may load only files of its own folder", u)
				}
			}
			if got.ChooserTop < 0 || got.Viewport <= 0 || got.ChooserTop >= got.Viewport {
				t.Errorf("chooser table at %.0f px from the top, viewport %.0f px high: want it to start on the first screen", got.ChooserTop, got.Viewport)
			}

			shot := filepath.Join(t.TempDir(), "index.png")
			if d := os.Getenv("REPORT_SHOT"); d != "" {
				shot = filepath.Join(d, strings.ReplaceAll(tc.name, " ", "-")+".png")
			}
			runChromium(t, bin, profile, "--window-size=1280,900", "--screenshot="+shot, "file://"+filepath.Join(dir, results.ReportHTML))
			data, err := os.ReadFile(shot)
			if err != nil {
				t.Fatal(err)
			}
			img, err := png.Decode(bytes.NewReader(data))
			if err != nil {
				t.Fatalf("screenshot does not decode: %v", err)
			}
			// The chooser's cells: green (safe, #c9ebc9) and red (broken,
			// #f6b8b8) must both show on the first screen.
			if !hasColour(img, color.RGBA{0xc9, 0xeb, 0xc9, 0xff}, 900) || !hasColour(img, color.RGBA{0xf6, 0xb8, 0xb8, 0xff}, 900) {
				t.Errorf("the screenshot's first screen lacks the chooser's green and red cells (%s)", shot)
			}
		})
	}
}

// hasColour reports whether img has at least 200 pixels of colour c (±3
// per channel) in its top rows.
func hasColour(img image.Image, c color.RGBA, rows int) bool {
	b := img.Bounds()
	n := 0
	for y := b.Min.Y; y < min(b.Max.Y, b.Min.Y+rows); y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if near(r>>8, c.R) && near(g>>8, c.G) && near(bl>>8, c.B) {
				n++
			}
		}
	}
	return n >= 200
}

func near(v uint32, want uint8) bool { return v+3 >= uint32(want) && v <= uint32(want)+3 }

func tail(b []byte, n int) []byte { return b[max(0, len(b)-n):] }
