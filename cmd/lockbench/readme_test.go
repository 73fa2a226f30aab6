package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadmeHistorySample: the sample history in README.md's "History
// format" section is a consistent history: lockbench check of it, as-is,
// exits 0 with every check ok or skipped (it once read 41 from a fresh
// resource: a lost update).
func TestReadmeHistorySample(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	start := strings.Index(s, "<!-- history-sample")
	end := strings.Index(s, "<!-- /history-sample -->")
	if start < 0 || end < start {
		t.Fatal("README.md has no <!-- history-sample … --> … <!-- /history-sample --> section")
	}
	sec := s[start:end]
	open, close := strings.Index(sec, "```json\n"), strings.LastIndex(sec, "```")
	if open < 0 || close <= open {
		t.Fatal("README.md's history-sample section has no ```json block")
	}
	path := filepath.Join(t.TempDir(), "sample.jsonl")
	if err := os.WriteFile(path, []byte(sec[open+len("```json\n"):close]), 0o644); err != nil {
		t.Fatal(err)
	}
	code, text := run(t, nil, "check", path)
	if code != 0 || strings.Contains(text, "violated") || strings.Contains(text, "inconclusive") {
		t.Errorf("lockbench check of README's sample history: exit %d:\n%s\nwant exit 0 and no violation", code, text)
	}
	for _, c := range []string{"exclusion  ok", "resource   ok"} {
		if !strings.Contains(text, c) {
			t.Errorf("lockbench check of README's sample history: no %q in\n%s", c, text)
		}
	}
}
