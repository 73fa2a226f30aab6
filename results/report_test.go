package results

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var codeSpan = regexp.MustCompile("`+[^`]*`+")

// renderSample writes the sample report and returns report.md and index.html.
func renderSample(t *testing.T) (md, html string) {
	t.Helper()
	dir := t.TempDir()
	plots := []PlotRef{{Title: "Throughput (grants/s)", PNG: "plots/throughput.png", SVG: "plots/throughput.svg"}}
	if err := WriteReport(dir, sampleFile(), plots); err != nil {
		t.Fatal(err)
	}
	read := func(name string) string {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	return read(ReportMarkdown), read(ReportHTML)
}

func TestReportContents(t *testing.T) {
	md, html := renderSample(t)
	common := []string{
		"must-hold → held ✓ (3 seeds)",                                           // token-lua × baseline, three seeds
		"must-break → violated ✓",                                                // token-lua × pause-holder
		"must-hold → VIOLATED ✗ (0/1 as expected)",                               // set-nx-px × pause-holder
		"at-risk → held ✓",                                                       // the evil strategy
		"exclusion violated: 2 overlapping holds",                                // unexpected line
		"token-lua × pause-holder: token-lua under pause-holder because reasons", // reason note
		"1000 (900–1200)",                                                        // throughput spread
		"7.2.4", "2 CPUs",
		"no grant after the faults",
		"checks nothing",
		"must-hold", "must-break", "at-risk", "Exit codes",
	}
	for _, want := range common {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q", want)
		}
		if !strings.Contains(html, want) {
			t.Errorf("index.html lacks %q", want)
		}
	}
	mdWant := []string{
		"Reproduce: `lockbench bench --profile ci --seed 1`",
		"[history](histories/baseline%20seed.jsonl)",
		"![Throughput (grants/s)](plots/throughput.png)",
		"[SVG](plots/throughput.svg)",
		"[porcupine](./javascript:alert%282%29)", // cannot read as a URL scheme
		"- pause: 1000–1300 ms (SIGSTOP holder)",
		"[https://example.com/a?b=c\\&d=e](https://example.com/a?b=c&d=e)",
	}
	for _, want := range mdWant {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	htmlWant := []string{
		`<pre><code>lockbench bench --profile ci --seed 1</code></pre>`,
		`<a href="histories/baseline%20seed.jsonl">history</a>`,
		`<img src="plots/throughput.png" alt="Throughput (grants/s)">`,
		`<a href="plots/throughput.svg">SVG</a>`,
		`title="token-lua under pause-holder because reasons"`,
		`<a href="https://example.com/a?b=c&amp;d=e">`,
		`<li>pause: 1000–1300 ms (SIGSTOP holder)</li>`,
	}
	for _, want := range htmlWant {
		if !strings.Contains(html, want) {
			t.Errorf("index.html lacks %q", want)
		}
	}
	// Unexpected results come before the matrix.
	for name, doc := range map[string]string{"report.md": md, "index.html": html} {
		u, m := strings.Index(doc, "Unexpected results (1)"), strings.Index(doc, "Verdict matrix")
		if u < 0 || m < 0 || u > m {
			t.Errorf("%s: unexpected results at %d, matrix at %d: want unexpected first", name, u, m)
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
	f := sampleFile()
	var runs []Run
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
	md, err := os.ReadFile(filepath.Join(dir, ReportMarkdown))
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
