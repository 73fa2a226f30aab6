package main

import (
	"strings"
	"testing"
)

// TestVersionFlag: --version prints the version; -v is not a top-level
// shorthand for it (under bench -v is --verbose, and one letter must not
// mean two things): lockbench -v is a one-line usage error naming
// --version, and bench -v still means --verbose.
func TestVersionFlag(t *testing.T) {
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--version"}, 0, "lockbench "},
		{[]string{"-v"}, 2, "lockbench: usage error: lockbench has no -v flag: --version prints the version"},
		// -v and --quiet contradict each other only when -v is --verbose.
		{[]string{"bench", "-v", "--quiet"}, 2, "--quiet and --verbose contradict each other"},
	} {
		code, text := run(t, nil, tt.args...)
		if code != tt.code || !strings.Contains(text, tt.want) || strings.Count(strings.TrimSpace(text), "\n") > 0 {
			t.Errorf("lockbench %q: exit %d, output %q; want exit %d and one line with %q", tt.args, code, text, tt.code, tt.want)
		}
	}
	if _, text := run(t, nil, "--help"); strings.Contains(text, "-v, --version") {
		t.Errorf("lockbench --help still offers -v for --version:\n%s", text)
	}
}
