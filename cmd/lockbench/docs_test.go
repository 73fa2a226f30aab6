package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDocsHistorySample: the sample history in docs/history-format.md is
// a consistent history: lockbench check of it, as-is, finds no violation.
// With one hold it is too little evidence to call a pass: it exits 4,
// inconclusive, naming the holds it lacks.
func TestDocsHistorySample(t *testing.T) {
	const doc = "../../docs/history-format.md"
	b, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	start := strings.Index(s, "<!-- history-sample")
	end := strings.Index(s, "<!-- /history-sample -->")
	if start < 0 || end < start {
		t.Fatal(doc + " has no <!-- history-sample … --> … <!-- /history-sample --> section")
	}
	sec := s[start:end]
	open, close := strings.Index(sec, "```json\n"), strings.LastIndex(sec, "```")
	if open < 0 || close <= open {
		t.Fatal(doc + "'s history-sample section has no ```json block")
	}
	path := filepath.Join(t.TempDir(), "sample.jsonl")
	if err := os.WriteFile(path, []byte(sec[open+len("```json\n"):close]), 0o644); err != nil {
		t.Fatal(err)
	}
	code, text := run(t, nil, "check", path)
	if code != 4 || strings.Contains(text, "violated") {
		t.Errorf("lockbench check of the sample history in docs/history-format.md: exit %d:\n%s\nwant exit 4 (inconclusive) and no violation", code, text)
	}
	for _, c := range []string{"exclusion  inconclusive", "resource   inconclusive", "inconclusive: 1 hold, 0 chances to overlap (need ≥ 10): run longer (--duration)"} {
		if !strings.Contains(text, c) {
			t.Errorf("lockbench check of the sample history in docs/history-format.md: no %q in\n%s", c, text)
		}
	}
}
