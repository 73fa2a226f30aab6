package report

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/internal/resultstest"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/stats"
)

var codeSpan = regexp.MustCompile("`+[^`]*`+")

// renderSample writes the sample report and returns report.md and index.html.
func renderSample(t *testing.T) (md, html string) {
	t.Helper()
	md, _, html = renderSampleAll(t)
	return md, html
}

// renderSampleAll writes the sample report and returns report.md,
// details.md and index.html.
func renderSampleAll(t *testing.T) (md, details, html string) {
	t.Helper()
	dir := t.TempDir()
	writePNG(t, filepath.Join(dir, "plots", "throughput.png"))
	writePNG(t, filepath.Join(dir, "plots", "timeline-set-nx-px-pause-holder.png"))
	plots := []PlotRef{
		{Title: "Throughput (grants/s)", PNG: "plots/throughput.png", SVG: "plots/throughput.svg"},
		{Title: "Gone", PNG: "plots/gone.png"},
		{Title: "Holders over time: set-nx-px under pause-holder (seed 1)", PNG: "plots/timeline-set-nx-px-pause-holder.png",
			Strategy: "set-nx-px", Scenario: "pause-holder"},
	}
	if err := WriteReport(dir, resultstest.SampleFile(), plots); err != nil {
		t.Fatal(err)
	}
	read := func(name string) string {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	return read(results.ReportMarkdown), read(results.DetailsMarkdown), read(results.ReportHTML)
}

func TestReportContents(t *testing.T) {
	md, details, html := renderSampleAll(t)
	unescape := strings.NewReplacer(`\[`, "[", `\]`, "]", `\~`, "~") // Markdown escapes
	md, details = unescape.Replace(md), unescape.Replace(details)
	common := []string{
		"must-hold → held ✓ (3 seeds)",             // token-lua × baseline, three seeds
		"must-break → violated ✓",                  // token-lua × pause-holder
		"must-hold → VIOLATED ✗ (0/1 as expected)", // set-nx-px × pause-holder
		"at-risk → held ✓",                         // the evil strategy
		"exclusion violated: 2 overlapping holds",  // unexpected line
		"7.2.4", "2 CPUs",
		"Exit codes",
		"130 interrupted",
		"not that the lock is safe",
		"Not tested by this profile", "latency, random", // BenchConfig.NotRun
		"Each strategy ran this scenario once", // set-nx-px has one baseline run
	}
	wantIn(t, "report.md", md, common)
	wantIn(t, "index.html", html, common)
	// What report.md links to, details.md holds; index.html holds it in <details>.
	linked := []string{
		"1002 [909, 1188] (n=18)", // throughput: median, 95% interval, windows of 3 seeds (details: the chooser shows overhead and handoff)
		"token-lua × pause-holder: token-lua under pause-holder because reasons", // reason note
		"no grant after the faults",
		"checks nothing",
		"must-hold", "must-break", "at-risk",
	}
	wantIn(t, "details.md", details, linked)
	wantIn(t, "index.html", html, linked)
	mdWant := []string{
		"Reproduce: `lockbench bench --profile ci --seed 1`",
		"![Throughput (grants/s)](plots/throughput.png) [SVG](plots/throughput.svg)",
		"(image missing: plots/gone.png)",
		"[timeline](plots/timeline-set-nx-px-pause-holder.png)",
		"(details.md#reasons-for-the-expected-verdicts)", "(details.md#performance)", "(details.md#runs)", "(details.md#faults-injected)",
	}
	wantIn(t, "report.md", md, mdWant)
	// Each details.md#anchor of report.md is a heading of details.md, as
	// Markdown renderers make anchors of headings (#reasons and #faults once
	// led nowhere).
	anchors := map[string]bool{}
	for _, h := range regexp.MustCompile(`(?m)^#+ (.*)$`).FindAllStringSubmatch(details, -1) {
		a := strings.ToLower(regexp.MustCompile(`[^\w\- ]`).ReplaceAllString(h[1], ""))
		anchors[strings.ReplaceAll(a, " ", "-")] = true
	}
	for _, m := range regexp.MustCompile(`\(details\.md#([^)]+)\)`).FindAllStringSubmatch(md, -1) {
		if !anchors[m[1]] {
			t.Errorf("report.md links details.md#%s, which no heading of details.md makes", m[1])
		}
	}
	detailsWant := []string{
		"[history](histories/baseline%20seed.jsonl)",
		"[porcupine](./javascript:alert%282%29)", // cannot read as a URL scheme
		"- pause: 1000–1300 ms (SIGSTOP holder)",
		"[https://example.com/a?b=c\\&d=e](https://example.com/a?b=c&d=e)",
	}
	wantIn(t, "details.md", details, detailsWant)
	htmlWant := []string{
		`<pre><code>lockbench bench --profile ci --seed 1</code></pre>`,
		`<a href="histories/baseline%20seed.jsonl">history</a>`,
		`<img src="plots/throughput.png" alt="Throughput (grants/s)" loading="lazy">`, // a file beside the page, not embedded
		`<p class="missing">image missing: plots/gone.png</p>`,
		`<a href="plots/throughput.svg">SVG</a>`,
		`<a href="plots/timeline-set-nx-px-pause-holder.png" title="Holders over time: set-nx-px under pause-holder (seed 1)">timeline</a>`,
		`title="token-lua under pause-holder because reasons"`,
		`<a href="https://example.com/a?b=c&amp;d=e">`,
		`<li>pause: 1000–1300 ms (SIGSTOP holder)</li>`,
	}
	wantIn(t, "index.html", html, htmlWant)
	if strings.Contains(html, "data:image") {
		t.Error("index.html embeds an image: it must link the PNG file")
	}
	if strings.Contains(md, "### Holders over time") {
		t.Error("report.md shows each timeline: it must link them from one table")
	}
}

// writePNG writes a 2 × 2 PNG to path, creating its folder.
func writePNG(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	img := image.NewRGBA(image.Rect(0, 0, 2, 2))
	img.Set(0, 0, color.RGBA{R: 255, A: 255})
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

var (
	mdSection   = regexp.MustCompile(`(?m)^## (.+)$`)
	htmlSection = regexp.MustCompile(`<h2[^>]*>([^<]+)</h2>`)
)

// TestReportSections: report.md and index.html have the same sections in
// the same order: the chooser first, then (with cost runs) what each lock
// costs, the harness gate, (with
// unexpected results) those, performance, plots, faults, runs, strategies
// and the run's metadata.
func TestReportSections(t *testing.T) {
	md, html := renderSample(t)
	var mdS, htmlS []string
	for _, m := range mdSection.FindAllStringSubmatch(md, -1) {
		mdS = append(mdS, m[1])
	}
	for _, m := range htmlSection.FindAllStringSubmatch(html, -1) {
		htmlS = append(htmlS, strings.NewReplacer("&#39;", "'", "&amp;", "&").Replace(m[1]))
	}
	if strings.Join(mdS, "\n") != strings.Join(htmlS, "\n") {
		t.Errorf("sections differ:\nreport.md:  %q\nindex.html: %q", mdS, htmlS)
	}
	want := []string{"Which lock: observed safety and cost", "What each lock costs, like for like", "Harness gate: expected vs observed", "Unexpected results (1)", "Performance", "Plots",
		"Faults injected", "Runs: histories and porcupine visualisations", "Strategies", "About this run"}
	if strings.Join(mdS, "\n") != strings.Join(want, "\n") {
		t.Errorf("report.md sections %q, want %q", mdS, want)
	}
	// Nothing but the title and the one-line verdict before the chooser.
	body := html[strings.Index(html, "<body>"):]
	for name, doc := range map[string]string{"report.md": md, "index.html": body} {
		v, m := strings.Index(doc, "7 runs: 6 as expected, 1 unexpected."), strings.Index(doc, "Which lock: observed safety and cost")
		if v < 0 || m < 0 || v > m || m > 400 {
			t.Errorf("%s: verdict line at %d, chooser at %d: want the verdict line, then the chooser, near the top", name, v, m)
		}
	}
}

func TestReportEscapes(t *testing.T) {
	md, html := renderSample(t)
	if strings.Contains(html, "<script>") {
		t.Error("index.html contains a raw <script> tag from a strategy name")
	}
	if !strings.Contains(html, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Error("index.html does not show the escaped strategy name")
	}
	if strings.Contains(html, `href="javascript:`) {
		t.Error("index.html links a javascript: URL")
	}
	// Code spans are literal in Markdown (no HTML), so only text outside them counts.
	if outside := codeSpan.ReplaceAllString(md, ""); strings.Contains(outside, "<script>") {
		t.Error("report.md contains a raw <script> tag from a strategy name outside code spans")
	}
	if !strings.Contains(md, `\<script\>alert(1)\</script\>`) {
		t.Error("report.md does not show the escaped strategy name")
	}
	// External assets: nothing is loaded from elsewhere.
	for _, bad := range []string{"<script", "<link", `src="http`, `src="//`, "@import", "url("} {
		if strings.Contains(html, bad) {
			t.Errorf("index.html contains %q: it must be self-contained", bad)
		}
	}
}

func TestReportNoUnexpected(t *testing.T) {
	f := resultstest.SampleFile()
	var runs []results.Run
	for _, r := range f.Runs {
		if r.AsExpected {
			runs = append(runs, r)
		}
	}
	f.Runs = runs
	dir := t.TempDir()
	if err := WriteReport(dir, f, nil); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, results.ReportMarkdown))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(md), "Unexpected results") || !strings.Contains(string(md), "All verdicts were as expected.") {
		t.Error("report.md of an all-as-expected bench should say so and have no unexpected section")
	}
	if strings.Contains(string(md), "## Plots") {
		t.Error("report.md without plots has a Plots section")
	}
}

