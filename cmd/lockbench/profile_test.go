package main

import (
	"strings"
	"testing"
)

// TestNotInProfile: a strategy or scenario that the chosen profile lacks
// is refused (exit 2, one line, before anything starts) with the profile
// that has it and the flag that selects that profile, or, for a name no
// profile has, saying so.
func TestNotInProfile(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{[]string{"bench", "--scenarios", "node-pause"},
			[]string{"--scenarios node-pause: not in profile ci; profiles full and verdicts-sweep have it: add --profile full", "profile ci has: baseline,"}},
		{[]string{"bench", "--profile", "ci", "--scenarios", "baseline,sentinel-failover"},
			[]string{"--scenarios sentinel-failover: not in profile ci; profiles full and verdicts-sweep have it: add --profile full"}},
		{[]string{"bench", "--scenarios", "no-such-scenario"},
			[]string{"--scenarios no-such-scenario: not in profile ci nor in any other (see lockbench list)"}},
		{[]string{"bench", "--profile", "full", "--strategies", "no-such-lock"},
			[]string{"--strategies no-such-lock: not in profile full nor in any other", "profile full has: naive,"}},
	} {
		code, text := run(t, nil, tt.args...)
		if code != 2 || !strings.HasPrefix(text, "lockbench: usage error: ") || strings.Count(strings.TrimSpace(text), "\n") > 0 {
			t.Errorf("lockbench %q: exit %d, output %q; want exit 2 and one usage error line", tt.args, code, text)
		}
		for _, w := range tt.want {
			if !strings.Contains(text, w) {
				t.Errorf("lockbench %q: no %q in %q", tt.args, w, text)
			}
		}
	}
}
