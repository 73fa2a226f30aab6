package chaos

import (
	"strings"
	"testing"

	"github.com/lockbench/lockbench/workload"
)

// TestGrantsCountsAttempts: grants counts the outermost acquire calls
// begun per key (nested ones and other points are not attempts), and a
// struck hold's outcome says whether other clients tried the key during
// it: a miss with no attempt tested nothing.
func TestGrantsCountsAttempts(t *testing.T) {
	g := newGrants()
	for _, ev := range []workload.Event{
		{Client: 1, Point: workload.PointBeforeAcquire, Key: "k0", Depth: 1},
		{Client: 2, Point: workload.PointBeforeAcquire, Key: "k0", Depth: 1},
		{Client: 2, Point: workload.PointBeforeAcquire, Key: "k0", Depth: 2}, // nested
		{Client: 3, Point: workload.PointBeforeAcquire, Key: "k1", Depth: 1},
		{Client: 1, Point: workload.PointAcquired, Key: "k0"},
		{Client: 1, Point: workload.PointBeforeRelease, Key: "k0", Depth: 1},
	} {
		g.see(ev)
	}
	if n := g.attemptsOf("k0"); n != 2 {
		t.Errorf("attempts of k0: %d, want 2", n)
	}
	if n := g.attemptsOf("k1"); n != 1 {
		t.Errorf("attempts of k1: %d, want 1", n)
	}
	if c := g.lastClient("k0"); c != 1 {
		t.Errorf("last grant of k0 to client %d, want 1", c)
	}
	for _, tt := range []struct {
		h    holdOutcome
		want string
	}{
		{holdOutcome{true, 4, 7}, "client 4 granted the key during the hold"},
		{holdOutcome{false, -1, 0}, "no other client began an acquire of the key during it: the hold was not tested"},
		{holdOutcome{false, -1, 12}, "no other grant during the hold, in 12 acquire calls other clients began during it"},
		{holdOutcome{false, -1, -1}, "no other grant during the hold"},
	} {
		if got := tt.h.String(); !strings.HasSuffix(got, tt.want) {
			t.Errorf("%+v: %q, want it to end %q", tt.h, got, tt.want)
		}
	}
}
