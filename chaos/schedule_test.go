package chaos

import (
	"slices"
	"testing"

	"github.com/lockbench/lockbench/impl"
)

// TestPrimitivesCoverFaults: every fault primitive is schedulable or says
// why not, and every scenario a primitive names exists.
func TestPrimitivesCoverFaults(t *testing.T) {
	not := NotScheduled()
	for _, f := range Faults() {
		_, ok := LookupPrimitive(f.Name())
		if _, left := not[f.Name()]; ok == left {
			t.Errorf("fault %s: schedulable %v, listed in NotScheduled %v: want exactly one", f.Name(), ok, left)
		}
	}
	for _, p := range Primitives() {
		if p.Fault.Name() != p.Name {
			t.Errorf("primitive %s carries fault %s", p.Name, p.Fault.Name())
		}
		for _, st := range p.Steps() {
			for _, name := range ScenariosFor(st) {
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
	s := Schedule{Version: 1, Name: "x", Steps: []Step{
		{Fault: "lost-reply", Target: TargetHolder, On: "before-acquire", Depth: 2, At: 1},
		{Fault: "clock-jump", Target: TargetHolderNode, On: "in-cs", At: 1, Size: 2},
		{Fault: "node-pause", Target: TargetHolderNode, On: "acquired", At: 1, For: 4},
	}}
	got := scheduleSetup(s, single)
	if !got.Proxies || !got.ClockShim || got.Reentrancy != 2 || got.OpTimeoutTTL < 5 {
		t.Errorf("setup %+v: want proxies, the clock shim, reentrancy 2 and calls that outlast the 4×TTL pause", got)
	}
	sc := ScheduleScenario(s)
	if sc.Name != "schedule:x" || sc.Kind != Mixed || len(sc.Faults) != 3 {
		t.Errorf("scenario %s kind %s with %d faults", sc.Name, sc.Kind, len(sc.Faults))
	}
	if sc := ScheduleScenario(Schedule{Version: 1, Name: "y"}); sc.Kind != None {
		t.Errorf("an empty schedule's kind is %s, want none", sc.Kind)
	}
	etcd := impl.Info{Nodes: 3, Server: impl.ServerEtcd}
	if ok, _ := scheduleApplies(Schedule{Version: 1, Name: "z", Steps: []Step{{Fault: "lost-reply", Target: TargetHolder, On: "before-acquire"}}}, etcd); ok {
		t.Error("lost-reply applies to an etcd lock: its links have no proxy")
	}
	if ok, why := scheduleApplies(Schedule{Version: 1, Name: "z", Steps: []Step{{Fault: "node-pause", Target: TargetNode, Node: 3, On: OnTime, For: 1}}}, etcd); !ok {
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
		st   Step
		want []string
	}{
		{Step{Fault: "slow-cs", On: "in-cs"}, []string{"long-cs"}},
		{Step{Fault: "slow-cs", On: "acquired"}, []string{"long-cs", "gc-pause"}},
		{Step{Fault: "slow-cs", On: "before-write"}, []string{"long-cs", "gc-pause"}},
		{Step{Fault: "lost-reply", On: "before-acquire"}, []string{"lost-reply"}},
		{Step{Fault: "lost-reply", On: "before-acquire", Depth: 2}, []string{"lost-reply-reentrant"}},
		{Step{Fault: "lost-reply", On: "before-release"}, []string{"lost-reply-release"}},
		{Step{Fault: "lost-reply", On: "renew"}, []string{"lost-reply-extend"}},
		{Step{Fault: "key-loss", On: "in-cs"}, []string{"held-key-loss"}},
		{Step{Fault: "slow-reply", On: "before-acquire"}, []string{"slow-node"}},
		{Step{Fault: "slow-reply", On: "renew"}, []string{"slow-node", "lost-reply-extend"}},
		{Step{Fault: "cancel", On: "before-acquire"}, []string{"cancel"}},
		{Step{Fault: "no-such-fault", On: "in-cs"}, nil},
	} {
		if got := ScenariosFor(c.st); !slices.Equal(got, c.want) {
			t.Errorf("%s at %s (depth %d): %v, want %v", c.st.Fault, c.st.On, c.st.Depth, got, c.want)
		}
	}
}
