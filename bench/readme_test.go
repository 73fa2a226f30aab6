package bench

import (
	"os"
	"strings"
	"testing"
)

// TestReadmeMatrix keeps the README's verdict matrix equal to the table in code.
func TestReadmeMatrix(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
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

func TestExpectedUnknownPairIsAtRisk(t *testing.T) {
	e := Expected("no-such", "baseline")
	if e.Summary() != "at-risk" {
		t.Errorf("unknown pair: %s, want at-risk", e.Summary())
	}
	if got := Expected("token-lua", "gc-pause"); got.Exclusion != Break || got.Summary() != "must-break" {
		t.Errorf("token-lua/gc-pause: %+v", got)
	}
	if got := Expected("fenced", "gc-pause"); got.Resource != Hold || got.Exclusion != Break {
		t.Errorf("fenced/gc-pause: %+v", got)
	}
}
