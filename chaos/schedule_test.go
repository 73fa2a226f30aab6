package chaos

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/chaos/fault"
	"github.com/lockbench/lockbench/chaos/schedule"
	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/workload"
)

// TestPrimitivesCoverFaults: every fault primitive is schedulable or says
// why not, and every scenario a primitive names exists.
func TestPrimitivesCoverFaults(t *testing.T) {
	not := schedule.NotScheduled()
	for _, f := range fault.Faults() {
		_, ok := schedule.LookupPrimitive(f.Name())
		if _, left := not[f.Name()]; ok == left {
			t.Errorf("fault %s: schedulable %v, listed in NotScheduled %v: want exactly one", f.Name(), ok, left)
		}
	}
	for _, p := range schedule.Primitives() {
		if p.Fault.Name() != p.Name {
			t.Errorf("primitive %s carries fault %s", p.Name, p.Fault.Name())
		}
		for _, st := range p.Steps() {
			for _, name := range schedule.ScenariosFor(st) {
				if _, err := Lookup(name); err != nil {
					t.Errorf("primitive %s names scenario %s: %v", p.Name, name, err)
				}
			}
		}
	}
}

// TestScheduleSetup: a schedule's setup follows its steps.
func TestScheduleSetup(t *testing.T) {
	single := impl.Info{Nodes: 1, Claims: impl.Claims{TokenRelease: true, AtomicAcquire: true, Reentrant: true}}
	s := schedule.Schedule{Version: 1, Name: "x", Steps: []schedule.Step{
		{Fault: "lost-reply", Target: schedule.TargetHolder, On: "before-acquire", Depth: 2, At: 1},
		{Fault: "clock-jump", Target: schedule.TargetHolderNode, On: "in-cs", At: 1, Size: 2},
		{Fault: "node-pause", Target: schedule.TargetHolderNode, On: "acquired", At: 1, For: 4},
	}}
	got := scheduleSetup(s, single)
	if !got.Proxies || !got.ClockShim || got.Reentrancy != 2 || got.OpTimeoutTTL < 5 {
		t.Errorf("setup %+v: want proxies, the clock shim, reentrancy 2 and calls that outlast the 4×TTL pause", got)
	}
	sc := ScheduleScenario(s)
	if sc.Name != "schedule:x" || sc.Kind != Mixed || len(sc.Faults) != 3 {
		t.Errorf("scenario %s kind %s with %d faults", sc.Name, sc.Kind, len(sc.Faults))
	}
	if sc := ScheduleScenario(schedule.Schedule{Version: 1, Name: "y"}); sc.Kind != None {
		t.Errorf("an empty schedule's kind is %s, want none", sc.Kind)
	}
	etcd := impl.Info{Nodes: 3, Server: impl.ServerEtcd}
	if ok, _ := scheduleApplies(schedule.Schedule{Version: 1, Name: "z", Steps: []schedule.Step{{Fault: "lost-reply", Target: schedule.TargetHolder, On: "before-acquire"}}}, etcd); ok {
		t.Error("lost-reply applies to an etcd lock: its links have no proxy")
	}
	if ok, why := scheduleApplies(schedule.Schedule{Version: 1, Name: "z", Steps: []schedule.Step{{Fault: "node-pause", Target: schedule.TargetNode, Node: 3, On: schedule.OnTime, For: 1}}}, etcd); !ok {
		t.Errorf("node-pause on n3 does not apply to etcd: %s", why)
	}
}

