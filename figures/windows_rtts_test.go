package figures

import (
	"testing"

	"github.com/lockbench/lockbench/results"
)

// TestRTTsPerHold: a window's counted round trips are its overhead in
// round trips; without a count, its hold time over the run's measured
// round trip; RTTsCounted says which the runs have.
func TestRTTsPerHold(t *testing.T) {
	hold, two := 0.3, 2.0
	counted := results.Run{Windows: []results.Window{{HoldP50Ms: &hold, RoundTripsPerHold: &two}}}
	timed := results.Run{Windows: []results.Window{{HoldP50Ms: &hold}}}
	if got := rttsPerHold(counted, counted.Windows[0]); got == nil || *got != 2 {
		t.Errorf("counted: %v, want 2", got)
	}
	if got := rttsPerHold(timed, timed.Windows[0]); got != nil {
		t.Errorf("timed without a measured round trip: %v, want nil", *got)
	}
	for _, c := range []struct {
		name string
		runs []results.Run
		want bool
	}{
		{"counted", []results.Run{counted}, true},
		{"none", []results.Run{timed}, false},
		{"empty", nil, false},
	} {
		if got := RTTsCounted(c.runs); got != c.want {
			t.Errorf("%s: RTTsCounted %v, want %v", c.name, got, c.want)
		}
	}
}
