package locktest_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestExampleModule runs go test on the example module
// (examples/locktest, a module of its own that imports locktest as a team
// would): its correct lock passes, its lock whose release has no
// ownership check fails with exit 1, an exclusion witness and the
// reproduce command, and keeps its results folder; the passing run leaves
// no results folder behind. Both run baseline and node-pause only
// (LOCKTEST_SCENARIOS), under the race detector when this test runs
// under it. Linking the example's test binary takes 20-60 s on 2 busy
// cores, so it runs only with LOCKTEST_EXAMPLE=1 (make test runs the
// example's passing test itself, and TestGoLock the broken lock
// in-process).
func TestExampleModule(t *testing.T) {
	if os.Getenv("LOCKTEST_EXAMPLE") == "" {
		t.Skip("builds the example module's test binary (20-60 s): run with LOCKTEST_EXAMPLE=1")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command: %v", err)
	}
	tmp := t.TempDir() // the example's temporary folders go here
	dir := filepath.Join("..", "examples", "locktest")
	bin := filepath.Join(t.TempDir(), "tokenlock.test")
	build := []string{"test", "-c", "-o", bin}
	if raceEnabled {
		build = append(build, "-race")
	}
	cmd := exec.Command(gobin, append(build, ".")...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go test -c in %s: %v\n%s", dir, err, out)
	}
	tests := []struct {
		name, run string
		broken    bool
	}{
		{"correct lock passes", "^TestLock$", false},
		{"unchecked release fails", "^TestUncheckedRelease$", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(bin, "-test.count=1", "-test.run", tc.run)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "LOCKTEST_SCENARIOS=baseline,node-pause", "TMPDIR="+tmp)
			if tc.broken {
				cmd.Env = append(cmd.Env, "TOKENLOCK_BROKEN=1")
			}
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			err := cmd.Run()
			var exit *exec.ExitError
			switch {
			case !tc.broken && err != nil:
				t.Fatalf("go test of the correct lock: %v\n%s", err, out.String())
			case tc.broken && !errors.As(err, &exit):
				t.Fatalf("go test of the broken lock: %v, want exit status 1\n%s", err, out.String())
			case tc.broken && exit.ExitCode() != 1:
				t.Fatalf("go test of the broken lock: exit %d, want 1\n%s", exit.ExitCode(), out.String())
			}
			if !tc.broken {
				if left, _ := filepath.Glob(filepath.Join(tmp, "locktest-*")); len(left) > 0 {
					t.Errorf("a passing test left results folders: %v", left)
				}
				return
			}
			for _, want := range []string{"expected must-hold", "witness: exclusion: ", "reproduce: cd ", "--- FAIL: TestUncheckedRelease"} {
				if !strings.Contains(out.String(), want) {
					t.Errorf("the failure does not say %q:\n%s", want, out.String())
				}
			}
			if m := regexp.MustCompile(`results kept in (\S+)`).FindStringSubmatch(out.String()); m == nil {
				t.Errorf("the failure names no results folder:\n%s", out.String())
			} else if _, err := os.Stat(filepath.Join(m[1], "report.md")); err != nil {
				t.Errorf("results folder: %v", err)
			}
		})
	}
}