// TestScenariosFor: a step is judged by the scenarios that exercise its
// primitive as it uses it: a slow critical section before the usage
// policy's check (after the read) is long-cs, one before the read or
// between the check and the write is also gc-pause's pause; a lost reply
// by the call it drops.
func TestScenariosFor(t *testing.T) {
	for _, c := range []struct {
		st   schedule.Step
		want []string
	}{
		{schedule.Step{Fault: "slow-cs", On: "in-cs"}, []string{"long-cs"}},
		{schedule.Step{Fault: "slow-cs", On: "acquired"}, []string{"long-cs", "gc-pause"}},
		{schedule.Step{Fault: "slow-cs", On: "before-write"}, []string{"long-cs", "gc-pause"}},
		{schedule.Step{Fault: "lost-reply", On: "before-acquire"}, []string{"lost-reply"}},
		{schedule.Step{Fault: "lost-reply", On: "before-acquire", Depth: 2}, []string{"lost-reply-reentrant"}},
		{schedule.Step{Fault: "lost-reply", On: "before-release"}, []string{"lost-reply-release"}},
		{schedule.Step{Fault: "lost-reply", On: "renew"}, []string{"lost-reply-extend"}},
		{schedule.Step{Fault: "key-loss", On: "in-cs"}, []string{"held-key-loss"}},
		{schedule.Step{Fault: "slow-reply", On: "before-acquire"}, []string{"slow-node"}},
		{schedule.Step{Fault: "slow-reply", On: "renew"}, []string{"slow-node", "lost-reply-extend"}},
		{schedule.Step{Fault: "cancel", On: "before-acquire"}, []string{"cancel"}},
		{schedule.Step{Fault: "no-such-fault", On: "in-cs"}, nil},
	} {
		if got := schedule.ScenariosFor(c.st); !slices.Equal(got, c.want) {
			t.Errorf("%s at %s (depth %d): %v, want %v", c.st.Fault, c.st.On, c.st.Depth, got, c.want)
		}
	}
}

// TestScheduleStepNeverStruck: a step whose event never came is recorded
// at the end as a missed window saying "never struck" and why; a step
// that struck is not; a step at depth 2 does not apply to a lock that
// does not nest (it would never strike).
func TestScheduleStepNeverStruck(t *testing.T) {
	rec := &recorder{}
	env := Env{TTL: 20 * time.Millisecond, Duration: 100 * time.Millisecond, Clock: history.NewClock(), History: rec, Clients: 2}
	s := schedule.Schedule{Version: 1, Name: "n", Steps: []schedule.Step{
		{Fault: "slow-cs", Target: schedule.TargetHolder, On: "in-cs", At: 0.5, For: 0.3},
		{Fault: "client-pause", Target: schedule.TargetHolder, On: "acquired", With: 1, For: 1},
	}}
	m := newScheduled(env, s)
	m.steps[0].claim(workload.Event{Client: 1, Point: workload.PointInCS, Key: "k", Hold: 3})
	m.neverStruck()
	ops := rec.ops()
	if len(ops) != 1 {
		t.Fatalf("%d operations recorded, want one (step 2's): %+v", len(ops), ops)
	}
	op := ops[0]
	if op.Kind != history.Nemesis || op.Landing != history.Missed || !strings.Contains(op.Note, "client-pause (step 2)") || !strings.Contains(op.Note, "never struck") || !strings.Contains(op.Note, "step 1 it is tied to") {
		t.Errorf("never-struck window %+v", op)
	}
	nested := schedule.Schedule{Version: 1, Name: "d", Steps: []schedule.Step{{Fault: "client-pause", Target: schedule.TargetHolder, On: "before-acquire", Depth: 2, At: 1, For: 1}}}
	if ok, why := scheduleApplies(nested, impl.Info{Nodes: 1, Claims: impl.Claims{AtomicAcquire: true, TokenRelease: true}}); ok || !strings.Contains(why, "not reentrant") {
		t.Errorf("a nested step applies to a lock that does not nest (ok %v, %q)", ok, why)
	}
	if ok, why := scheduleApplies(nested, impl.Info{Nodes: 1, Claims: impl.Claims{AtomicAcquire: true, TokenRelease: true, Reentrant: true}}); !ok {
		t.Errorf("a nested step does not apply to a reentrant lock: %s", why)
	}
}
