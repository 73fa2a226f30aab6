package chaos

import (
	"strings"
	"testing"

	"github.com/lockbench/lockbench/chaos/schedule"
	"github.com/lockbench/lockbench/impl"
)

// TestScheduleOnCluster: a schedule whose steps' scenarios are written for
// a Redis Cluster (client pauses, slow critical sections) runs a cluster
// lock; one with a node fault does not, with the reason.
func TestScheduleOnCluster(t *testing.T) {
	in := impl.Info{Cluster: true, Nodes: 1, Claims: impl.Claims{AtomicAcquire: true, TokenRelease: true, Renewal: true}}
	for _, c := range []struct {
		name string
		st   schedule.Step
		want bool
	}{
		{"client-pause", schedule.Step{Fault: "client-pause", Target: schedule.TargetHolder, On: "before-write", For: 1}, true},
		{"slow-cs", schedule.Step{Fault: "slow-cs", Target: schedule.TargetHolder, On: "in-cs", For: 1}, true},
		{"node-pause", schedule.Step{Fault: "node-pause", Target: schedule.TargetHolderNode, On: "acquired", For: 1}, false},
	} {
		s := schedule.Schedule{Version: 1, Name: "c", Steps: []schedule.Step{c.st}}
		ok, why := ScheduleScenario(s).AppliesTo(in)
		if ok != c.want {
			t.Errorf("%s on a cluster lock: applies %v (%s), want %v", c.name, ok, why, c.want)
		}
	}
}

// TestScheduleStepNeedsRenewal: a step at a renewal or an extend does not
// apply to a lock that does not renew (it would never strike).
func TestScheduleStepNeedsRenewal(t *testing.T) {
	s := schedule.Schedule{Version: 1, Name: "r", Steps: []schedule.Step{{Fault: "slow-reply", Target: schedule.TargetHolder, On: "renew", Size: 0.5}}}
	if ok, why := scheduleApplies(s, impl.Info{Nodes: 1, Claims: impl.Claims{AtomicAcquire: true, TokenRelease: true}}); ok {
		t.Error("a renewal step applies to a lock that does not renew")
	} else if !strings.Contains(why, "does not renew") {
		t.Errorf("reason %q does not say the lock does not renew", why)
	}
	if ok, why := scheduleApplies(s, impl.Info{Nodes: 1, Claims: impl.Claims{AtomicAcquire: true, TokenRelease: true, Renewal: true}}); !ok {
		t.Errorf("a renewal step does not apply to a renewing lock: %s", why)
	}
}
