package validate

import (
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/history"
)

// TestToleratesFault: under a fault the lock's claims say it tolerates,
// acquires refused or run to the budget with no grant, or grants that
// take most of the budget, are a violation naming the lock's figures;
// fast grants are not; a window no call saw says nothing.
func TestToleratesFault(t *testing.T) {
	ms := int64(time.Millisecond)
	budget, ttl := 500*time.Millisecond, 500*time.Millisecond
	fault := history.Operation{Client: -1, Stream: -1, Kind: history.Nemesis, Invoke: 1000 * ms, Complete: 2000 * ms, Result: history.OK, Note: "node-pause: n3"}
	acq := func(client int, at, took int64, r history.Result) history.Operation {
		return history.Operation{Client: client, Kind: history.Acquire, Key: "k", Invoke: at * ms, Complete: (at + took) * ms, Result: r}
	}
	quiet := []history.Operation{acq(0, 100, 2, history.OK), acq(1, 200, 3, history.OK), acq(2, 300, 2, history.OK)}
	for _, tt := range []struct {
		name string
		ops  []history.Operation
		want string // a word of the finding; "" none
	}{
		{"fast grants", append([]history.Operation{fault, acq(0, 1100, 3, history.OK), acq(1, 1200, 4, history.OK)}, quiet...), ""},
		{"refused", append([]history.Operation{fault, acq(0, 1100, 300, history.Fail), acq(1, 1200, 300, history.Fail)}, quiet...), "granted nothing"},
		{"waited out the budget", append([]history.Operation{fault, acq(0, 1100, 495, history.Info), acq(1, 1200, 498, history.Info)}, quiet...), "ran to the 500ms call budget"},
		{"granted late", append([]history.Operation{fault, acq(0, 1100, 480, history.OK), acq(1, 1300, 470, history.OK)}, quiet...), "came late"},
		{"no call during the fault", append([]history.Operation{fault}, quiet...), ""},
	} {
		got := toleratesFault(tt.ops, budget, ttl)
		if (got == "") != (tt.want == "") || !strings.Contains(got, tt.want) {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestSpansSeveral: the late-grant rule applies where the lock has other
// nodes to answer from, never to a single node or a primary with replicas.
func TestSpansSeveral(t *testing.T) {
	for _, tt := range []struct {
		topology string
		want     bool
	}{
		{"single", false}, {"replicated:1", false}, {"replicated:1+sentinel", false},
		{"independent:1", false}, {"independent:5", true}, {"etcd:3", true}, {"zookeeper:3", true}, {"", false}, {"independent:x", false},
	} {
		if got := spansSeveral(tt.topology); got != tt.want {
			t.Errorf("spansSeveral(%q) = %v, want %v", tt.topology, got, tt.want)
		}
	}
}