// TestReportIncomplete: a bench that stopped early, or ran nothing, never
// reads as all verdicts as expected.
func TestReportIncomplete(t *testing.T) {
	asExpected := func() *results.File {
		f := resultstest.SampleFile()
		var runs []results.Run
		for _, r := range f.Runs {
			if r.AsExpected {
				runs = append(runs, r)
			}
		}
		f.Runs = runs
		return f
	}
	interrupted := asExpected()
	interrupted.Incomplete = "stopped after 3 of 6 runs: context canceled"
	empty := asExpected()
	empty.Runs = nil
	for _, tc := range []struct {
		name string
		f    *results.File
		want string
	}{
		{"interrupted", interrupted, "INCOMPLETE: stopped after 3 of 6 runs"},
		{"no runs", empty, "0 runs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := WriteReport(dir, tc.f, nil); err != nil {
				t.Fatal(err)
			}
			for _, name := range []string{results.ReportMarkdown, results.ReportHTML} {
				b, err := os.ReadFile(filepath.Join(dir, name))
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(string(b), tc.want) || strings.Contains(string(b), "All verdicts were as expected") {
					t.Errorf("%s: want %q and no \"All verdicts were as expected\"", name, tc.want)
				}
			}
		})
	}
}

func TestEscapeMarkdown(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain-name 1.5", "plain-name 1.5"},
		{"a|b", `a\|b`},
		{"*x* _y_ `z` [l](u)", "\\*x\\* \\_y\\_ \\`z\\` \\[l\\](u)"},
		{"line\nbreak", "line break"},
		{"&lt;", `\&lt;`},
	}
	for _, tt := range tests {
		if got := escapeMarkdown(tt.in); got != tt.want {
			t.Errorf("escapeMarkdown(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	codes := []struct{ in, want string }{
		{"go test ./...", "`go test ./...`"},
		{"echo `date`", "`` echo `date` ``"},
	}
	for _, tt := range codes {
		if got := markdownCode(tt.in); got != tt.want {
			t.Errorf("markdownCode(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestReportObservedSafety(t *testing.T) {
	f := resultstest.SampleFile()
	fenced := f.Runs[4] // token-lua × pause-holder: exclusion and resource violated
	fenced.Strategy = "fenced"
	fenced.Verdict = results.Verdict{Exclusion: "violated", Resource: "ok", Liveness: "ok", Fencing: "ok"}
	fenced.Evidence.ResourceRejected = 2
	f.Runs = append(f.Runs, fenced)
	f.Strategies = append(f.Strategies, results.StrategyInfo{Name: "fenced", Claims: []string{"fencing"}})
	for i := range f.Runs {
		if f.Runs[i].Strategy == "token-lua" && f.Runs[i].Scenario == "baseline" {
			f.Runs[i].RoundTripsPerGrant = 4
			f.Runs[i].GrantCallMs = stats.Latency{P50: 0.25, Samples: 10}
		}
		if f.Runs[i].Scenario == "pause-holder" {
			f.Runs[i].ScenarioKind = "process"
		}
	}
	dir := t.TempDir()
	if err := WriteReport(dir, f, nil); err != nil {
		t.Fatal(err)
	}
	read := func(name string) string {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return strings.NewReplacer(`\[`, "[", `\]`, "]").Replace(string(data)) // Markdown escapes
	}
	md, details, html := read(results.ReportMarkdown), read(results.DetailsMarkdown), read(results.ReportHTML)
	summaries := []string{
		"token-lua: safe under 1 of 2 scenarios (baseline); broken under pause-holder; baseline (8 clients, 1 key, TTL 100 ms): 1002 [909, 1188] (n=18) grants/s, granting call p50 0.25 ms, acquire with waiting p50 2.51 [2.27, 2.97] (n=18) ms, p99 10.0 [9.09, 11.9] (n=18) ms, 4.00 Redis commands per grant",
		"fenced: safe under 0 of 1 scenarios; exclusion broken but fencing kept the resource safe under pause-holder",
		"8 clients, 1 key, CS fixed(5ms), retry exponential:2ms:20ms (8 runs): one holder per key at a time allows at most 200 grants/s",
	}
	wantIn(t, "details.md", details, summaries[:2])
	wantIn(t, "index.html", html, summaries)
	wantIn(t, "report.md", md, []string{
		"Which lock: observed safety and cost",
		"Harness gate: expected vs observed",
		summaries[2],
		"With 1 key all clients contend for the same lock",
		"Cost (baseline: 8 clients, 1 key, TTL 100 ms)",
		"| group | strategy | overhead round trips/hold (two PING-like calls: 2) | overhead p50 ms | handoff p50 ms (bound: 1 round trip) | client cmds/grant under contention (failed attempts count) | peak capacity grants/s (a key per client) | baseline | pause-holder |",
		// Overhead from the uncontended cost run, handoff (busy) and commands from the baseline;
		// no capacity curve from one client count.
		"| Redis single-node | **token-lua** | 2.00 [2.00, 2.00] (n=6) | 0.225 [0.2, 0.25] (n=6) | BUSY: 0.75 [0.6, 0.9] (n=18) | 11.0 [10.9, 11.1] (n=18) | — | safe | broken: lost updates |",
		"|  | **set-nx-px** | — | — | — | 11.0 [10.7, 11.3] (n=6) | — | safe | broken: lost updates |",
		"| strategy | critical section | overhead round trips/hold | two PING-like calls | overhead p50 ms | bound ms | cmds/grant (1 client) | handoff p50 ms | handoff p99 ms | bound ms | peak capacity grants/s | bound grants/s | knee | cmds/grant at peak | grants/s by clients |",
		"| token-lua | fixed(5ms), no think time | 2.00 [2.00, 2.00] (n=6) | 2 | 0.225 [0.2, 0.25] (n=6) | ≥ 0.2 |",
		// fenced ran no baseline: its cost comes from its first pair without faults, named.
		"| fenced | **fenced** | (pause-holder: 8 clients, 1 key, TTL 100 ms) — |",
		"- need exclusion with no faults (baseline): token-lua, set-nx-px; at risk (depends on timing): \\<script\\>alert(1)\\</script\\>",
		"- need exclusion under pause-holder (pause-holder): no strategy keeps exclusion; only fencing protects the resource: fenced",
	})
	wantIn(t, "index.html", html, []string{
		`<tr class="group"><th colspan="8">fenced</th></tr>`,
		`<tr><th>fenced</th><td class="num">(pause-holder: 8 clients, 1 key, TTL 100 ms) —</td>`,
		`<td class="num">—</td><td class="none">n/a</td><td class="resource-safe">resource safe: exclusion broken; fencing rejected 2 stale writes, no update lost</td></tr>`,
		`<td class="broken">broken: lost updates</td>`,
		`<td class="safe">safe</td>`,
		`<td class="at-risk">at risk: broke in 0 of 1 seeds</td>`,
		`<th>clients</th><th>TTL ms</th>`,
	})
	wantIn(t, "details.md", details, []string{
		"| strategy | scenario | seeds | clients | TTL ms | throughput/s |",
		"| token-lua | baseline | 3 | 8 | 100 | 1002 [909, 1188] (n=18) |",
	})
}

// wantIn fails the test for every string of wants that text (the file
// named name) lacks.
func wantIn(t *testing.T, name, text string, wants []string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(text, want) {
			t.Errorf("%s lacks %q", name, want)
		}
	}
}

func TestFormatCountSpread(t *testing.T) {
	for _, tt := range []struct {
		s    stats.Spread
		want string
	}{
		{stats.Spread{}, "—"},
		{stats.Spread{N: 1, Median: 16, Min: 16, Max: 16}, "16"},
		{stats.Spread{N: 2, Median: 1234.5, Min: 1200, Max: 1269}, "1234.5 (1200–1269)"},
	} {
		if got := formatCountSpread(tt.s); got != tt.want {
			t.Errorf("formatCountSpread(%+v) = %q, want %q", tt.s, got, tt.want)
		}
	}
}

// TestReportCostFigures: where the cost figures appear they read "median
// [low, high] (n=…)", a pair measured on a busy machine says BUSY with the
// numbers, one outside its working envelope NOT COMPARABLE with its
// reason and each figure "not comparable:", and the strategies of the
// baseline are compared with token-lua by the Mann-Whitney U test.
func TestReportCostFigures(t *testing.T) {
	md, details, html := renderSampleAll(t)
	unescape := strings.NewReplacer(`\[`, "[", `\]`, "]", `\~`, "~", `\<`, "<", `\>`, ">")
	md, details = unescape.Replace(md), unescape.Replace(details)
	wantIn(t, "report.md", md, []string{
		"Against token-lua under baseline",
		"~ (p=0.251 n=18+6)",
		"-99.00% (p=0.000 n=18+6)",
		"**1 of 5 pairs had a run on a busy machine (BUSY)**",
		"**1 pairs ran outside their strategy's working envelope (NOT COMPARABLE)**",
	})
	full := []string{
		"1002 [909, 1188] (n=18) | 2.51 [2.27, 2.97] (n=18) | 10.0 [9.09, 11.9] (n=18)",
		"BUSY 1/3: other processes used 0.60 cores on average (max 1.20; threshold 0.25); other CPU 0.6 cores, steal 0.0%, run queue 3.00; RTT p99 0.2 ms",
		"not comparable: 1103 [1072, 1128] (n=6)",
		"NOT COMPARABLE 1/1: call budget 5.00 ms is below the round-trip p99 7.00 ms",
		"a run is busy when processes other than lockbench and its servers used more than 0.25 cores on average, or steal took more than 5.0% of the CPU time",
	}
	wantIn(t, "details.md", details, full)
	html = strings.NewReplacer("&lt;", "<", "&gt;", ">", "&#43;", "+").Replace(html)
	htmlWant := []string{
		`<td class="num">1002 [909, 1188] (n=18)</td>`,
		`<td class="num">not comparable: 1103 [1072, 1128] (n=6)</td>`,
		"BUSY 1/3: other processes used 0.60 cores on average",
		"NOT COMPARABLE 1/1: call budget 5.00 ms",
		`<tr><td>set-nx-px</td><td class="num">~ (p=0.251 n=18+6)</td>`,
		`<td class="num">BUSY: 0.75 [0.6, 0.9] (n=18)</td>`,
	}
	wantIn(t, "index.html", html, htmlWant)
}
