package results

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUnknownOutcomeWarning: a run more than half of whose acquires had
// an unknown outcome gets a warning naming the counts and the fix; the
// report lists it under Warnings, and a run without one has no section.
func TestUnknownOutcomeWarning(t *testing.T) {
	for _, tt := range []struct {
		name           string
		ok, fail, info int
		want           string
	}{
		{"no acquires", 0, 0, 0, ""},
		{"half unknown", 5, 0, 5, ""},
		{"mostly known", 90, 5, 5, ""},
		{"mostly unknown", 202, 0, 8504, "8504 of 8706 acquires (98%) had an unknown outcome"},
		{"fails and unknowns", 1, 1, 3, "3 of 5 acquires"},
	} {
		got := UnknownOutcomeWarning(Run{Acquires: map[string]int{"ok": tt.ok, "fail": tt.fail, "info": tt.info}})
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
		if got != "" && !strings.Contains(got, "fewer --clients or a longer --op-timeout") {
			t.Errorf("%s: %q names no fix", tt.name, got)
		}
	}

	f := sampleFile()
	for _, warn := range []bool{false, true} {
		if warn {
			f.Runs[0].Acquires = map[string]int{"ok": 1, "fail": 0, "info": 9}
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
			return string(data)
		}
		md, details, html := read(ReportMarkdown), read(DetailsMarkdown), read(ReportHTML)
		for _, c := range []struct {
			name string
			has  bool
		}{
			// report.md counts them and links details.md, which lists them.
			{ReportMarkdown, strings.Contains(md, "1 run rests on little evidence") && strings.Contains(md, "(details.md#warnings)")},
			{DetailsMarkdown, strings.Contains(details, "## Warnings") && strings.Contains(details, "9 of 10 acquires (90%) had an unknown outcome")},
			{ReportHTML, strings.Contains(html, "1 run rests on little evidence") && strings.Contains(html, "9 of 10 acquires (90%) had an unknown outcome")},
		} {
			if c.has != warn {
				t.Errorf("%s with a warned run %v: has the warning %v", c.name, warn, c.has)
			}
		}
	}
}
