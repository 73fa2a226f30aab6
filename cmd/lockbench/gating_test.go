package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckAgreesWithRun: a run whose flags leave the strategy's defaults
// (--policy none) is not gated, and lockbench check of its history says the
// same (it had judged it against the verdict table); the same history cut
// at a line boundary, as a killed run leaves it, is refused, not judged.
func TestCheckAgreesWithRun(t *testing.T) {
	out := t.TempDir()
	code, text := run(t, nil, "run", "--strategy", "watchdog", "--scenario", "long-cs", "--policy", "none",
		"--duration", "300ms", "--clients", "4", "--out", out, "--quiet")
	if code != 0 {
		t.Fatalf("run: exit %d: %s", code, text)
	}
	hist := filepath.Join(out, "histories", "watchdog-long-cs-1.jsonl")
	code, text = run(t, nil, "check", hist)
	if code != 0 || !strings.Contains(text, "custom usage policy (--policy)") {
		t.Errorf("check of a history of a run that is not gated: exit %d, output %q; want exit 0 and the reason it is not gated", code, text)
	}
	data, err := os.ReadFile(hist)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	cut := filepath.Join(t.TempDir(), "cut.jsonl")
	if err := os.WriteFile(cut, []byte(strings.Join(lines[:len(lines)/2], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	code, text = run(t, nil, "check", cut)
	if code != 2 || !strings.Contains(text, "cut short after line") {
		t.Errorf("check of a history cut at a line boundary: exit %d, output %q; want exit 2 and \"cut short\"", code, text)
	}
}

// TestOneClientNotGated: one client cannot overlap itself, so a pair the
// verdict table expects to break is reported not gated (not a failed
// canary, exit 1), and check of its history agrees; a pair
// expected to hold stays gated, and with no chance to overlap it is
// inconclusive (exit 4), naming the chances it lacked. check refuses a
// --timeout below 100 ms.
func TestOneClientNotGated(t *testing.T) {
	tests := []struct {
		scenario, expected string
		notGated           bool
		code               int
	}{
		{"long-cs", "expected at-risk", true, 0},
		{"baseline", "expected must-hold", false, 4},
	}
	for _, tt := range tests {
		t.Run(tt.scenario, func(t *testing.T) {
			out := t.TempDir()
			code, text := run(t, nil, "run", "--strategy", "token-lua", "--scenario", tt.scenario, "--clients", "1", "--out", out)
			const why = "1 client (--clients 1) cannot overlap itself"
			if code != tt.code || !strings.Contains(text, tt.expected) || strings.Contains(text, why) != tt.notGated {
				t.Fatalf("run: exit %d, output %q; want exit %d, %q, not gated %v", code, text, tt.code, tt.expected, tt.notGated)
			}
			if tt.code == 4 && !strings.Contains(text, "0 chances to overlap (need ≥ 10): contend more") {
				t.Errorf("run: output %q names no missing chances to overlap", text)
			}
			hist := filepath.Join(out, "histories", "token-lua-"+tt.scenario+"-1.jsonl")
			code, text = run(t, nil, "check", hist)
			if code != tt.code || !strings.Contains(text, tt.expected) || strings.Contains(text, why) != tt.notGated {
				t.Errorf("check: exit %d, output %q; want exit %d, %q, not gated %v", code, text, tt.code, tt.expected, tt.notGated)
			}
			code, text = run(t, nil, "check", "--timeout", "1ns", hist)
			if code != 2 || !strings.Contains(text, "--timeout 1ns: want at least 100ms") {
				t.Errorf("check --timeout 1ns: exit %d, output %q; want exit 2", code, text)
			}
		})
	}
}

// TestLongUserCSNotGated: a workload whose own critical sections reach
// TTL/2 (--ttl 20ms --cs-min 10ms) or exceed the TTL (--cs-min 30ms;
// the reason says which) breaks the verdict table's assumption
// for token-lua: the run is reported at-risk, not gated, with the reason,
// and lockbench check of its history agrees.
func TestLongUserCSNotGated(t *testing.T) {
	tests := []struct {
		csMin, why string
	}{
		{"30ms", "critical sections of up to 30ms exceed the TTL (TTL 20ms"},
		{"10ms", "critical sections of up to 10ms reach TTL/2 or more (TTL 20ms"},
	}
	for _, tt := range tests {
		t.Run(tt.csMin, func(t *testing.T) {
			out := t.TempDir()
			code, text := run(t, nil, "run", "--strategy", "token-lua", "--ttl", "20ms", "--cs-min", tt.csMin,
				"--duration", "300ms", "--clients", "4", "--out", out)
			if code != 0 || !strings.Contains(text, "expected at-risk") || !strings.Contains(text, "not gated: "+tt.why) {
				t.Fatalf("run: exit %d, output:\n%s\nwant exit 0, at-risk and %q", code, text, tt.why)
			}
			code, text = run(t, nil, "check", filepath.Join(out, "histories", "token-lua-baseline-1.jsonl"))
			if code != 0 || !strings.Contains(text, "expected at-risk ("+tt.why) {
				t.Errorf("check: exit %d, output:\n%s\nwant exit 0 and the same reason", code, text)
			}
		})
	}
}
