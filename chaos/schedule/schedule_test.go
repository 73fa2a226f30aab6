package schedule

import (
	"bytes"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestScheduleRoundTrip: a schedule written by Encode reads back equal,
// and its one-line form names every step.
func TestScheduleRoundTrip(t *testing.T) {
	s := Schedule{Version: Version, Name: "hunt-7-3", From: "lockbench hunt --seed 7",
		Steps: []Step{
			{Fault: "lost-reply", Target: TargetHolder, On: "before-acquire", Depth: 2, At: 1.5},
			{Fault: "node-pause", Target: TargetHolderNode, On: "acquired", With: 1, Delay: 0.1, For: 2},
			{Fault: "link-latency", Target: TargetNode, Node: 1, On: OnTime, At: 3, For: 1, Size: 0.25},
		}}
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := s.Encode(&b); err != nil {
		t.Fatal(err)
	}
	got, err := Decode(&b)
	if err != nil {
		t.Fatalf("decode %s: %v", b.String(), err)
	}
	if !reflect.DeepEqual(got, s) {
		t.Errorf("read back %+v, want %+v", got, s)
	}
	line := s.String()
	for _, want := range []string{"lost-reply on holder at before-acquire (depth 2) after 1.5×TTL", "at acquired of step 1's hold", "node n1 at 3×TTL"} {
		if !strings.Contains(line, want) {
			t.Errorf("String() = %q, want it to contain %q", line, want)
		}
	}
	if got := s.Faults(); !slices.Equal(got, []string{"lost-reply", "node-pause", "link-latency"}) {
		t.Errorf("Faults() = %v", got)
	}
	if got, want := s.End(), 4.0; got != want {
		t.Errorf("End() = %v, want %v (the latency window at 3 for 1)", got, want)
	}
}

// TestScheduleCheckRefuses: each bad schedule gets an error naming the
// problem.
func TestScheduleCheckRefuses(t *testing.T) {
	ok := Step{Fault: "node-pause", Target: TargetHolderNode, On: "acquired", At: 1, For: 2}
	with := func(f func(*Step)) Schedule {
		s := ok
		f(&s)
		return Schedule{Version: 1, Name: "x", Steps: []Step{ok, s}}
	}
	for _, c := range []struct {
		s    Schedule
		want string
	}{
		{Schedule{Version: 2, Name: "x"}, "reads version 1"},
		{Schedule{Version: 1, Name: "a b"}, `"name"`},
		{with(func(s *Step) { s.Fault = "meteor" }), "unknown fault primitive"},
		{with(func(s *Step) { s.Target = TargetHolderLinks }), "node-pause takes holder-node, node"},
		{with(func(s *Step) { s.On = "teatime" }), `on "teatime"`},
		{with(func(s *Step) { s.For = 0 }), `want "for" > 0`},
		{with(func(s *Step) { s.Fault, s.Target, s.For = "client-crash", TargetHolder, 0; s.Delay = 1 }), `leave "delay" out`},
		{with(func(s *Step) { s.Size = 1 }), `leave "size" out`},
		{with(func(s *Step) { s.With = 2 }), "an earlier step"},
		{with(func(s *Step) { s.At = -1 }), `"at": -1`},
		{with(func(s *Step) { s.Target = TargetNode }), `"node": 1 or more`},
		{with(func(s *Step) { s.On = OnTime }), "takes target \"node\""},
		{with(func(s *Step) { s.Depth = 2 }), "before-acquire and before-release only"},
		{with(func(s *Step) {
			s.Fault, s.Target, s.On, s.For, s.Depth = "lost-reply", TargetHolder, "before-release", 0, 2
		}), "nested acquires only"},
		{with(func(s *Step) {
			s.Fault, s.Target, s.On, s.For, s.Depth = "cancel", TargetHolder, "before-acquire", 0, 2
		}), "outermost acquires only"},
		{with(func(s *Step) { s.Fault, s.Target, s.On, s.For = "cancel", TargetHolder, "before-release", 0 }), `on "before-release"`},
		{with(func(s *Step) { s.Fault, s.Target, s.On, s.For = "slow-reply", TargetHolder, "renew", 0 }), `"size"`},
		{with(func(s *Step) { s.Fault, s.Target, s.On, s.Size = "slow-reply", TargetHolder, "renew", 1 }), `leave "for" out`},
	} {
		err := c.s.Check()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want one containing %q", c.s, err, c.want)
		}
	}
	if _, err := Decode(strings.NewReader(`{"schedule":1,"name":"x","steps":[],"extra":1}`)); err == nil || !strings.Contains(err.Error(), "unknown field") {
		t.Errorf("unknown field: %v", err)
	}
}
