package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExecStrategy: run and bench accept an adapter (exec:COMMAND) like a
// built-in strategy, judge it by the expectation its declared claims
// predict (redis-py's Lock has no fencing: gc-pause must break it), and a
// broken adapter is a usage error (exit 2) in one line naming it.
func TestExecStrategy(t *testing.T) {
	if testing.Short() {
		t.Skip("runs redis-server and Python")
	}
	adapter, err := filepath.Abs("../../adapters/redis-py/adapter.py")
	if err != nil {
		t.Fatal(err)
	}
	strategy := "exec:python3 " + adapter
	out := t.TempDir()
	code, text := run(t, nil, "run", "--strategy", strategy, "--scenario", "gc-pause", "--clients", "4", "--duration", "1s", "--out", filepath.Join(out, "run"))
	if code != 0 || !strings.Contains(text, "expected must-break; exclusion violated") || !strings.Contains(text, "as expected") {
		t.Errorf("run --strategy %q --scenario gc-pause: exit %d, output:\n%s\nwant exit 0, expected must-break, exclusion violated, as expected", strategy, code, text)
	}
	code, text = run(t, nil, "bench", "--strategies", "token-lua,"+strategy, "--scenarios", "baseline", "--out", filepath.Join(out, "bench"))
	if code != 0 {
		t.Errorf("bench --strategies token-lua,%q: exit %d, output:\n%s", strategy, code, text)
	}
	if report, err := os.ReadFile(filepath.Join(out, "bench", "report.md")); err != nil || !strings.Contains(string(report), strategy) {
		t.Errorf("bench report.md does not name %q (%v)", strategy, err)
	}

	broken := filepath.Join(out, "broken.sh")
	if err := os.WriteFile(broken, []byte("#!/bin/sh\necho 'adapter starting'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	code, text = run(t, nil, "run", "--strategy", "exec:"+broken, "--scenario", "baseline", "--out", filepath.Join(out, "broken"))
	want := `adapter "` + broken + `" wrote a line that is not JSON`
	if code != 2 || !strings.Contains(text, want) || strings.Count(strings.TrimSpace(text), "\n") != 0 {
		t.Errorf("run --strategy exec:%s: exit %d, output %q; want exit 2 and one line containing %q", broken, code, text, want)
	}
}
