package verdicts

import (
	"strings"
	"testing"

	"github.com/lockbench/lockbench/chaos/schedule"
	"github.com/lockbench/lockbench/impl"
)

// TestForSchedule: a schedule is held to the weakest expectation of the
// scenarios that exercise its steps' primitives, for a lock with rows and
// one judged by its claims alike.
func TestForSchedule(t *testing.T) {
	step := func(fault, target, on string, depth int, f float64) schedule.Step {
		return schedule.Step{Fault: fault, Target: target, On: on, Depth: depth, For: f}
	}
	lost := step("lost-reply", schedule.TargetHolder, "before-acquire", 0, 0)
	pause := step("client-pause", schedule.TargetHolder, "before-write", 0, 2)
	sched := func(steps ...schedule.Step) schedule.Schedule {
		return schedule.Schedule{Version: 1, Name: "t", Steps: steps}
	}
	tokenLua := impl.Info{Nodes: 1, Claims: impl.Claims{AtomicAcquire: true, TokenRelease: true}}
	for _, c := range []struct {
		name      string
		src       Source
		s         schedule.Schedule
		exclusion Expect
		liveness  Expect
		reason    string
	}{
		{"token-lua, no fault", SourceOf("token-lua", tokenLua), sched(), Hold, Hold, "baseline"},
		{"token-lua, lost reply", SourceOf("token-lua", tokenLua), sched(lost), Hold, Hold, "lost-reply"},
		{"token-lua, lost reply and a pause", SourceOf("token-lua", tokenLua), sched(lost, pause), AtRisk, Hold, "gc-pause"},
		{"naive, lost reply", LookupSource("naive"), sched(lost), Hold, AtRisk, "lost-reply"},
		{"an adapter with token-lua's claims", SourceOf("exec:x", tokenLua), sched(lost), Hold, Hold, "lost-reply"},
		{"an adapter, lost reply and a pause", SourceOf("exec:x", tokenLua), sched(lost, pause), AtRisk, Hold, "gc-pause"},
	} {
		e := c.src.ForSchedule(c.s, "")
		if e.Exclusion != c.exclusion || e.Liveness != c.liveness || !strings.Contains(e.Reason, c.reason) {
			t.Errorf("%s: exclusion %s liveness %s (%s), want %s, %s, a reason naming %s", c.name, e.Exclusion, e.Liveness, e.Reason, c.exclusion, c.liveness, c.reason)
		}
		if e.DuringFaults != "" || e.Summary() == "must-break" {
			t.Errorf("%s: %+v: a schedule judges no availability and no canary", c.name, e)
		}
	}
	e := SourceOf("token-lua", tokenLua).ForSchedule(sched(lost), "custom usage policy (--policy)")
	if e.Exclusion != AtRisk || !strings.Contains(e.Reason, "--policy") {
		t.Errorf("not gated: %+v", e)
	}
}
