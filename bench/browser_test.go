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
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/results"
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
	run := func(strategy, scenario string, tput float64, asExpected bool, verdict string) results.Run {
		r := results.Run{
			Strategy: strategy, Scenario: scenario, Seed: 1, Expected: "must-hold", AsExpected: asExpected,
			ExpectedChecks: map[string]string{"exclusion": "hold", "resource": "hold", "liveness": "hold"},
			Verdict:        results.Verdict{Exclusion: verdict, Resource: verdict, Liveness: "ok"},
			Grants:         int(tput), ThroughputPerS: tput, RoundTripsPerGrant: 3.2, ClientCommandsPerGrant: 2.4,
			AcquireLatencyMs: results.Latency{P50: 1.2, P90: 4, P99: 12, P999: 30, Max: 55, Samples: 400},
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

// pageCheck is injected into a copy of index.html: once the page has
// loaded, it reports every image's natural width, every resource the page
// fetched, where the verdict matrix is, and whether a broken image placed
// by the check itself is seen as broken (so the check has teeth).
const pageCheck = `<script>
window.addEventListener('load', () => {
  const probe = new Image();
  const report = (probeBroken) => {
    const m = document.getElementById('matrix');
    const r = m ? m.getBoundingClientRect() : null;
    const out = document.createElement('pre');
    out.id = 'lockbench-page-check';
    out.textContent = JSON.stringify({
      images: [...document.images].filter(i => i !== probe).map(i => ({alt: i.alt, complete: i.complete, width: i.naturalWidth})),
      fetched: performance.getEntriesByType('resource').map(e => e.name),
      matrixTop: r ? r.top : -1,
      probeBroken: probeBroken,
    });
    document.body.appendChild(out);
  };
  probe.onload = () => report(false);
  probe.onerror = () => report(true);
  probe.src = 'data:image/png;base64,bm90IGEgUE5H';
});
</script>`

// TestIndexHTMLInChromium renders a real report's index.html in headless
// Chromium: every image decodes (naturalWidth > 0), the page fetches
// nothing (all images are data: URIs), the verdict matrix is at the top, and
// a screenshot shows the matrix's colours in its upper part. The screenshot
// is kept under $REPORT_SHOT when set, to look at.
func TestIndexHTMLInChromium(t *testing.T) {
	bin := chromium(t)
	dir := t.TempDir()
	if err := Report(dir, sampleReportFile()); err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(dir, results.ReportHTML))
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(page, []byte(`<img src="data:image/png;base64,`)); n < 4 {
		t.Fatalf("index.html embeds %d images, want 4 (throughput, latency percentiles, throughput vs clients, commands per grant; no history, so no CDF or timeline)", n)
	}
	// The page must stand alone: render a copy in an empty folder.
	alone := t.TempDir()
	checked := bytes.Replace(page, []byte("</body>"), []byte(pageCheck+"</body>"), 1)
	if err := os.WriteFile(filepath.Join(alone, "check.html"), checked, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(alone, "index.html"), page, 0o644); err != nil {
		t.Fatal(err)
	}
	profile := t.TempDir()
	dom := runChromium(t, bin, profile, "--virtual-time-budget=10000", "--dump-dom", "file://"+filepath.Join(alone, "check.html"))
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
		MatrixTop   float64
		ProbeBroken bool
	}
	js := strings.NewReplacer("&quot;", `"`, "&amp;", "&", "&lt;", "<", "&gt;", ">").Replace(string(m[1]))
	if err := json.Unmarshal([]byte(js), &got); err != nil {
		t.Fatalf("page check output %q: %v", js, err)
	}
	if !got.ProbeBroken {
		t.Error("a broken image was not seen as broken: the image check has no teeth")
	}
	if len(got.Images) < 4 {
		t.Errorf("Chromium saw %d images, want at least 4", len(got.Images))
	}
	for _, img := range got.Images {
		if !img.Complete || img.Width <= 0 {
			t.Errorf("image %q did not load in Chromium (complete %v, naturalWidth %d)", img.Alt, img.Complete, img.Width)
		}
	}
	for _, u := range got.Fetched {
		if !strings.HasPrefix(u, "data:") {
			t.Errorf("index.html fetched %s: it must be self-contained", u)
		}
	}
	if got.MatrixTop < 0 || got.MatrixTop > 300 {
		t.Errorf("verdict matrix heading at %.0f px from the top, want within the first 300 px", got.MatrixTop)
	}

	shot := filepath.Join(t.TempDir(), "index.png")
	if d := os.Getenv("REPORT_SHOT"); d != "" {
		shot = d
	}
	runChromium(t, bin, profile, "--window-size=1280,900", "--screenshot="+shot, "file://"+filepath.Join(alone, "index.html"))
	data, err := os.ReadFile(shot)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("screenshot does not decode: %v", err)
	}
	// The matrix's cells: green (as expected, #e6f4e6) and red (unexpected,
	// #fbdcdc) must both show in the upper half of the first screen.
	if !hasColour(img, color.RGBA{0xe6, 0xf4, 0xe6, 0xff}, 450) || !hasColour(img, color.RGBA{0xfb, 0xdc, 0xdc, 0xff}, 450) {
		t.Errorf("the screenshot's upper 450 px lack the verdict matrix's green and red cells (%s)", shot)
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
