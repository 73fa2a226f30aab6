package main

import (
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/workload"
)

// TestRunCommandCriticalSection: the reproduce command of a run names a
// fixed critical section only when it is not the default TTL/20 (a
// profile that runs a strategy at a longer TTL keeps its own).
func TestRunCommandCriticalSection(t *testing.T) {
	fixed := func(d time.Duration) workload.CSDist { return workload.CSDist{Kind: workload.CSFixed, Min: d} }
	tests := []struct {
		name string
		w    workload.Config
		want string // "" when --cs-min must be absent
	}{
		{"default", workload.Config{Clients: 16, Keys: 1, TTL: 100 * time.Millisecond, Duration: time.Second}, ""},
		{"TTL/20 given", workload.Config{Clients: 16, Keys: 1, TTL: 100 * time.Millisecond, Duration: time.Second, CS: fixed(5 * time.Millisecond)}, ""},
		{"profile's CS at a longer TTL", workload.Config{Clients: 16, Keys: 1, TTL: 200 * time.Millisecond, Duration: time.Second, CS: fixed(5 * time.Millisecond)}, " --cs-min 5ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := runCommand(bench.Spec{Strategy: "redsync", Scenario: "baseline", Seed: 1, Workload: tt.w})
			if has := strings.Contains(got, "--cs-min"); has != (tt.want != "") || (tt.want != "" && !strings.Contains(got, tt.want)) {
				t.Errorf("runCommand = %q, want --cs-min %q", got, tt.want)
			}
		})
	}
}
