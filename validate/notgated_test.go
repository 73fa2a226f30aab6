package validate

import (
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/workload"
)

// TestLongCSNotGated: a user's critical sections whose largest planned
// wait reaches TTL/2 take the strategies the verdict table does not expect
// to survive long critical sections out of the gate; shorter ones, and
// strategies that renew or check validity, stay gated.
func TestLongCSNotGated(t *testing.T) {
	const ttl = 100 * time.Millisecond
	for _, tt := range []struct {
		name     string
		strategy string
		cs       workload.CSDist
		notGated bool
	}{
		{"default TTL/20", "token-lua", workload.CSDist{Kind: workload.CSFixed, Min: ttl / 20}, false},
		{"fixed just below TTL/2", "token-lua", workload.CSDist{Kind: workload.CSFixed, Min: ttl/2 - time.Millisecond}, false},
		{"fixed TTL/2", "token-lua", workload.CSDist{Kind: workload.CSFixed, Min: ttl / 2}, true},
		{"fixed above the TTL", "naive", workload.CSDist{Kind: workload.CSFixed, Min: 2 * ttl}, true},
		{"uniform up to the TTL", "set-nx-px", workload.CSDist{Kind: workload.CSUniform, Min: time.Millisecond, Max: ttl}, true},
		{"exponential, small mean, no cap", "token-lua", workload.CSDist{Kind: workload.CSExponential, Min: ttl / 20}, true},
		{"exponential, small mean, capped", "token-lua", workload.CSDist{Kind: workload.CSExponential, Min: ttl / 20, Max: ttl / 4}, false},
		{"tail of 2×TTL", "fenced", workload.CSDist{Kind: workload.CSFixed, Min: ttl / 20, TailShare: 0.1, Tail: 2 * ttl}, true},
		{"watchdog renews", "watchdog", workload.CSDist{Kind: workload.CSFixed, Min: 2 * ttl}, false},
		{"redlock checks validity", "redlock", workload.CSDist{Kind: workload.CSFixed, Min: 2 * ttl}, false},
	} {
		got := longCS(tt.strategy, workload.Config{TTL: ttl, CS: tt.cs})
		if (got != "") != tt.notGated {
			t.Errorf("%s: longCS = %q, want not gated %v", tt.name, got, tt.notGated)
		}
		if got != "" && !strings.Contains(got, "far shorter than the TTL") {
			t.Errorf("%s: %q does not say the table's assumption", tt.name, got)
		}
	}
}

// TestOneClientNotGated: with one client a pair the verdict table expects
// to break cannot show it (one client cannot overlap itself), so it is not
// gated; a pair expected to hold, and two or more clients, stay gated.
func TestOneClientNotGated(t *testing.T) {
	for _, tt := range []struct {
		strategy, scenario string
		clients            int
		notGated           bool
	}{
		{"token-lua", "long-cs", 1, true},
		{"set-nx-px", "gc-pause", 1, true},
		{"token-lua", "long-cs", 2, false},
		{"token-lua", "baseline", 1, false},
		{"watchdog", "long-cs", 1, false},
	} {
		got := oneClient(tt.strategy, tt.scenario, workload.Config{Clients: tt.clients})
		if (got != "") != tt.notGated {
			t.Errorf("%s/%s, %d clients: oneClient = %q, want not gated %v", tt.strategy, tt.scenario, tt.clients, got, tt.notGated)
		}
	}
}
