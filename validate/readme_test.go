package validate

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/chaos"
	"github.com/lockbench/lockbench/impl"
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

// TestReadmeMatrix keeps the README's verdict matrix equal to the table in code.
func TestReadmeMatrix(t *testing.T) {
	s := readme(t)
	start := strings.Index(s, "<!-- verdict-matrix")
	end := strings.Index(s, "<!-- /verdict-matrix -->")
	if start < 0 || end < start {
		t.Fatal("README.md has no verdict-matrix section")
	}
	body := s[start:end]
	body = body[strings.Index(body, "\n")+1:]
	if body != MatrixMarkdown() {
		t.Errorf("README.md's verdict matrix is out of date: replace it with the output of `go run ./cmd/lockbench list --markdown`")
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
// registered strategy (impl.All) and scenario (chaos.All), in the
// registries' order, and nothing else.
func TestReadmeTables(t *testing.T) {
	s := readme(t)
	for _, tt := range []struct {
		heading  string
		want     []string
		registry string
	}{
		{"## Strategies", impl.Names(), "impl.All (impl/registry.go)"},
		{"## Scenarios", chaos.Names(), "chaos.All"},
	} {
		if got := firstColumn(t, s, tt.heading); !slices.Equal(got, tt.want) {
			t.Errorf("README.md's %q table lists %q; %s registers %q: give each a row, in that order", tt.heading, got, tt.registry, tt.want)
		}
	}
}
