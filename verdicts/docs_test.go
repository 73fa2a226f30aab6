package verdicts

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/lockbench/lockbench/chaos"
	"github.com/lockbench/lockbench/impl/strategies"
)

// readme returns README.md's text.
func readme(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestVerdictsDoc keeps the verdict matrix in docs/verdicts.md equal to
// the table in code. With -update it rewrites that section (and, in
// TestMatrixGolden, testdata/matrix.golden.md) from MatrixMarkdown.
func TestVerdictsDoc(t *testing.T) {
	const doc = "../docs/verdicts.md"
	const open, end = "<!-- verdict-matrix", "<!-- /verdict-matrix -->"
	b, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	start, stop := strings.Index(s, open), strings.Index(s, end)
	if start < 0 || stop < start {
		t.Fatalf("%s has no %s … %s section", doc, open, end)
	}
	body := s[start:stop]
	nl := strings.Index(body, "\n") + 1
	if *update {
		s = s[:start] + body[:nl] + MatrixMarkdown() + s[stop:]
		if err := os.WriteFile(doc, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if body[nl:] != MatrixMarkdown() {
		t.Errorf("%s's verdict matrix is out of date: rewrite it with go generate ./verdicts", doc)
	}
}

// firstColumn returns the first cells (backticks removed) of the rows
// of the first Markdown table after the line heading in text.
func firstColumn(t *testing.T, text, heading string) []string {
	t.Helper()
	i := strings.Index(text, "\n"+heading+"\n")
	if i < 0 {
		t.Fatalf("README.md has no %q section", heading)
	}
	var names []string
	inTable := false
	for _, line := range strings.Split(text[i+len(heading)+2:], "\n") {
		if !strings.HasPrefix(line, "|") {
			if inTable {
				break
			}
			continue
		}
		inTable = true
		cell := strings.TrimSpace(strings.Split(line, "|")[1])
		names = append(names, strings.Trim(cell, "`"))
	}
	if len(names) < 2 {
		t.Fatalf("README.md's %q section has no table", heading)
	}
	return names[2:] // after the header row and the |---| row
}

// TestReadmeTables: README.md's strategy and scenario tables list every
// registered strategy (strategies.All) and scenario (chaos.All), in the
// registries' order, and nothing else.
func TestReadmeTables(t *testing.T) {
	s := readme(t)
	for _, tt := range []struct {
		heading  string
		want     []string
		registry string
	}{
		{"## Strategies", strategies.Names(), "strategies.All (impl/strategies/registry.go)"},
		{"## Scenarios", chaos.Names(), "chaos.All"},
	} {
		if got := firstColumn(t, s, tt.heading); !slices.Equal(got, tt.want) {
			t.Errorf("README.md's %q table lists %q; %s registers %q: give each a row, in that order", tt.heading, got, tt.registry, tt.want)
		}
	}
}

// TestDocsLinks: every relative link in README.md and docs/*.md names a
// file of the repository (an anchor, if any, a heading of that file), and
// none leaves the repository.
func TestDocsLinks(t *testing.T) {
	pages, err := filepath.Glob("../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, "../README.md")
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for _, page := range pages {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(string(b), -1) {
			target := m[1]
			if strings.Contains(target, "://") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			path := page
			if file != "" {
				path = filepath.Join(filepath.Dir(page), file)
			}
			if rel, err := filepath.Rel("..", path); err != nil || strings.HasPrefix(rel, "..") {
				t.Errorf("%s links to %s, outside the repository", page, target)
				continue
			}
			text, err := os.ReadFile(path)
			if err != nil {
				t.Errorf("%s links to %s: %v", page, target, err)
				continue
			}
			if anchor != "" && !slices.Contains(anchors(string(text)), anchor) {
				t.Errorf("%s links to %s: %s has no heading with that anchor", page, target, path)
			}
		}
	}
}

// anchors returns GitHub's anchors of the Markdown headings in text:
// lower case, spaces to hyphens, punctuation other than hyphens dropped.
func anchors(text string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, "#") {
			continue
		}
		h := strings.ToLower(strings.TrimSpace(strings.TrimLeft(line, "#")))
		var b strings.Builder
		for _, r := range h {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		out = append(out, b.String())
	}
	return out
}
