package verdicts

import (
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/chaos"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/strategies"
	"github.com/lockbench/lockbench/resource"
	"github.com/lockbench/lockbench/workload"
)

// builtinSource is the expectation source of a registered strategy.
func builtinSource(t *testing.T, name string) Source {
	t.Helper()
	st, err := strategies.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return SourceOf(name, st.Info())
}

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
		src := builtinSource(t, tt.strategy)
		got := longCS(src, workload.Config{TTL: ttl, CS: tt.cs, Policy: src.info.Policy}) // a run's policy is resolved
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
		got := oneClient(builtinSource(t, tt.strategy), tt.scenario, workload.Config{Clients: tt.clients})
		if (got != "") != tt.notGated {
			t.Errorf("%s/%s, %d clients: oneClient = %q, want not gated %v", tt.strategy, tt.scenario, tt.clients, got, tt.notGated)
		}
	}
}

// claimsOnly is a lock without verdict rows that declares the claims of a
// built-in strategy (its Info): an exec: adapter in the registry's
// place, judged by its claims (SourceOf).
type claimsOnly struct{ of impl.Strategy }

func (c claimsOnly) Name() string                         { return "exec:claims-of-" + c.of.Name() }
func (c claimsOnly) Info() impl.Info                      { return c.of.Info() }
func (c claimsOnly) New(impl.Config) (impl.Locker, error) { return nil, nil }

// TestNotGatedSameForRowsAndClaims runs every not-gated rule (NotGated:
// policy, fencing, library settings, long critical sections, one client)
// for every built-in strategy under every scenario that applies, and for
// a lock without rows that declares the same claims (judged by them,
// like an exec: adapter): both must get the same gating decision. Where
// a built-in's row differs from its claims (ClaimsExceptions) only the
// rules that do not read that row must agree. The case is among
// them: an adapter whose critical sections reached TTL/2 was not gated
// (exit 0 with 35 exclusion violations a run) where its in-process twin
// was; with token-lua's claims at CS 0.6×TTL both are left ungated (the
// long-cs rule: only a lock expected to hold through long-cs keeps its
// expectations), with watchdog's or redlock's both stay gated.
func TestNotGatedSameForRowsAndClaims(t *testing.T) {
	const ttl = time.Second
	fixed := func(d time.Duration) workload.CSDist { return workload.CSDist{Kind: workload.CSFixed, Min: d} }
	workloads := []struct {
		name string
		w    workload.Config
	}{
		{"defaults", workload.Config{Clients: 16, TTL: ttl, CS: fixed(ttl / 20)}},
		{"CS 0.6×TTL", workload.Config{Clients: 16, TTL: ttl, CS: fixed(6 * ttl / 10)}},
		{"CS 2×TTL tail", workload.Config{Clients: 16, TTL: ttl, CS: workload.CSDist{Kind: workload.CSFixed, Min: ttl / 20, TailShare: 0.1, Tail: 2 * ttl}}},
		{"one client", workload.Config{Clients: 1, TTL: ttl, CS: fixed(ttl / 20)}},
		{"custom policy", workload.Config{Clients: 16, TTL: ttl, CS: fixed(ttl / 20), Policy: impl.Policy{CheckValidity: true, HonourLost: true}}},
		{"fencing all", workload.Config{Clients: 16, TTL: ttl, CS: fixed(ttl / 20), Fencing: resource.FencingAll}},
	}
	for _, st := range strategies.All() {
		twin := claimsOnly{st}
		in := st.Info()
		for _, wl := range workloads {
			w := wl.w
			if w.Policy == (impl.Policy{}) && wl.name != "custom policy" {
				w.Policy = in.Policy
			}
			if w.Fencing == "" {
				w.Fencing = resource.FencingOff
				if in.Claims.Fencing {
					w.Fencing = resource.FencingWrites
				}
			}
			for _, sc := range chaos.All() {
				if ok, _ := sc.AppliesTo(in); !ok {
					continue
				}
				rowsSaid, claimsSaid := NotGated(st, sc.Name, w), NotGated(twin, sc.Name, w)
				_, exception := ClaimsExceptions[[2]string{st.Name(), sc.Name}]
				if exception && wl.name == "one client" {
					continue // the one-client rule reads the row, which differs from the claims here
				}
				if (rowsSaid == "") != (claimsSaid == "") {
					t.Errorf("%s/%s, %s: built-in not gated %q, the same claims without rows not gated %q: want the same decision",
						st.Name(), sc.Name, wl.name, rowsSaid, claimsSaid)
				}
			}
		}
	}
	for _, tt := range []struct {
		strategy string
		gated    bool
	}{{"token-lua", false}, {"set-nx-px", false}, {"watchdog", true}, {"redlock", true}, {"redsync", true}} {
		st, err := strategies.Lookup(tt.strategy)
		if err != nil {
			t.Fatal(err)
		}
		w := workload.Config{Clients: 16, TTL: ttl, CS: fixed(6 * ttl / 10), Policy: st.Info().Policy, Fencing: resource.FencingOff}
		for _, lock := range []impl.Strategy{st, claimsOnly{st}} {
			why := NotGated(lock, "baseline", w)
			if (why == "") != tt.gated {
				t.Errorf("%s at CS 0.6×TTL: not gated %q, want gated %v", lock.Name(), why, tt.gated)
			}
			e := SourceOf(lock.Name(), lock.Info()).For("baseline", why)
			if tt.gated && e.Summary() != "must-hold" || !tt.gated && e.Summary() != "at-risk" {
				t.Errorf("%s at CS 0.6×TTL: expected %s (%s)", lock.Name(), e.Summary(), e.Reason)
			}
			if lock.Name() != st.Name() && !tt.gated && !strings.Contains(why, "the expectations its claims predict assume them far shorter") {
				t.Errorf("%s: %q does not name the claims as the expectations' source", lock.Name(), why)
			}
		}
	}
}

// TestPolicyInFaultFreeCells: a custom usage policy does not take a
// fault-free cell out of the gate (a renewal that lets the lease expire
// under a running holder breaks exclusion whatever the client checks);
// under a fault it still does. Long critical sections are judged with the
// run's policy: watchdog renews whatever the policy; redlock keeps its
// lease through them only while the client checks the validity.
func TestPolicyInFaultFreeCells(t *testing.T) {
	const ttl = 100 * time.Millisecond
	for _, tt := range []struct {
		strategy, scenario string
		cs                 time.Duration
		notGated           bool
	}{
		{"watchdog", "baseline", ttl / 20, false},
		{"watchdog", "baseline", 2 * ttl, false},
		{"watchdog", "gc-pause", ttl / 20, true},
		{"token-lua", "baseline", ttl / 20, false},
		{"redlock", "baseline", ttl / 20, false},
		{"redlock", "baseline", 2 * ttl, true},
	} {
		st, err := strategies.Lookup(tt.strategy)
		if err != nil {
			t.Fatal(err)
		}
		w := workload.Config{TTL: ttl, Clients: 4, CS: workload.CSDist{Kind: workload.CSFixed, Min: tt.cs}, Policy: impl.Policy{}}
		w.Fencing = resource.FencingOff
		got := NotGated(st, tt.scenario, w)
		if (got != "") != tt.notGated {
			t.Errorf("%s/%s --policy none, cs %v: NotGated = %q, want not gated %v", tt.strategy, tt.scenario, tt.cs, got, tt.notGated)
		}
	}
}
